package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude-code-2.1.197", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var now = time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)

func TestClaudeScreens(t *testing.T) {
	cases := []struct {
		file  string
		state State
		kind  string
		line  string // prefix of Verdict.Line
		turns int
		ready bool
	}{
		{"idle-input-box.txt", Idle, "", "", 0, true},
		{"idle-after-answer.txt", Idle, "", "", 1, true},
		{"idle-focus-events-notice.txt", Error, "", "● API Error: Request rejected (429)", 1, false},
		{"working-retrying-429.txt", Working, "", "", 0, false},
		{"working-retrying-529.txt", Working, "", "", 0, false},
		{"error-429-final.txt", Error, "", "● API Error: Request rejected (429)", 1, false},
		{"error-529-final.txt", Error, "", "● API Error: 529 Overloaded.", 1, false},
		{"dialog-trust-folder.txt", Dialog, StuckTrust, "Quick safety check: Is this a project you created or one you trust?", 0, false},
		{"dialog-api-key.txt", Dialog, StuckAPIKey, "Detected a custom API key in your environment", 0, false},
		{"dialog-bypass-warning.txt", Dialog, StuckBypass, "WARNING: Claude Code running in Bypass Permissions mode", 0, false},
		{"dialog-theme-first-run.txt", Dialog, StuckTheme, "", 0, false},
		{"not-logged-in.txt", Dialog, StuckNotLoggedIn, "", 0, false},
	}
	for _, c := range cases {
		screen := fixture(t, c.file)
		v := Claude().Judge(screen, now)
		if v.State != c.state || v.Kind != c.kind || !strings.HasPrefix(v.Line, c.line) || v.Turns != c.turns {
			t.Errorf("%s: got %+v; want state %q kind %q line %q turns %d", c.file, v, c.state, c.kind, c.line, c.turns)
		}
		if v.State == Dialog && v.Hint == "" {
			t.Errorf("%s: a dialog without a hint", c.file)
		}
		// An error screen is idle at its box, but ready for a prompt only
		// where the profile says so: a dialog never is.
		if got := Claude().Ready(screen); got != c.ready && c.state != Error {
			t.Errorf("%s: Ready = %v, want %v", c.file, got, c.ready)
		}
	}
}

// TestClaudeSequences judges every screen of the captured 429 and 529
// sequences: working while it retries, then an error, never idle before
// the error shows.
func TestClaudeSequences(t *testing.T) {
	for _, file := range []string{"sequence-429-retry-then-error.txt", "sequence-529-retry-then-error.txt"} {
		var states []State
		for _, screen := range strings.Split(fixture(t, file), "=== t=")[1:] {
			_, body, _ := strings.Cut(screen, "\n")
			v := Claude().Judge(body, now)
			if len(states) == 0 || states[len(states)-1] != v.State {
				states = append(states, v.State)
			}
		}
		got := make([]string, len(states))
		for i, s := range states {
			got[i] = string(s)
		}
		if want := "idle working error"; strings.Join(got, " ") != want {
			t.Errorf("%s: states %v, want %s", file, got, want)
		}
	}
}

func TestClaudeLimitsAndFatal(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		screen string
		reset  time.Time
	}{
		{"● 5-hour limit reached ∙ resets 3pm\n  /upgrade to increase your usage limit.\n❯ \n  ? for shortcuts", time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)},
		{"● Claude usage limit reached. Your limit will reset at 5pm (America/New_York).\n❯ ", time.Date(2026, 11, 26, 17, 0, 0, 0, ny)},
		{"Claude AI usage limit reached|1795000000\n❯ ", time.Unix(1795000000, 0)},
	}
	for _, c := range cases {
		v := Claude().Judge(c.screen, now)
		if v.State != Limited || !v.Reset.Equal(c.reset) {
			t.Errorf("%q: %+v, want limited until %s", c.screen, v, c.reset)
		}
	}
	line, hint, ok := Claude().FatalIn("Error: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n")
	if !ok || !strings.Contains(line, "root/sudo") || !strings.Contains(hint, "IS_SANDBOX=1") {
		t.Errorf("fatal: %q %q %v", line, hint, ok)
	}
}

func TestProfileSelection(t *testing.T) {
	cases := map[string]string{
		"claude": "claude", "/usr/local/bin/claude": "claude", "./sandbox.sh": "generic", "bash": "generic", "": "generic",
	}
	for cmd, want := range cases {
		var argv []string
		if cmd != "" {
			argv = []string{cmd, "--x"}
		}
		if got := For(argv).Name; got != want {
			t.Errorf("For(%q) = %s, want %s", cmd, got, want)
		}
	}
	if _, ok := Lookup("claude"); !ok {
		t.Error("Lookup claude")
	}
	if Generic().CanTellIdle() || !Claude().CanTellIdle() {
		t.Error("CanTellIdle")
	}
}

func TestParseReset(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	at := func(loc *time.Location, d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, loc) }
	nowNY := at(ny, 26, 13, 0) // 1pm in New York
	cases := []struct {
		msg  string
		now  time.Time
		want time.Time
		ok   bool
	}{
		{"5-hour limit reached ∙ resets 3pm", nowNY, at(ny, 26, 15, 0), true},
		{"resets 3:30 pm", nowNY, at(ny, 26, 15, 30), true},
		{"resets 15:45", nowNY, at(ny, 26, 15, 45), true},
		{"Your limit will reset at 5pm (America/New_York).", at(tokyo, 27, 4, 0), at(ny, 26, 17, 0), true},
		{"Your limit will reset at 9am (Asia/Tokyo)", nowNY, at(tokyo, 27, 9, 0), true},
		{"resets 12am", nowNY, at(ny, 27, 0, 0), true},
		{"resets 12pm (UTC)", at(time.UTC, 26, 11, 0), at(time.UTC, 26, 12, 0), true},
		// Already past by a little: the limit has reset.
		{"resets 12pm", nowNY, nowNY, true},
		// After midnight: "resets 1am" read at 11pm is tomorrow.
		{"limit reached ∙ resets 1am", at(ny, 26, 23, 0), at(ny, 27, 1, 0), true},
		{"try again in 2 hours 14 minutes", nowNY, nowNY.Add(2*time.Hour + 14*time.Minute), true},
		{"Please retry after 30s", nowNY, nowNY.Add(30 * time.Second), true},
		{"try again in 1h 5m, or upgrade", nowNY, nowNY.Add(65 * time.Minute), true},
		{"usage limit reached|1795000000", nowNY, time.Unix(1795000000, 0), true},
		{"try again later", nowNY, time.Time{}, false},
		{"resets 25pm", nowNY, time.Time{}, false},
		{"reset at 5pm (Mars/Olympus)", nowNY, time.Time{}, false},
	}
	for _, c := range cases {
		got, ok := ParseReset(c.msg, c.now)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("ParseReset(%q) = %s %v, want %s %v", c.msg, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseReset(f *testing.F) {
	for _, s := range []string{"resets 3pm", "reset at 5pm (America/New_York)", "try again in 2 hours 14 minutes", "retry after 30s", "x|1795000000", "resets 99:99", "resets at (", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got, ok := ParseReset(msg, now)
		if ok && got.Before(now.Add(-time.Second)) && !resets().epoch.MatchString(msg) {
			t.Fatalf("reset %s before now for %q", got, msg)
		}
	})
}

// An error or a limit the agent has since moved past does not count; a
// working agent is working whatever older lines say.
func TestClaudeOnlyTheLastMessageCounts(t *testing.T) {
	cases := map[string]State{
		"● API Error: 529 Overloaded.\n✻ Worked for 1s\n❯ continue\n● Done, all good.\n✻ Worked for 3s\n❯ \n  ? for shortcuts":           Idle,
		"● Claude usage limit reached. Your limit will reset at 5pm.\n❯ continue\n✻ Thinking… (esc to interrupt)\n❯ \n":                  Working,
		"● Claude usage limit reached. Your limit will reset at 5pm.\n❯ continue\n● Picking up where I left off.\n❯ \n  ? for shortcuts": Idle,
		"● API Error: Request rejected (429)\n✻ 429 rate limit · Retrying in 3s · attempt 1/10\n❯ ":                                      Working,
	}
	for screen, want := range cases {
		if got := Claude().Judge(screen, now).State; got != want {
			t.Errorf("%q: %s, want %s", screen, got, want)
		}
	}
}

// The screens the real-agent harness captured (internal/agenttest): the
// subscription's usage limits, its limit menu, a subscriber's 429, a tool
// call's turn, the spinner while it waits for the model.
func TestClaudeHarnessScreens(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 27, h, 0, 0, 0, time.UTC) }
	cases := []struct {
		file  string
		state State
		line  string
		reset time.Time
	}{
		{"limit-session.txt", Limited, "You've hit your session limit · resets 9am (UTC)", at(9)},
		{"limit-weekly-max-menu.txt", Limited, "You've hit your weekly limit · resets 9am (UTC)", at(9)},
		{"limit-no-claim.txt", Limited, "You've hit your limit · resets 9am (UTC)", at(9)},
		{"error-429-final-subscriber.txt", Error, "● API Error: Server is temporarily limiting requests", time.Time{}},
		{"idle-after-tool-use.txt", Idle, "", time.Time{}},
		{"working-waiting.txt", Working, "", time.Time{}},
		// At 80 columns (a loop's window) the footer's "● high · /effort"
		// sits on a line of its own below the input box: it must not
		// hide the error or limit above it as if it began a message.
		{"error-429-final-80x24.txt", Error, "● API Error: Request rejected (429)", time.Time{}},
		{"error-529-final-80x24.txt", Error, "● API Error: 529 Overloaded.", time.Time{}},
		{"limit-session-80x24.txt", Limited, "You've hit your session limit · resets 7:24am (UTC)", time.Date(2026, 11, 27, 7, 24, 0, 0, time.UTC)},
		{"limit-session-menu-80x24.txt", Limited, "You've hit your session limit · resets 7:24am (UTC)", time.Date(2026, 11, 27, 7, 24, 0, 0, time.UTC)},
		// "continue" typed after the limit and answered: the limit line
		// above is answered past.
		{"idle-after-limit-continue.txt", Idle, "", time.Time{}},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join("..", "agenttest", "testdata", "claude-code-2.1.197", c.file))
		if err != nil {
			t.Fatal(err)
		}
		v := Claude().Judge(string(data), now)
		if v.State != c.state || !strings.Contains(v.Line, c.line) || !v.Reset.Equal(c.reset) {
			t.Errorf("%s: %+v; want %s %q reset %s", c.file, v, c.state, c.line, c.reset)
		}
	}
}

// The prompt left in Claude Code's input box after a lost Enter is seen
// as pending; an empty box, a working agent's box and a box showing
// something else are not.
func TestClaudePending(t *testing.T) {
	prompt := "Do the next step of the task in this folder.\nWhen the whole task is done, print <promise>COMPLETE</promise>."
	notSubmitted, err := os.ReadFile("../agenttest/testdata/claude-code-2.1.197/prompt-not-submitted.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		screen string
		want   bool
	}{
		{string(notSubmitted), true},
		{"──────\n❯ [Pasted text #1 +12 lines]\n──────\n  ? for shortcuts", true},
		{"──────\n❯\u00a0\n──────\n  ? for shortcuts", false},
		{"──────\n❯ Try \"refactor the parser\"\n──────\n  ? for shortcuts", false},
		{"● Done.\n──────\n❯ \n──────", false},
	}
	for _, c := range cases {
		got, ok := Claude().Pending(c.screen, prompt)
		if !ok || got != c.want {
			t.Errorf("Pending = %v %v, want %v for:\n%s", got, ok, c.want, c.screen)
		}
	}
	if Generic().CanSeeTyped() || !Claude().CanSeeTyped() {
		t.Error("only profiles with an input-line pattern can see typed text")
	}
	if _, ok := Generic().Pending("> hi", "hi"); ok {
		t.Error("the generic profile claims to see typed text")
	}
}

func TestWithArticle(t *testing.T) {
	for kind, want := range map[string]string{
		"API key dialog": "an API key dialog", "update prompt": "an update prompt", "usage limit menu": "a usage limit menu",
		"approval prompt": "an approval prompt", "login method picker": "a login method picker", "menu awaiting a choice": "a menu awaiting a choice",
		"OAuth code prompt": "an OAuth code prompt", "bypass permissions warning": "a bypass permissions warning",
		"not logged in": `a "not logged in" screen`, "folder trust dialog": "a folder trust dialog", "theme picker": "a theme picker",
	} {
		if got := WithArticle(kind); got != want {
			t.Errorf("WithArticle(%q) = %q, want %q", kind, got, want)
		}
	}
}

// A limit is quoted without the "⎿" Claude hangs it on, and its reset
// time is still read from the whole (wrapped) message.
func TestClaudeLimitLineIsQuotedClean(t *testing.T) {
	screen := "❯ do it\n  ⎿  You've hit your session limit · resets 9am\n     (UTC)\n\n────\n❯ \n────\n  ? for shortcuts\n"
	v := Claude().Judge(screen, time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC))
	if v.State != Limited || v.Line != "You've hit your session limit · resets 9am" {
		t.Fatalf("verdict %+v", v)
	}
	if want := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC); !v.Reset.Equal(want) {
		t.Fatalf("reset %s, want %s", v.Reset, want)
	}
}

// Naming the profiles (--agent's help on every command) and choosing one
// for a command build that one profile only; no profile is built before.
// Run in a fresh process: other tests build every profile.
func TestProfilesAreBuiltOnFirstUse(t *testing.T) {
	if os.Getenv("SWARM_AGENT_LAZY_CHILD") == "1" {
		if n := built.Load(); n != 0 {
			t.Fatalf("%d profiles built at start-up", n)
		}
		Names()
		if _, ok := Lookup("no-such-agent"); ok {
			t.Fatal("unknown profile found")
		}
		if p := For([]string{"/usr/local/bin/claude", "-p"}); p.Name != "claude" || len(p.Commands) == 0 {
			t.Fatalf("For(claude) = %q %v", p.Name, p.Commands)
		}
		if n := built.Load(); n != 1 {
			t.Fatalf("%d profiles built for one lookup, want 1", n)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProfilesAreBuiltOnFirstUse$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SWARM_AGENT_LAZY_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestInputPrefixes(t *testing.T) {
	for _, c := range []struct {
		agent, prompt, prefix string
	}{
		{"claude", "/fix the tests", "/"},
		{"claude", "\n\t !npm test", "!"},
		{"claude", "fix /tmp/x", ""},
		{"codex", "/review", "/"},
		{"codex", "!ls", ""},
		{"generic", "/fix", ""},
	} {
		p, _ := Lookup(c.agent)
		prefix, does, ok := p.InputPrefix(c.prompt)
		if prefix != c.prefix || ok != (c.prefix != "") || ok && does == "" {
			t.Errorf("%s %q: prefix %q %v %q", c.agent, c.prompt, prefix, ok, does)
		}
	}
}

// A message Claude Code, Gemini CLI or aider would run in its shell: its
// first non-blank line starts with '!' (issue 27, item 15). '/' is only
// an input prefix, and the other agents run no '!' message, but for the
// generic profile's: it is Claude Code's when Claude Code runs through
// npx or a script.
func TestShellCommand(t *testing.T) {
	for _, c := range []struct {
		agent, prompt string
		shell         bool
	}{
		{"claude", "!make deploy", true},
		{"claude", "\n\t  !rm -rf build\nthen fix", true},
		{"claude", "fix the tests\n!make is fine here", false},
		{"claude", "/fix the tests", false},
		{"gemini", "!ls", true},
		{"aider", " !ls", true},
		{"codex", "!ls", false},
		{"opencode", "!ls", false},
		{"generic", "!ls", true},
	} {
		p, _ := Lookup(c.agent)
		prefix, does, ok := p.ShellCommand(c.prompt)
		if ok != c.shell || ok && (prefix != "!" || !strings.Contains(does, "shell")) {
			t.Errorf("%s %q: %q %q %v, want shell %v", c.agent, c.prompt, prefix, does, ok, c.shell)
		}
	}
}

// A prompt Claude Code took for a slash command: an error with the fix,
// which no retry gets past.
func TestClaudeUnknownCommandIsAnErrorWithItsFix(t *testing.T) {
	// As 2.1.197 shows it (captured by TestLoopSlashPromptStopsWithTheCause).
	screen := " ▐▛███▜▌   Claude Code v2.1.197\n\n● Unknown command: /fix\n\n● Args from unknown skill: the tests\n\n────────\n❯\u00a0\n────────\n  ? for shortcuts\n"
	v := Claude().Judge(screen, time.Now())
	if v.State != Error || !strings.Contains(v.Line, "Unknown command: /fix") || !strings.Contains(v.Hint, "starts with '/'") {
		t.Fatalf("%+v", v)
	}
	plain := " ▐▛███▜▌   Claude Code v2.1.197\n\n❯ fix the tests\n● Done. The unknown command: handling is fixed.\n✻ Worked for 2s\n\n────────\n❯\u00a0\n────────\n  ? for shortcuts\n"
	if v := Claude().Judge(plain, time.Now()); v.State != Idle {
		t.Fatalf("an answer that mentions it: %+v", v)
	}
}

// The screens of each permission mode, captured from the pinned Claude
// Code and from 2.1.332 (TestClaudePermissionModeScreens in
// internal/agenttest): 2.1.332 starts in auto mode ("⏵⏵ auto mode on",
// under a notice about it), runs bypassPermissions as "⏵⏵ bypass
// permissions on", and in manual mode asks "Do you want to proceed?"
// before a command, as 2.1.197 does in its default mode. Each is judged
// as the loop needs: an idle box ready for the prompt, a long paste
// waiting in the box, a finished turn, a permission prompt (not a
// generic menu: its hint says how to answer it and how to run without).
func TestClaudeScreensOfEachPermissionMode(t *testing.T) {
	// The head of the 63-line prompt the captures pasted (agenttest's
	// longPrompt): collapsed, only the placeholder shows.
	prompt := "You are working through the checklist below, one item per iteration.\n- [ ] item 1: make the 1-th function of the module handle empty input and add a test for it\n"
	cases := []struct {
		release, file string
		state         State
		kind          string
		turns         int
		ready         bool
	}{
		{"2.1.332", "idle-start-mode.txt", Idle, "", 0, true},
		{"2.1.332", "idle-bypass-mode.txt", Idle, "", 0, true},
		{"2.1.332", "idle-after-answer-long-prompt.txt", Idle, "", 1, true},
		{"2.1.332", "dialog-permission-bash.txt", Dialog, StuckPermission, 0, false},
		{"2.1.197", "idle-start-mode.txt", Idle, "", 0, true},
		{"2.1.197", "idle-after-answer-long-prompt.txt", Idle, "", 1, true},
		{"2.1.197", "dialog-permission-bash.txt", Dialog, StuckPermission, 0, false},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join("testdata", "claude-code-"+c.release, c.file))
		if err != nil {
			t.Fatal(err)
		}
		screen := string(data)
		v := Claude().Judge(screen, now)
		if v.State != c.state || v.Kind != c.kind || v.Turns != c.turns || Claude().Ready(screen) != c.ready {
			t.Errorf("%s %s: %+v, ready %v; want %s %q turns %d ready %v", c.release, c.file, v, Claude().Ready(screen), c.state, c.kind, c.turns, c.ready)
		}
		if v.State == Dialog && (v.Line != "Do you want to proceed?" || !strings.Contains(v.Hint, "swarm send NAME 1")) {
			t.Errorf("%s %s: line %q, hint %q", c.release, c.file, v.Line, v.Hint)
		}
	}
	for _, release := range []string{"2.1.332", "2.1.197"} {
		data, err := os.ReadFile(filepath.Join("testdata", "claude-code-"+release, "prompt-pasted-collapsed.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if pending, ok := Claude().Pending(string(data), prompt); !ok || !pending {
			t.Errorf("%s: the collapsed paste is not seen waiting in the box", release)
		}
	}
}

// Claude Code 2.1.332 names the five-hour window in its usage limit
// ("You've hit your 5-hour limit · resets 5pm (UTC)", as its StopFailure
// hook's message and on its screen): a limit to wait out, not an error.
func TestClaudeFiveHourLimitIsALimit(t *testing.T) {
	now := time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC)
	for _, text := range []string{
		"You've hit your 5-hour limit · resets 5pm (UTC)",
		"❯ do it\n  ⎿  You've hit your 5-hour limit · resets 5pm (UTC)\n\n────\n❯ \n────\n  ? for shortcuts\n",
	} {
		v := Claude().Judge(text, now)
		if v.State != Limited || !v.Reset.Equal(time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)) {
			t.Errorf("%q: verdict %+v; want a limit that resets at 5pm", text, v)
		}
	}
}

// Claude Code 2.1.332 at a usage limit announces its own continue at the
// reset ("● Usage limit reached · set to continue automatically at
// 6:08pm"), and a message typed then cancels it ("● Automatic continue
// cancelled · /rate-limit-options to wait again"). That line names the
// limit menu's command but is no menu: the answer below it is the last
// message, and the screen is idle, not limited. Before the answer the
// announcement is the last limit, and its reset (the time it continues
// at) is read: just past, it has reset.
func TestClaudeAutoContinueAtALimit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "claude-code-2.1.332", "idle-after-limit-continue-cancelled-auto.txt"))
	if err != nil {
		t.Fatal(err)
	}
	screen := string(data)
	at := time.Date(2026, 11, 28, 18, 9, 0, 0, time.UTC)
	if v := Claude().Judge(screen, at); v.State != Idle || v.Turns != 1 {
		t.Errorf("answered after the cancelled auto-continue: %+v, want idle after 1 turn", v)
	}
	head, _, ok := strings.Cut(screen, "● Automatic continue cancelled")
	_, box, _ := strings.Cut(screen, "✻ Worked for 0s · done 6:09 PM\n")
	if !ok || box == "" {
		t.Fatal("fixture changed")
	}
	before := head + box
	v := Claude().Judge(before, at)
	if v.State != Limited || v.Line != "● Usage limit reached · set to continue automatically at 6:08pm" || !v.Reset.Equal(at) {
		t.Errorf("the auto-continue announced: %+v, want limited, reset %s (just past)", v, at)
	}
	for msg, want := range map[string]time.Time{
		"● Usage limit reached · set to continue automatically at 6:30pm": time.Date(2026, 11, 28, 18, 30, 0, 0, time.UTC),
		"Continuing automatically at 8pm · Esc to cancel":                 time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC),
	} {
		if got, ok := ParseReset(msg, at); !ok || !got.Equal(want) {
			t.Errorf("ParseReset(%q) = %s %v, want %s", msg, got, ok, want)
		}
	}
}
