// Package ready reads a pane's screen the way any program's is read: its
// lines without escape sequences, input and shell prompts, menus, a
// context gauge; and waits for a screen to look ready. What one agent CLI
// shows (its banners, dialogs, setup screens) is in its profile
// (internal/agent). It only reads text; callers capture the screen.
package ready

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/prefilter"
	"github.com/swarmtools/swarm/internal/termtext"
)

// promptPrefixes are input prompts at the start of a line. tmux strips
// trailing spaces from captured lines, so a bare prompt ("> ") shows as ">".
var promptPrefixes = []string{">", "❯", "$", ">>>"}

// StuckMenu is the one stuck screen known here: a menu awaiting a choice,
// which an unattended agent cannot get past. It is reported, never
// answered by pressing keys (a menu's default choice may do harm). Each
// agent's own dialogs and setup screens are in its profile
// (internal/agent).
const StuckMenu = "menu awaiting a choice"

// patterns are this package's regular expressions, compiled on first use:
// most swarm commands never read a screen.
type patterns struct {
	// menu: a numbered choice under a selection cursor, or the confirm
	// footer of a menu.
	menu *regexp.Regexp
	// choiceLine: a menu's choice line, skipped when looking for its
	// question.
	choiceLine               *regexp.Regexp
	contextUsed, contextLeft *regexp.Regexp
	filters                  *prefilter.Set
}

var compiled = sync.OnceValue(func() *patterns {
	p := &patterns{
		menu:        regexp.MustCompile(`(?im)^[\s│┃|]*[❯›]\s*\d+\.\s+\S|enter to confirm\s*[·•∙]\s*esc to cancel`),
		choiceLine:  regexp.MustCompile(`^[❯›>]?\s*\d+\.\s`),
		contextUsed: regexp.MustCompile(`(?i)(?:context|ctx)[^\n%]{0,40}?(\d{1,3})\s*%|(\d{1,3})\s*%[^\n]{0,20}?(?:context|ctx)`),
		contextLeft: regexp.MustCompile(`(?i)\b(left|remaining|free)\b`),
	}
	p.filters = prefilter.NewSet(p.menu)
	return p
})

// StripANSI removes escape sequences as a terminal parses them
// (termtext.Strip): a screen or an output that hides a sequence from a
// pattern cannot fool what is matched on it. The usual capture holds
// none and is returned as it is.
func StripANSI(s string) string { return termtext.Strip(s) }

// Lines strips ANSI sequences and splits a capture into lines without the
// trailing blank lines of an unfilled screen.
func Lines(screen string) []string {
	lines := strings.Split(StripANSI(screen), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Stuck returns the kind of stuck screen shown, if any.
func Stuck(screen string) (string, bool) {
	kind, _, ok := StuckLine(screen)
	return kind, ok
}

// StuckLine returns the kind of stuck screen shown and its most telling
// line: for a menu the question above its choices, else the line the
// screen was recognised by.
func StuckLine(screen string) (kind, line string, ok bool) {
	return StuckIn(prefilter.NewText(StripANSI(screen)))
}

// StuckIn is StuckLine on an ANSI-stripped screen already prepared for
// matching (the caller matches its own patterns on it too).
func StuckIn(t *prefilter.Text) (kind, line string, ok bool) {
	p := compiled()
	loc := p.filters.FindIndex(p.menu, t)
	if loc == nil {
		return "", "", false
	}
	return StuckMenu, menuQuestion(t.String(), loc[0]), true
}

// LineAt is the trimmed line of text that holds byte i (framing and a
// selection cursor trimmed).
func LineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text) - i
	}
	return strings.Trim(text[start:i+end], " \t│┃|❯")
}

// menuQuestion is the last non-blank line above a menu's first choice,
// usually its question ("Do you want to proceed?").
func menuQuestion(text string, choice int) string {
	lines := strings.Split(text[:strings.LastIndexByte(text[:choice+1], '\n')+1], "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.Trim(lines[i], " \t│┃|")
		if l != "" && strings.Trim(l, "─━-=╭╮╰╯ ") != "" && !compiled().choiceLine.MatchString(l) {
			return l
		}
	}
	return LineAt(text, choice)
}

// IsReady reports whether the screen shows a program waiting for input:
// a line starting with an input prompt, or a shell prompt on the last
// line. A menu is never ready, even if it also shows a prompt character.
// extra are more ready patterns (--ready-pattern, an agent profile's
// banners), matched per line.
func IsReady(screen string, extra ...*regexp.Regexp) bool {
	if _, stuck := Stuck(screen); stuck {
		return false
	}
	lines := Lines(screen)
	for _, line := range lines {
		if matchAny(line, extra) || promptLine(line) {
			return true
		}
	}
	return len(lines) > 0 && ShellPrompt(lines[len(lines)-1])
}

func matchAny(line string, res []*regexp.Regexp) bool {
	for _, re := range res {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

// promptLine: a line that starts with an input prompt.
func promptLine(line string) bool {
	l := strings.TrimLeft(strings.TrimRight(line, " \t"), " \t│┃|")
	for _, p := range promptPrefixes {
		if l == p || strings.HasPrefix(l, p+" ") {
			return true
		}
	}
	return false
}

// maxPromptLine bounds what counts as a shell prompt: a long line ending
// in '>' or '#' is output, not a prompt.
const maxPromptLine = 120

// ShellPrompt reports whether line (the last line on screen, where the
// cursor waits) is a shell's prompt: "user@host:~/p$ ", "root@host:/# ",
// "host% ", "PS> ". tmux drops the trailing space.
func ShellPrompt(line string) bool {
	l := strings.TrimRight(line, " \t")
	if l == "" || len(l) > maxPromptLine {
		return false
	}
	switch l[len(l)-1] {
	case '$', '#', '%', '>':
	default:
		return false
	}
	// "<div>" or "a -> b" are output: a prompt's last mark follows a
	// word, a path, a bracket or nothing.
	if len(l) > 1 {
		prev := l[len(l)-2]
		return prev != '-' && prev != '=' && !strings.HasPrefix(strings.TrimSpace(l), "<")
	}
	return true
}

// Result of waiting for readiness.
type Result struct {
	Ready bool
	Stuck string // kind of stuck screen last seen, if any
	Dead  bool   // the capture reported the program gone
}

// Screen returns the current screen, and whether the program is gone.
type Screen func() (screen string, gone bool, err error)

// WaitOptions configure Wait.
type WaitOptions struct {
	Interval, Timeout time.Duration
	// OnStuck is called once per stuck kind seen (may be nil).
	OnStuck func(kind string)
	// IsReady judges a screen (default: IsReady). A stuck screen is never
	// ready, whatever it says.
	IsReady func(screen string) bool
	// Stuck finds a dialog or setup screen (default: Stuck, menus only);
	// an agent's profile knows its own dialogs.
	Stuck func(screen string) (kind string, ok bool)
	// Progress, when set, is called once the agent has not looked ready
	// for ProgressFirst, then every ProgressEvery, with the time waited.
	Progress      func(waited time.Duration)
	ProgressFirst time.Duration
	ProgressEvery time.Duration
}

// Wait polls screen every o.Interval until the agent looks ready, the
// program is gone, ctx ends, or o.Timeout passes.
func Wait(ctx context.Context, screen Screen, o WaitOptions) (Result, error) {
	start := time.Now()
	deadline := start.Add(o.Timeout)
	nextProgress := start.Add(o.ProgressFirst)
	isReady, stuck := o.IsReady, o.Stuck
	if isReady == nil {
		isReady = func(s string) bool { return IsReady(s) }
	}
	if stuck == nil {
		stuck = Stuck
	}
	seen := map[string]bool{}
	var res Result
	for {
		s, gone, err := screen()
		if err != nil {
			return res, err
		}
		if gone {
			res.Dead = true
			return res, nil
		}
		if kind, ok := stuck(s); ok {
			res.Stuck = kind
			if !seen[kind] && o.OnStuck != nil {
				o.OnStuck(kind)
			}
			seen[kind] = true
		} else if isReady(s) {
			res.Ready = true
			return res, nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return res, nil
		}
		if o.Progress != nil && o.ProgressEvery > 0 && !now.Before(nextProgress) {
			o.Progress(now.Sub(start))
			nextProgress = now.Add(o.ProgressEvery)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(o.Interval):
		}
	}
}

// ContextPercent reads how full the agent's context window is from the
// last three lines of the screen: "Context: 85%" style lines give usage,
// "Context left until auto-compact: 12%" style lines give what is left
// (converted to usage: 88).
func ContextPercent(screen string) (int, bool) {
	lines := Lines(screen)
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	found, best := false, 0
	p := compiled()
	for _, line := range lines {
		m := p.contextUsed.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := m[1]
		if s == "" {
			s = m[2]
		}
		n, err := strconv.Atoi(s)
		if err != nil || n > 100 {
			continue
		}
		if p.contextLeft.MatchString(line) {
			n = 100 - n
		}
		if !found || n > best {
			best, found = n, true
		}
	}
	return best, found
}
