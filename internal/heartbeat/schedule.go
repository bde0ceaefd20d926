package heartbeat

import (
	"fmt"
	"github.com/swarmtools/swarm/internal/duration"
	"strings"
	"time"
)

// The pure rules of a heartbeat: when to skip, when it expires, when the
// next beat is. No files, no tmux, no clock of their own.

// Pending reports whether the worker has not consumed the previous beat:
// its last non-blank screen line already shows the message (so typing it
// again would stack "continuecontinue" in the agent's input). For a
// multi-line message its last non-blank line is what the input shows last.
func Pending(screen, message string) bool {
	want := strings.TrimSpace(lastNonBlank(message))
	if want == "" {
		return false
	}
	return strings.Contains(lastNonBlank(screen), want)
}

func lastNonBlank(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

// ExpireAt is when a heartbeat created at created with lifetime expire ends
// (zero time for no expiry).
func ExpireAt(created time.Time, expire time.Duration) time.Time {
	if expire <= 0 {
		return time.Time{}
	}
	return created.Add(expire)
}

// Expired reports whether st has reached its expiry at now. A paused
// heartbeat does not expire (paused time does not count), nor does one
// whose expire_at is empty or unreadable.
func Expired(st *State, now time.Time) bool {
	if st.Status != StatusActive {
		return false
	}
	at, ok := st.ExpireAt.Time()
	return ok && !now.Before(at)
}

// Resumed returns the expiry of a heartbeat resumed at now after being
// paused at pausedAt: moved on by the paused time. Missing or unreadable
// values are kept as they are.
func Resumed(expireAt, pausedAt Stamp, now time.Time) Stamp {
	at, ok1 := expireAt.Time()
	paused, ok2 := pausedAt.Time()
	if !ok1 || !ok2 || now.Before(paused) {
		return expireAt
	}
	return StampOf(at.Add(now.Sub(paused)))
}

// firstBeat is when a process taking over st at now beats first: the
// planned next_beat_at when it lies within one interval from now (a
// restarted process keeps the schedule), else one full interval from now.
func firstBeat(st *State, now time.Time) time.Time {
	full := now.Add(st.Interval())
	if next, ok := st.NextBeatAt.Time(); ok && next.After(now) && next.Before(full) {
		return now.Add(next.Sub(now))
	}
	return full
}

// NextBeat is when the next beat is due, for display: nothing for a
// heartbeat that is not active; the planned next_beat_at; else, as swarm.py
// computes it, the last beat (or the creation) plus the interval. ok is
// false when no time can be worked out (swarm.py shows "?").
func NextBeat(st *State) (t time.Time, active, ok bool) {
	if st.Status != StatusActive {
		return time.Time{}, false, false
	}
	if next, ok := st.NextBeatAt.Time(); ok {
		return next, true, true
	}
	base := st.LastBeatAt
	if base == "" {
		base = st.CreatedAt
	}
	b, ok := base.Time()
	if !ok {
		return time.Time{}, true, false
	}
	return b.Add(st.Interval()), true, true
}

// TimeUntil renders how far t is from now as swarm.py does: "now" once
// passed, else "in 42s", "in 5m", "in 3h", "in 2d" (whole units, rounded
// down).
func TimeUntil(t, now time.Time) string {
	if t.Sub(now) < time.Second {
		return "now"
	}
	return "in " + duration.Age(t.Sub(now))
}

// FormatInterval renders an interval as swarm.py's list and status do:
// "30s", "5m 0s", "4h 0m", "24h 0m" (hours are not folded into days).
func FormatInterval(seconds float64) string {
	s := int64(seconds)
	switch {
	case seconds < 60:
		return fmt.Sprintf("%ds", s)
	case seconds < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh %dm", s/3600, (s%3600)/60)
	}
}
