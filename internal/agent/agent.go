// Package agent knows the screens of agent CLIs: for each one a profile
// says, from its screen alone, whether it is working, idle at its input
// box, waiting at a dialog only a human should answer, stopped by a usage
// or rate limit, or ended by an API error. Profiles are data (patterns);
// judging a screen is a pure function, table-tested against screens of
// the real CLIs (testdata).
//
// The loop (internal/ralph) uses the verdicts to end an iteration when the
// agent finished its turn, to count an API error as a failure, to wait out
// a usage limit, and never to type into a dialog.
package agent

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swarmtools/swarm/internal/prefilter"
	"github.com/swarmtools/swarm/internal/ready"
)

// State is what an agent is doing, as its screen shows it.
type State string

const (
	Unknown State = ""        // nothing the profile recognises
	Working State = "working" // busy: thinking, running tools, retrying on its own
	Idle    State = "idle"    // at its input box, not working
	Dialog  State = "dialog"  // a dialog or menu awaiting a human
	Limited State = "limited" // stopped by a usage or rate limit
	Error   State = "error"   // an API error ended its turn
)

// Verdict is one look at an agent's screen.
type Verdict struct {
	State State
	// Kind names the dialog (a Stuck* kind) or the limit.
	Kind string
	// Line is the screen text that decided a dialog, limit or error.
	Line string
	// Hint says how a human gets past a dialog or fatal error.
	Hint string
	// Reset is when a limit resets (zero when the screen does not say).
	Reset time.Time
	// Turns counts the agent's end-of-turn summary lines on screen; a
	// rise after the prompt was delivered means it finished a turn.
	Turns int
}

// Profile is what swarm knows of one agent CLI's screens.
type Profile struct {
	// Name is the --agent name; Commands the command basenames that
	// select it.
	Name     string
	Commands []string
	// Source says where the patterns come from (a captured screen, the
	// CLI's source, its docs).
	Source string
	// Working: a line showing the agent busy (footer, spinner, retry).
	Working []*regexp.Regexp
	// InputBox: a line of its input box; with no Working line the agent
	// is idle. Empty: the profile cannot tell idle (no end-of-turn).
	InputBox []*regexp.Regexp
	// InputLine: the input box's line with what is typed in it (the
	// first capture group), and PastePlaceholder what the box shows
	// instead of a long paste. With them the loop sees a typed prompt
	// arrive before it presses Enter, and sees an Enter the agent
	// dropped (Pending). nil: the loop cannot see typed text.
	InputLine        *regexp.Regexp
	PastePlaceholder *regexp.Regexp
	// TurnDone: a line the agent prints when a turn ends.
	TurnDone []*regexp.Regexp
	// APIError: a line of an error that ended a turn.
	APIError []*regexp.Regexp
	// Limit: a line saying a usage or rate limit stopped the agent.
	Limit []*regexp.Regexp
	// LimitMenu: a menu the agent opens on a limit (not a dialog to stop
	// for: the limit is waited out, and typing the limit message closes
	// it with Escape first).
	LimitMenu []*regexp.Regexp
	// Fatal: start errors after which the agent exits, with their fix.
	Fatal []Fatal
	// ScreenFatal are error messages on its screen that no retry can get
	// past (a prompt it took for a slash command): the loop stops with
	// the hint instead of failing the same way five times.
	ScreenFatal []Fatal
	// InputPrefixes are the first characters of a message that its input
	// box does not send to the model, with what it does instead (Claude
	// Code runs "/fix" as a slash command and "!ls" in its shell).
	InputPrefixes map[string]string
	// ShellPrefix is the one of InputPrefixes whose message the agent
	// runs in its shell (Claude Code's bash mode: "!rm -rf build" is run,
	// not read): a prompt that starts with it is never typed in (see
	// ShellCommand), where "/" is only warned of.
	ShellPrefix string
	// MessageStart: a line that begins a message of the agent or a
	// prompt (default: Claude Code's "● "); an error or limit above the
	// last one is answered past.
	MessageStart []*regexp.Regexp
	// ReadyLines: a line that shows the agent ready for its prompt, for a
	// profile that cannot tell its input box (see Ready).
	ReadyLines []*regexp.Regexp
	// Hints by dialog kind (Stuck*): the config that skips it.
	Hints map[string]string
	// Dialogs: the agent's own dialogs and menus, which the shared ones
	// (setupDialogs, ready's generic menu) do not know (see Stuck).
	Dialogs []DialogPattern

	// Telemetry is what the agent reports of itself besides its screen
	// (telemetry.go), reporter how.
	Telemetry Telemetry
	reporter  reporter

	// filters are the prefilters of the profile's patterns (and of the
	// shared ones it matches), built with the profile: they live as long
	// as it does, and patterns handed in (--limit-pattern,
	// --ready-pattern) run unfiltered, so nothing accumulates.
	filters *prefilter.Set
}

// Fatal is an error an agent prints at start before exiting.
type Fatal struct {
	Re   *regexp.Regexp
	Hint string
}

// registered is every profile's name, commands and accessor. A profile is
// built (its patterns compiled) on first use, not at start-up: about a
// hundred regexps cost every swarm command some 4 ms, and ls, status or
// kill never judge a screen. Names and commands are known without building.
var registered []registration

type registration struct {
	name     string
	commands []string
	get      func() *Profile
}

// built counts profiles built (tests check that they are built lazily).
var built atomic.Int32

// register adds a profile by name and the command basenames that choose it,
// and returns its accessor, which builds it once.
func register(name string, commands []string, build func() *Profile) func() *Profile {
	get := sync.OnceValue(func() *Profile {
		built.Add(1)
		p := build()
		p.Name, p.Commands = name, commands
		p.filters = prefilter.NewSet(p.patterns()...)
		return p
	})
	registered = append(registered, registration{name, commands, get})
	return get
}

// patterns lists every pattern the profile matches screens with.
func (p *Profile) patterns() []*regexp.Regexp {
	var all []*regexp.Regexp
	for _, res := range [][]*regexp.Regexp{p.Working, p.InputBox, p.TurnDone, p.APIError, p.Limit,
		p.LimitMenu, p.MessageStart, p.ReadyLines, defaultMessageStart()} {
		all = append(all, res...)
	}
	for _, f := range append(append([]Fatal{}, p.Fatal...), p.ScreenFatal...) {
		all = append(all, f.Re)
	}
	for _, d := range append(append([]DialogPattern{}, p.Dialogs...), setupDialogs()...) {
		all = append(all, d.Re)
	}
	return all
}

// Names lists the profile names (for --agent).
func Names() []string {
	var out []string
	for _, r := range registered {
		out = append(out, r.name)
	}
	return sortStrings(out)
}

// Lookup returns the profile named name.
func Lookup(name string) (*Profile, bool) {
	for _, r := range registered {
		if r.name == name {
			return r.get(), true
		}
	}
	return nil, false
}

// For returns the profile of a command: chosen from the basename of its
// first word, or the generic one.
func For(command []string) *Profile {
	if len(command) > 0 {
		base := filepath.Base(command[0])
		for _, r := range registered {
			if slices.Contains(r.commands, base) {
				return r.get()
			}
		}
	}
	return Generic()
}

// Judge reads a screen (the agent's own lines: callers drop the echo of
// the prompt first) at now. extraLimits are --limit-pattern patterns.
func (p *Profile) Judge(screen string, now time.Time, extraLimits ...*regexp.Regexp) Verdict {
	lines := prepare(ready.Lines(screen))
	v := Verdict{Turns: p.countMatches(lines, p.TurnDone)}
	limits := append(append([]*regexp.Regexp{}, p.Limit...), extraLimits...)
	if p.anyMatch(lines, p.LimitMenu) {
		if line, ok := p.lastMatching(lines, limits); ok {
			v.State, v.Kind, v.Line = Limited, "limit", line
			v.Reset, _ = ParseReset(joinFrom(lines, line), now)
			return v
		}
	}
	if kind, line, ok := p.Stuck(screen); ok {
		v.State, v.Kind, v.Line, v.Hint = Dialog, kind, line, p.Hints[kind]
		return v
	}
	if p.anyMatch(lines, p.Working) {
		// Busy, whatever older lines say (a limit it has got past, an
		// error it is retrying).
		v.State = Working
		return v
	}
	if line, ok := p.lastMessage(lines, limits); ok {
		v.State, v.Kind, v.Line = Limited, "limit", line
		v.Reset, _ = ParseReset(joinFrom(lines, line), now)
		return v
	}
	for _, f := range p.ScreenFatal {
		// Anywhere on the screen: the agent may add a message after it
		// (Claude: "● Args from unknown skill: ...").
		if line, ok := p.lastMatching(lines, []*regexp.Regexp{f.Re}); ok {
			v.State, v.Line, v.Hint = Error, line, f.Hint
			return v
		}
	}
	if line, ok := p.lastMessage(lines, p.APIError); ok {
		v.State, v.Line = Error, line
		return v
	}
	if len(p.InputBox) > 0 && p.anyMatch(lines, p.InputBox) {
		v.State = Idle
	}
	return v
}

// LimitLines are the screen's lines that say a limit stopped the agent
// (Limit, and extraLimits: --limit-pattern), as a Verdict's Line shows
// them, oldest first.
func (p *Profile) LimitLines(screen string, extraLimits ...*regexp.Regexp) []string {
	limits := append(append([]*regexp.Regexp{}, p.Limit...), extraLimits...)
	var out []string
	for _, l := range prepare(ready.Lines(screen)) {
		if p.matchText(l, limits) {
			out = append(out, shownLine(l.String()))
		}
	}
	return out
}

// Ready reports whether the agent waits at its input box with no dialog:
// the moment to type a prompt. Profiles without an input box pattern use
// their ReadyLines and the generic ready screens (input and shell
// prompts, internal/ready), and extra (--ready-pattern).
func (p *Profile) Ready(screen string, extra ...*regexp.Regexp) bool {
	if _, _, stuck := p.Stuck(screen); stuck {
		return false
	}
	if len(p.InputBox) > 0 && p.Judge(screen, time.Time{}).State == Idle {
		return true
	}
	if p.CanTellIdle() {
		// It shows an input box when ready; the generic patterns (a
		// banner, "bypass permissions") would also match while it works.
		return p.matchAny(screen, extra)
	}
	return p.anyMatch(prepare(ready.Lines(screen)), p.ReadyLines) || ready.IsReady(screen, extra...)
}

// Pending reports whether the agent's input box holds text (its first
// line) typed but not submitted: the start of text, or the placeholder of
// a long paste. ok is false when the profile cannot see typed text.
func (p *Profile) Pending(screen, text string) (pending, ok bool) {
	if p.InputLine == nil {
		return false, false
	}
	lines := ready.Lines(screen)
	for i := len(lines) - 1; i >= 0; i-- {
		m := p.InputLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		typed := strings.TrimSpace(strings.ReplaceAll(m[len(m)-1], "\u00a0", " "))
		if typed == "" {
			return false, true
		}
		if p.PastePlaceholder != nil && p.PastePlaceholder.MatchString(typed) {
			return true, true
		}
		return sameStart(typed, text), true
	}
	return false, true
}

// pendingPrefix is how much of a typed line must match the start of the
// text for the box to hold it (the box wraps long lines).
const pendingPrefix = 12

// sameStart reports whether typed (a line of the input box) begins like
// text's first non-blank line, spaces collapsed: an agent's own
// suggestion in an empty box ("Try ...") does not.
func sameStart(typed, text string) bool {
	first := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			first = l
			break
		}
	}
	a, b := []rune(strings.Join(strings.Fields(typed), " ")), []rune(strings.Join(strings.Fields(first), " "))
	n := min(len(a), len(b), pendingPrefix)
	return n > 0 && string(a[:n]) == string(b[:n])
}

// CanTellIdle reports whether the profile recognises the agent's idle
// input box, so a finished turn can end an iteration early.
func (p *Profile) CanTellIdle() bool { return len(p.InputBox) > 0 && len(p.Working) > 0 }

// CanSeeTyped reports whether the profile can read the agent's input box
// (Pending): whether a paste is seen arriving and an Enter seen taking it.
func (p *Profile) CanSeeTyped() bool { return p.InputLine != nil }

// InputPrefix returns, for a prompt that begins with one of the agent's
// input prefixes (after white space), the prefix and what the agent does
// with such a message.
func (p *Profile) InputPrefix(prompt string) (prefix, does string, ok bool) {
	t := strings.TrimLeft(prompt, " \t\r\n")
	for pre, what := range p.InputPrefixes {
		if strings.HasPrefix(t, pre) {
			return pre, what, true
		}
	}
	return "", "", false
}

// ShellCommand reports whether prompt, typed into the agent's input box,
// would run as a shell command (its first non-blank line starts with the
// profile's ShellPrefix, after white space), and what the agent does with
// it. Such a prompt is refused at spawn and before every iteration: what
// runs is whatever the file says, with the user's rights, and the model
// never sees it.
func (p *Profile) ShellCommand(prompt string) (prefix, does string, ok bool) {
	if p.ShellPrefix == "" {
		return "", "", false
	}
	if !strings.HasPrefix(strings.TrimLeft(prompt, " \t\r\n"), p.ShellPrefix) {
		return "", "", false
	}
	return p.ShellPrefix, p.InputPrefixes[p.ShellPrefix], true
}

// FatalIn returns the first fatal start error in text, with its fix.
func (p *Profile) FatalIn(text string) (line, hint string, ok bool) {
	for _, l := range ready.Lines(text) {
		t := prefilter.NewText(l)
		for _, f := range p.Fatal {
			if p.filters.Match(f.Re, t) {
				return strings.TrimSpace(l), f.Hint, true
			}
		}
	}
	return "", "", false
}

// lastMessage finds a line matching res in the agent's last message: the
// screen is read from the bottom up to the first line that starts another
// message (the profile's MessageStart), so an error or a limit that the
// agent has since answered past does not count.
func (p *Profile) lastMessage(lines []*prefilter.Text, res []*regexp.Regexp) (string, bool) {
	if len(res) == 0 {
		return "", false
	}
	starts := p.MessageStart
	if len(starts) == 0 {
		starts = defaultMessageStart()
	}
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i].String())
		if p.matchAny(l, res) {
			return shownLine(l), true
		}
		if p.matchText(lines[i], p.InputBox) {
			continue // the input box (or a prompt echoed like it) is no message
		}
		if p.matchText(lines[i], starts) {
			return "", false
		}
	}
	return "", false
}

// defaultMessageStart: Claude Code begins each message with "● " ("⏺ "
// in older versions).
var defaultMessageStart = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{regexp.MustCompile(`^\s*[●⏺] `)}
})

// shownLine is a screen line as logs and ralph status quote it: without
// the indent and the "⎿" Claude Code hangs a tool's or a limit's result on.
func shownLine(l string) string {
	return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "⎿"))
}

// prepare readies a screen's lines for matching against many patterns
// (internal/prefilter: each line is case-folded once, and a pattern runs
// only on lines holding its literals).
func prepare(lines []string) []*prefilter.Text {
	out := make([]*prefilter.Text, len(lines))
	for i, l := range lines {
		out[i] = prefilter.NewText(l)
	}
	return out
}

// lastMatching is the last line matching res.
func (p *Profile) lastMatching(lines []*prefilter.Text, res []*regexp.Regexp) (string, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if p.matchText(lines[i], res) {
			return shownLine(lines[i].String()), true
		}
	}
	return "", false
}

func (p *Profile) matchAny(line string, res []*regexp.Regexp) bool {
	return p.matchText(prefilter.NewText(line), res)
}

func (p *Profile) matchText(t *prefilter.Text, res []*regexp.Regexp) bool {
	for _, re := range res {
		if p.filters.Match(re, t) {
			return true
		}
	}
	return false
}

func (p *Profile) anyMatch(lines []*prefilter.Text, res []*regexp.Regexp) bool {
	for _, l := range lines {
		if p.matchText(l, res) {
			return true
		}
	}
	return false
}

func (p *Profile) countMatches(lines []*prefilter.Text, res []*regexp.Regexp) int {
	n := 0
	for _, l := range lines {
		if p.matchText(l, res) {
			n++
		}
	}
	return n
}

// joinFrom joins the screen from the line that starts with line on: a
// limit message wrapped over two lines is parsed whole.
func joinFrom(lines []*prefilter.Text, line string) string {
	for i, l := range lines {
		if shownLine(l.String()) == line {
			end := min(len(lines), i+3)
			var parts []string
			for _, t := range lines[i:end] {
				parts = append(parts, t.String())
			}
			return strings.Join(parts, " ")
		}
	}
	return line
}
