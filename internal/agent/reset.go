package agent

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	// Limit messages name zones (America/New_York): the binary carries
	// the zone database, so machines without one still read them.
	_ "time/tzdata"
)

// resetPatterns read a limit message's reset time; compiled on first use.
type resetPatterns struct {
	// "try again in 2 hours 14 minutes", "retry after 30s", "resets in 5h"
	relative, relativePart *regexp.Regexp
	// "resets 3pm", "reset at 5pm (America/New_York)", "resets 15:30",
	// "resets at 3:30 pm (UTC)"; Claude Code 2.1.332's own continue at
	// the reset: "set to continue automatically at 5:10pm", "Continuing
	// automatically at 5:10pm"
	clock *regexp.Regexp
	// "Try again at Nov 28th, 2026 9:05 AM." (Codex, another day)
	date *regexp.Regexp
	// Older Claude Code: "Claude AI usage limit reached|1700000000"
	epoch *regexp.Regexp
}

var resets = sync.OnceValue(func() *resetPatterns {
	return &resetPatterns{
		relative:     regexp.MustCompile(`(?i)(?:try again|retry|resets?|available(?: again)?)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`),
		relativePart: regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`),
		clock:        regexp.MustCompile(`(?i)(?:resets?|try again|retry|continu(?:e|ing) automatically)(?:\s+at)?\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?`),
		date:         regexp.MustCompile(`(?i)(?:try again|resets?|retry)\s+(?:at|on)\s+([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}),?\s+(\d{1,2}):(\d{2})\s*(am|pm)?`),
		epoch:        regexp.MustCompile(`\|(\d{10})\b`),
	}
})

// ParseReset finds when a limit resets in a limit message: a time of day
// ("resets 3pm", "reset at 5pm (America/New_York)": the next such time,
// in the named zone or now's), a delay ("try again in 2 hours 14
// minutes", "retry after 30s") or a Unix time. ok is false when the
// message gives none.
func ParseReset(msg string, now time.Time) (time.Time, bool) {
	re := resets()
	if m := re.relative.FindStringSubmatch(msg); m != nil {
		var d time.Duration
		for _, p := range re.relativePart.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.ParseFloat(p[1], 64)
			d += time.Duration(n * float64(unit(p[2])))
		}
		if d > 0 {
			return now.Add(d), true
		}
	}
	if m := re.date.FindStringSubmatch(msg); m != nil {
		if t, ok := dateTime(m, now.Location()); ok {
			return t, true
		}
	}
	if m := re.epoch.FindStringSubmatch(msg); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		return time.Unix(sec, 0).In(now.Location()), true
	}
	if m := re.clock.FindStringSubmatch(msg); m != nil {
		return nextClock(m, now)
	}
	return time.Time{}, false
}

// dateTime reads the date pattern's match: a month, day, year and time of day in
// loc (the agent prints its local time).
func dateTime(m []string, loc *time.Location) (time.Time, bool) {
	month, err := time.Parse("Jan", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:]))
	if err != nil {
		return time.Time{}, false
	}
	day, _ := strconv.Atoi(m[2])
	year, _ := strconv.Atoi(m[3])
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	hour = hour24(hour, m[6])
	if day < 1 || day > 31 || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	return time.Date(year, month.Month(), day, hour, minute, 0, 0, loc), true
}

// hour24 is a 12-hour clock's hour on the 24-hour clock ("12am" is 0);
// without am or pm the hour is already 24-hour.
func hour24(hour int, ampm string) int {
	switch strings.ToLower(ampm) {
	case "am":
		if hour == 12 {
			return 0
		}
	case "pm":
		if hour < 12 {
			return hour + 12
		}
	}
	return hour
}

func unit(s string) time.Duration {
	switch strings.ToLower(s)[0] {
	case 'h':
		return time.Hour
	case 'm':
		return time.Minute
	}
	return time.Second
}

// nextClock is the next time (after now) that the clock shows hour:min in
// the message's zone (now's zone when it names none).
func nextClock(m []string, now time.Time) (time.Time, bool) {
	hour, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	hour = hour24(hour, m[3])
	if hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	loc := now.Location()
	if m[4] != "" {
		l, err := time.LoadLocation(m[4])
		if err != nil {
			return time.Time{}, false
		}
		loc = l
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
	switch {
	case t.After(now):
	case now.Sub(t) <= staleReset:
		// The time has just passed: the message is older than the look
		// at it, and the limit has reset already.
		t = now
	default:
		// Earlier today by more than that: the message means tomorrow
		// ("resets 1am" read at 11pm).
		t = t.AddDate(0, 0, 1)
	}
	return t, true
}

// staleReset: a reset time of day at most this far in the past has just
// happened; further back it is tomorrow's. Limits reset within hours, so a
// message cannot mean a time more than a few hours old.
const staleReset = 2 * time.Hour
