package ralph_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

func TestPreflightStuckScreenFailsFast(t *testing.T) {
	l := newLoop(t, "login")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	r := l.Run("ralph", "spawn", "--name", "login", "--prompt-file", "PROMPT.md", "--no-worktree", "--foreground", "--",
		l.Agent, "--banner", "Select login method:\n  1. Claude account with subscription\n  2. Anthropic Console account", "--input", "none", "--script", "quiet")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: the agent is waiting at a login method picker (\"Select login method:\"); swarm never answers it\n") ||
		!strings.Contains(r.Stderr, "\nhint: answer it once by hand: swarm attach login; then: swarm ralph resume login\n") {
		t.Fatalf("%s", r)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %v, want well under the 120 s ready timeout", time.Since(start))
	}
	if l.str("exit_reason") != "preflight_failed" || l.str("status") != "failed" {
		t.Errorf("state %v", l.state())
	}
	if !strings.Contains(l.RalphLog("login"), "[WARN] iteration 1: agent shows a login method picker") {
		t.Errorf("log:\n%s", l.RalphLog("login"))
	}
}

// The fix a pre-flight failure prints works as printed: the agent is left
// at its dialog in its window (ralph wait prints the hint), the user
// answers it there, and ralph resume runs the loop on: the dialog, once
// answered, does not come back. The iteration the dialog held never got
// its prompt and does not count.
func TestPreflightFixWorksAsPrinted(t *testing.T) {
	l := newLoop(t, "setup")
	l.WriteFile("PROMPT.md", "work")
	answered := filepath.Join(l.Dir, "answered")
	// The agent: a first-run menu until it has been answered once, then
	// the fake agent, which finishes the task.
	agentCmd := `if [ ! -e "$0" ]; then printf 'Select login method:\n \342\235\257 1. Claude account\n   2. Console account\n'; read choice; echo "$choice" > "$0"; sleep 600; fi; exec "$@"`
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1"},
		append([]string{"sh", "-c", agentCmd, answered}, l.agent("--script", "print <promise>COMPLETE</promise>;quiet")...)...)
	r := l.Run("ralph", "wait", "setup", "--timeout", "30")
	if r.Code != 1 || !strings.Contains(r.Stdout, "setup: preflight_failed after 0 iterations: the agent is waiting at a login method picker") ||
		r.Stderr != "hint: answer it once by hand: swarm attach setup; then: swarm ralph resume setup\n" {
		t.Fatalf("ralph wait: %s", r)
	}
	if peek := l.Run("peek", "setup"); peek.Code != 0 || !strings.Contains(peek.Stdout, "Select login method") {
		t.Fatalf("the agent was not left at its dialog: %s", peek)
	}
	// What swarm attach lets a human do: answer the menu.
	if r := l.Run("send", "setup", "1"); r.Code != 0 {
		t.Fatalf("send: %s", r)
	}
	l.Eventually("the answer", 10*time.Second, func() bool { _, err := os.Stat(answered); return err == nil })
	if r := l.Run("ralph", "resume", "setup"); r.Code != 0 {
		t.Fatalf("resume: %s", r)
	}
	if r := l.Run("ralph", "wait", "setup", "--timeout", "30"); r.Code != 0 || r.Stdout != "setup: complete after 1 iterations\n" {
		t.Fatalf("after the resume: %s\n%s", r, l.RalphLog("setup"))
	}
}

// A loop whose work is done is not resumed: that would run the agent
// again on finished work and spend iterations. The refusal says how to go
// on and changes nothing.
func TestResumeRefusesACompletedLoop(t *testing.T) {
	l := newLoop(t, "done")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5"},
		l.agent("--script", "print <promise>COMPLETE</promise>;quiet")...)
	l.waitEnded(30 * time.Second)
	before, log := l.state(), l.RalphLog("done")
	r := l.Run("ralph", "resume", "done")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: ralph loop for 'done' has ended (complete); there is nothing to resume\n") ||
		!strings.Contains(r.Stderr, "hint: to run it again from the start: swarm ralph spawn --name done --replace") {
		t.Fatalf("resume of a complete loop: %s", r)
	}
	if after := l.state(); after["status"] != before["status"] || after["current_iteration"] != before["current_iteration"] || l.RalphLog("done") != log {
		t.Fatalf("the refused resume changed the loop: %v\n%s", after, l.RalphLog("done"))
	}
}

func TestFatalCompactionRestartsWithoutFailure(t *testing.T) {
	l := newLoop(t, "compact")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2"},
		l.agent("--iter", "1=print working;print Compacting conversation...;quiet", "--script", "print fresh start;exit 0")...)
	l.waitEnded(30 * time.Second)
	log := l.RalphLog("compact")
	if !strings.Contains(log, "[FATAL] iteration 1") || l.num("total_failures") != 0 || l.str("exit_reason") != "max_iterations" {
		t.Fatalf("state %v\n%s", l.state(), log)
	}
}

func TestMaxContextNudgesThenRestarts(t *testing.T) {
	l := newLoop(t, "ctx")
	l.WriteFile("PROMPT.md", "work")
	// Iteration 1 reports 85% (nudge: the agent gets a message), then 97%
	// (restart). Iteration 2 exits.
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--max-context", "80"},
		l.agent("--iter", "1=print Context: 85%;wait;print Context: 97%;quiet", "--script", "exit 0")...)
	l.waitEnded(30 * time.Second)
	msgs := l.messages()
	if len(msgs) < 2 || !strings.Contains(msgs[1], "Your context window is almost full. Commit your work now") {
		t.Fatalf("messages %q\n%s", msgs, l.RalphLog("ctx"))
	}
	log := l.RalphLog("ctx")
	if !strings.Contains(log, "[WARN] iteration 1: context at 85%") || !strings.Contains(log, "[FATAL] iteration 1: context at 97%") {
		t.Errorf("log:\n%s", log)
	}
}

func TestSIGTERMPausesAfterIterationThenResume(t *testing.T) {
	l := newLoop(t, "term")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"},
		l.agent("--script", "print busy;sleep 1500ms;exit 0")...)
	l.Eventually("iteration 1", 10*time.Second, func() bool { return l.state()["prompt_delivered"] == true })
	mon := l.monitorPID()
	syscall.Kill(mon, syscall.SIGTERM)
	l.Eventually("paused", 5*time.Second, func() bool { return l.str("status") == "paused" })
	// The agent finishes its iteration, then the monitor exits.
	l.Eventually("monitor exit", 15*time.Second, func() bool { return !alive(mon) })
	if l.num("current_iteration") != 1 || !strings.Contains(l.RalphLog("term"), "[END] iteration 1 exit=0") {
		t.Fatalf("state %v\n%s", l.state(), l.RalphLog("term"))
	}
	l.MustRun("ralph", "resume", "term")
	if r := l.Run("ralph", "wait", "term", "--timeout", "30"); r.Code != 0 || l.num("current_iteration") != 3 {
		t.Fatalf("%s %v", r, l.state())
	}
}

func TestStatusShowsLastOutputWhenQuiet(t *testing.T) {
	l := newLoop(t, "quiet")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--inactivity-timeout", "600"},
		l.agent("--script", "print step one;print step two;print waiting for input;quiet")...)
	l.Eventually("agent output", 10*time.Second, func() bool { return strings.Contains(l.Screen("quiet"), "waiting for input") })
	// Wait until the monitor has recorded the final screen change.
	l.Eventually("screen change recorded", 10*time.Second, func() bool {
		ts, err := time.Parse("2006-01-02T15:04:05.999999-07:00", l.str("last_screen_change"))
		return err == nil && time.Since(ts) > 1500*time.Millisecond
	})
	// Pretend the screen last changed two minutes ago: the monitor only
	// writes this field when the screen changes, and this one does not.
	path := filepath.Join(l.Home, "ralph", "quiet", "state.json")
	data, _ := os.ReadFile(path)
	var st map[string]any
	json.Unmarshal(data, &st)
	st["last_screen_change"] = time.Now().UTC().Add(-2 * time.Minute).Format("2006-01-02T15:04:05.999999-07:00")
	data, _ = json.Marshal(st)
	os.WriteFile(path, data, 0o600)
	r := l.MustRun("ralph", "status", "quiet")
	if !regexp.MustCompile(`Last screen change: 12\ds ago`).MatchString(r.Stdout) || !strings.Contains(r.Stdout, "Status: running (possibly stuck — no output change for 12") ||
		!strings.Contains(r.Stdout, "\nLast output:\n") ||
		!strings.Contains(r.Stdout, "  waiting for input") {
		t.Fatalf("%s", r.Stdout)
	}
	l.MustRun("kill", "quiet")
}

func TestRalphListLogsCleanInitTemplate(t *testing.T) {
	l := newLoop(t, "cmds")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1"}, l.agent("--script", "exit 0")...)
	l.waitEnded(20 * time.Second)
	if r := l.MustRun("ralph", "list"); !strings.Contains(r.Stdout, "NAME") || !strings.Contains(r.Stdout, "cmds") || !strings.Contains(r.Stdout, "max_iterations") {
		t.Errorf("list: %s", r)
	}
	if r := l.MustRun("ralph", "ls", "--format", "names", "--status", "stopped"); r.Stdout != "cmds\n" {
		t.Errorf("names: %q", r.Stdout)
	}
	if r := l.MustRun("ralph", "ls", "--status", "running", "--format", "json"); strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("json: %q", r.Stdout)
	}
	if r := l.MustRun("ralph", "logs", "cmds", "--lines", "1"); !strings.Contains(r.Stdout, "[DONE] loop complete after 1 iterations reason=max_iterations") || strings.Count(r.Stdout, "\n") != 1 {
		t.Errorf("logs: %q", r.Stdout)
	}
	if r := l.MustRun("ralph", "clean", "cmds"); r.Stdout != "cleaned ralph state for cmds\n" {
		t.Errorf("clean: %s", r)
	}
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "cmds")); err == nil {
		t.Error("ralph state still there")
	}
	// init and template
	if r := l.MustRun("ralph", "template"); !strings.Contains(r.Stdout, "study specs/README.md") {
		t.Errorf("template: %s", r)
	}
	// One line per template: its name, then what it is for.
	if r := l.MustRun("ralph", "template", "--list"); !regexp.MustCompile(`^default +\S.*\nplan +\S.*\npromise +\S.*\n$`).MatchString(r.Stdout) {
		t.Errorf("list: %q", r.Stdout)
	}
	if r := l.Run("ralph", "template", "nope"); r.Code != 1 || !strings.Contains(r.Stderr, "unknown template 'nope' (available: default, plan, promise)") {
		t.Errorf("unknown: %s", r)
	}
	dir := t.TempDir()
	if r := l.RunIn(dir, "ralph", "init"); r.Code != 0 || r.Stdout != "created PROMPT.md\n" {
		t.Errorf("init: %s", r)
	}
	if r := l.RunIn(dir, "ralph", "init"); r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: PROMPT.md already exists (use --force to overwrite)") {
		t.Errorf("init again: %s", r)
	}
	if r := l.RunIn(dir, "ralph", "init", "--force", "--template", "promise"); r.Stdout != "created PROMPT.md (overwritten)\n" {
		t.Errorf("init --force: %s", r)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "PROMPT.md"))
	if !strings.Contains(string(b), "<promise>BLOCKED:") {
		t.Errorf("promise template: %s", b)
	}
}

func TestPromptTextIsNotAStuckOrFatalScreen(t *testing.T) {
	l := newLoop(t, "echoscreens")
	l.WriteFile("PROMPT.md", "Add a settings page where users can choose the text style that looks best.\nThen document Compacting conversation behaviour. Select login method: is a heading.\n")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2"},
		l.agent("--echo-transcript", "--script", "print working;sleep 300ms;exit 0")...)
	l.waitEnded(30 * time.Second)
	log := l.RalphLog("echoscreens")
	if l.str("exit_reason") != "max_iterations" || strings.Contains(log, "FATAL") || strings.Contains(log, "WARN") {
		t.Fatalf("state %v\n%s", l.state(), log)
	}
}

func TestCorruptStateMidLoopKeepsCount(t *testing.T) {
	l := newLoop(t, "corrupt")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"},
		l.agent("--script", "print busy;sleep 1s;exit 0")...)
	l.Eventually("iteration 2", 20*time.Second, func() bool { return l.num("current_iteration") == 2 })
	// Under the state's lock: the monitor's next read-modify-write reads
	// the garbage, never writes over it from what it read before.
	rs := state.NewStore(l.Home, func(string) {}).Ralph("corrupt")
	if err := rs.View(func(*state.Ralph) {
		if err := os.WriteFile(rs.StatePath(), []byte("{garbage"), 0o600); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	l.waitEnded(30 * time.Second)
	mon, _ := os.ReadFile(filepath.Join(l.Home, "ralph", "corrupt", "monitor.log"))
	if l.str("exit_reason") != "max_iterations" || l.count_("START") != 3 || !strings.Contains(string(mon), "corrupt ralph state for 'corrupt', resetting") {
		t.Fatalf("state %v\n%s\n%s", l.state(), l.RalphLog("corrupt"), mon)
	}
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "corrupt", "state.json.corrupted")); err != nil {
		t.Error("no backup of the corrupt file")
	}
}

// A resume that lands while the monitor is finishing (here: running its
// on-exit hook) must not leave the loop running without a monitor.
func TestResumeWhileMonitorIsFinishing(t *testing.T) {
	l := newLoop(t, "race")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--on-exit", "sleep 2"},
		l.agent("--iter", "1=print <promise>BLOCKED:need a token</promise>;quiet", "--script", "print <promise>COMPLETE</promise>;quiet")...)
	l.Eventually("blocked", 20*time.Second, func() bool { return l.str("exit_reason") == "blocked" })
	mon := l.monitorPID()
	if !alive(mon) {
		t.Skip("monitor already gone; the race did not happen")
	}
	l.MustRun("ralph", "resume", "race")
	if r := l.Run("ralph", "wait", "race", "--timeout", "30"); r.Code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 2 {
		t.Fatalf("%s %v\n%s", r, l.state(), l.RalphLog("race"))
	}
}
