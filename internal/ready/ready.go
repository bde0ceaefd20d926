// Package ready decides from a pane's screen whether an agent CLI is ready
// for input, stuck on a screen it cannot pass alone, or reporting something
// the loop must react to. It only reads text; callers capture the screen.
package ready

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acarl005/stripansi"
)

// readyPatterns match a line of a ready agent (ANSI stripped).
var readyPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)bypass\s+permissions`),
	regexp.MustCompile(`(?i)permissions?\s+mode`),
	regexp.MustCompile(`(?i)shift\+tab\s+to\s+cycle`),
	regexp.MustCompile(`Claude\s+Code\s+v\d+`),
	regexp.MustCompile(`(?i)opencode\s+v\d+`),
	regexp.MustCompile(`(?i)tab\s+switch\s+agent`),
	regexp.MustCompile(`(?i)ctrl\+p\s+commands`),
}

// promptPrefixes are input prompts at the start of a line. tmux strips
// trailing spaces from captured lines, so a bare prompt ("> ") shows as ">".
var promptPrefixes = []string{">", "❯", "$", ">>>"}

// Stuck screens that an unattended agent cannot get past. They are reported,
// never answered by pressing keys blindly.
const (
	StuckTheme = "theme picker"
	StuckLogin = "login method picker"
	StuckOAuth = "OAuth code prompt"
)

// The patterns are the setup screens' own wording, kept narrow so that an
// agent talking about themes or logins does not look stuck.
var stuckPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{StuckTheme, regexp.MustCompile(`(?i)choose the text style that looks best`)},
	{StuckLogin, regexp.MustCompile(`(?i)select login method:`)},
	{StuckOAuth, regexp.MustCompile(`(?i)paste code here if prompted`)},
}

// Lines strips ANSI sequences and splits a capture into lines without the
// trailing blank lines of an unfilled screen.
func Lines(screen string) []string {
	lines := strings.Split(stripansi.Strip(screen), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Stuck returns the kind of stuck screen shown, if any.
func Stuck(screen string) (string, bool) {
	text := stripansi.Strip(screen)
	for _, p := range stuckPatterns {
		if p.re.MatchString(text) {
			return p.kind, true
		}
	}
	return "", false
}

// IsReady reports whether the screen shows an agent waiting for input.
// A stuck screen is never ready, even if it also shows a prompt character.
func IsReady(screen string) bool {
	if _, stuck := Stuck(screen); stuck {
		return false
	}
	for _, line := range Lines(screen) {
		for _, re := range readyPatterns {
			if re.MatchString(line) {
				return true
			}
		}
		l := strings.TrimLeft(strings.TrimRight(line, " \t"), " \t│┃|")
		for _, p := range promptPrefixes {
			if l == p || strings.HasPrefix(l, p+" ") {
				return true
			}
		}
	}
	return false
}

// Result of waiting for readiness.
type Result struct {
	Ready bool
	Stuck string // kind of stuck screen last seen, if any
	Dead  bool   // the capture reported the program gone
}

// Screen returns the current screen, and whether the program is gone.
type Screen func() (screen string, gone bool, err error)

// Wait polls screen every interval until the agent looks ready, the program
// is gone, ctx ends, or timeout passes. onStuck is called once per stuck
// kind seen (may be nil).
func Wait(ctx context.Context, screen Screen, interval, timeout time.Duration, onStuck func(kind string)) (Result, error) {
	deadline := time.Now().Add(timeout)
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
		if kind, ok := Stuck(s); ok {
			res.Stuck = kind
			if !seen[kind] {
				seen[kind] = true
				if onStuck != nil {
					onStuck(kind)
				}
			}
		} else if IsReady(s) {
			res.Ready = true
			return res, nil
		}
		if !time.Now().Before(deadline) {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// FatalPattern is output after which an agent's context is gone and it
// should be restarted fresh rather than left to continue.
var FatalPattern = regexp.MustCompile(`Compacting conversation`)

var (
	contextUsed = regexp.MustCompile(`(?i)(?:context|ctx)[^\n%]{0,40}?(\d{1,3})\s*%|(\d{1,3})\s*%[^\n]{0,20}?(?:context|ctx)`)
	contextLeft = regexp.MustCompile(`(?i)\b(left|remaining|free)\b`)
)

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
	for _, line := range lines {
		m := contextUsed.FindStringSubmatch(line)
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
		if contextLeft.MatchString(line) {
			n = 100 - n
		}
		if !found || n > best {
			best, found = n, true
		}
	}
	return best, found
}
