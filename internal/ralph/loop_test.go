package ralph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/testenv"
	"github.com/swarmtools/swarm/internal/tmux"
)

// loop is a ralph loop under test in its own env.
type loop struct {
	*testenv.Env
	name   string
	record string // the fake agent's record of received messages
	count  string // the fake agent's iteration counter
}

func newLoop(t *testing.T, name string) *loop {
	t.Parallel()
	e := testenv.New(t)
	return &loop{Env: e, name: name,
		record: filepath.Join(e.Dir, "..", name+".record"),
		count:  filepath.Join(e.Dir, "..", name+".count")}
}

// agent returns the fake agent command line with record and counter.
func (l *loop) agent(args ...string) []string {
	return append([]string{l.Agent, "--record", l.record, "--counter", l.count}, args...)
}

// spawn starts the loop with spawn --ralph in the background.
func (l *loop) spawn(flags []string, agent ...string) testenv.Result {
	l.T.Helper()
	args := append([]string{"spawn", "--name", l.name, "--ralph", "--restart-delay", "100ms"}, flags...)
	args = append(append(args, "--"), agent...)
	r := l.Run(args...)
	if r.Code != 0 {
		l.T.Fatalf("spawn %s: %s", l.name, r)
	}
	return r
}

func (l *loop) state() map[string]any { return l.RalphState(l.name) }

func (l *loop) str(key string) string {
	v, _ := l.state()[key].(string)
	return v
}

func (l *loop) num(key string) int {
	v, _ := l.state()[key].(float64)
	return int(v)
}

// waitEnded polls until the loop is no longer running or paused.
func (l *loop) waitEnded(timeout time.Duration) {
	l.T.Helper()
	l.Eventually("loop "+l.name+" to end", timeout, func() bool {
		s := l.str("status")
		return s == "stopped" || s == "failed"
	})
}

func (l *loop) count_(event string) int {
	return strings.Count(l.RalphLog(l.name), "["+event+"]")
}

// messages returns what the agent received, in order.
func (l *loop) messages() []string { return testenv.Messages(l.T, l.record) }

func (l *loop) monitorPID() int { return l.num("monitor_pid") }

// holds checks that cond stays true throughout d (with the test's 100 ms
// poll interval, d spans many monitor polls): an absence can only be
// watched for a while, never waited for.
func (l *loop) holds(what string, d time.Duration, cond func() bool) {
	l.T.Helper()
	if clock.Wait(context.Background(), clock.Real, 50*time.Millisecond, d, func() bool { return !cond() }) {
		l.T.Fatalf("%s: broke after less than %v: %v\n%s", what, d, l.state(), l.RalphLog(l.name))
	}
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

func TestMaxIterationsThreeWholePromptsAndEdits(t *testing.T) {
	l := newLoop(t, "cap")
	prompt := l.WriteFile("PROMPT.md", "first line\nsecond line\nthird line")
	// The agent edits the prompt file during iteration 1, as a user would.
	r := l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"},
		l.agent("--iter", "1=print working;sleep 200ms;exit 0", "--script", "sleep 200ms;exit 0")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "spawned cap (tmux: ") || !strings.Contains(r.Stdout, "[ralph mode: iteration 1/3]") {
		t.Fatalf("spawn: %s", r)
	}
	l.Eventually("first message", 10*time.Second, func() bool { return len(l.messages()) >= 1 })
	os.WriteFile(prompt, []byte("edited prompt"), 0o644)
	l.waitEnded(30 * time.Second)
	if l.str("status") != "stopped" || l.str("exit_reason") != "max_iterations" || l.num("current_iteration") != 3 {
		t.Fatalf("state: %v", l.state())
	}
	if n := l.count_("START"); n != 3 {
		t.Errorf("%d START lines:\n%s", n, l.RalphLog(l.name))
	}
	msgs := l.messages()
	if len(msgs) != 3 || msgs[0] != "first line\nsecond line\nthird line" {
		t.Fatalf("messages: %q", msgs)
	}
	if msgs[1] != "edited prompt" || msgs[2] != "edited prompt" {
		t.Errorf("edit did not reach later iterations: %q", msgs)
	}
	if !strings.Contains(l.RalphLog(l.name), "[DONE] loop complete after 3 iterations reason=max_iterations") {
		t.Errorf("log:\n%s", l.RalphLog(l.name))
	}
	// The window is gone and the worker stopped; the metadata carries the iteration.
	if l.WindowID("cap") != "" {
		t.Error("window left behind")
	}
	w := l.Workers()[0]
	if w["status"] != "stopped" || w["metadata"].(map[string]any)["ralph_iteration"].(float64) != 3 {
		t.Errorf("worker: %v", w)
	}
}

func TestDonePatternStopsAtTwoAndTerminatesAgent(t *testing.T) {
	l := newLoop(t, "pat")
	l.WriteFile("PROMPT.md", "work")
	pidfile := filepath.Join(l.Dir, "agent.pid")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--done-pattern", "ALL (TASKS )?DONE"},
		l.agent("--pidfile", pidfile, "--iter", "1=print still working;exit 0", "--script", "print ALL TASKS DONE;quiet")...)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "done_pattern" || l.num("current_iteration") != 2 {
		t.Fatalf("state: %v", l.state())
	}
	b, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	l.Eventually("agent terminated", 5*time.Second, func() bool { return !alive(pid) })
	if code := l.Run("ralph", "wait", "pat").Code; code != 0 {
		t.Errorf("ralph wait exit %d", code)
	}
}

func TestDonePatternRightBeforeExitWithoutContinuousCheck(t *testing.T) {
	l := newLoop(t, "last")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3", "--done-pattern", "FINISHED", "--no-check-done-continuous"},
		l.agent("--script", "print FINISHED;exit 0")...)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "done_pattern" || l.num("current_iteration") != 1 {
		t.Fatalf("state: %v", l.state())
	}
}

func TestDonePatternOnlyInPromptNeverStops(t *testing.T) {
	l := newLoop(t, "echo")
	l.WriteFile("PROMPT.md", "Do the next task. When nothing is left, print ALL TASKS DONE and stop.")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--done-pattern", "ALL TASKS DONE"},
		l.agent("--echo-transcript", "--script", "print looking at the plan;sleep 300ms;exit 0")...)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "max_iterations" {
		t.Fatalf("the prompt's text stopped the loop: %v", l.state())
	}
}

func TestInactivityRestartsSilentAgentButNotBusyOne(t *testing.T) {
	l := newLoop(t, "idle")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--inactivity-timeout", "2"},
		l.agent("--script", "print thinking;quiet")...)
	l.waitEnded(30 * time.Second)
	log := l.RalphLog(l.name)
	if n := strings.Count(log, "[TIMEOUT] iteration"); n != 2 || !strings.Contains(log, "inactivity_timeout=2s") {
		t.Fatalf("log:\n%s", log)
	}

	busy := newLoopIn(t, "busy")
	busy.WriteFile("PROMPT.md", "work")
	busy.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--inactivity-timeout", "2"},
		busy.agent("--script", "spin 5s;exit 0")...)
	// 5 s of output with a 2 s timeout: iteration 1 ends by exit, not timeout.
	busy.Eventually("iteration 1 to end", 20*time.Second, func() bool { return strings.Contains(busy.RalphLog("busy"), "[END] iteration 1") })
	if log := busy.RalphLog("busy"); strings.Contains(log, "TIMEOUT") || !strings.Contains(log, "[END] iteration 1 exit=0") {
		t.Fatalf("busy agent timed out:\n%s", log)
	}
	busy.Run("kill", "busy")
}

// An agent that prints a line every 0.2 s, its output still in the top
// half of the 200x50 worker window when the 2 s inactivity timeout
// passes, is busy: the blank rows under its output are not the screen's
// "last 20 lines" (they were, and it was killed at the timeout).
func TestInactivityIgnoresBlankRowsUnderOutput(t *testing.T) {
	l := newLoop(t, "slowprint")
	l.WriteFile("PROMPT.md", "work")
	var script strings.Builder
	for i := 1; i <= 20; i++ { // 4 s of output, 20 of the window's 50 rows
		fmt.Fprintf(&script, "print working %d;sleep 200ms;", i)
	}
	script.WriteString("exit 0")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--inactivity-timeout", "2"},
		l.agent("--script", script.String())...)
	l.waitEnded(30 * time.Second)
	if log := l.RalphLog(l.name); strings.Contains(log, "TIMEOUT") || !strings.Contains(log, "[END] iteration 1 exit=0") {
		t.Fatalf("a busy agent was taken for inactive:\n%s", log)
	}
}

// An agent that reads lines answers the first line of a pasted prompt at
// once, before Enter is pressed and before the paste's echo has settled:
// its answer counts (it was taken for output from before the prompt, with
// a WARN, and the loop idled to the timeout every iteration). The prompt's
// own echo, which holds a tag too, still does not count.
func TestFastAnswerBeforeEnterCounts(t *testing.T) {
	l := newLoop(t, "fast")
	l.WriteFile("PROMPT.md", "Pick the database for the store.\nIf you cannot, print <promise>BLOCKED:no access to the store</promise>\n")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--inactivity-timeout", "60"},
		"sh", "-c", `printf '> '; read line; echo "<promise>DECIDE:postgres or sqlite?</promise>"; sleep 600`)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "decide" || l.str("exit_detail") != "postgres or sqlite?" || l.num("current_iteration") != 1 {
		t.Fatalf("state %v\n%s", l.state(), l.RalphLog(l.name))
	}
	if log := l.RalphLog(l.name); strings.Contains(log, "WARN") {
		t.Fatalf("the answer was taken for early output:\n%s", log)
	}
}

// newLoopIn is newLoop for a second loop in an already parallel test.
func newLoopIn(t *testing.T, name string) *loop {
	e := testenv.New(t)
	return &loop{Env: e, name: name,
		record: filepath.Join(e.Dir, "..", name+".record"),
		count:  filepath.Join(e.Dir, "..", name+".count")}
}

func TestFailuresBackOffThenStop(t *testing.T) {
	l := newLoop(t, "fail")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "20"}, l.agent("--script", "exit 3")...)
	if code := l.Run("ralph", "wait", "fail", "--timeout", "60").Code; code != 1 {
		t.Errorf("ralph wait exit %d, want 1", code)
	}
	if l.str("status") != "failed" || l.str("exit_reason") != "failed" || l.num("consecutive_failures") != 5 {
		t.Fatalf("state: %v", l.state())
	}
	log := l.RalphLog(l.name)
	for _, want := range []string{
		"[END] iteration 1 exit=3",
		"[FAIL] iteration 1 exit=3 attempt=1/5 backoff=1s",
		"[FAIL] iteration 2 exit=3 attempt=2/5 backoff=2s",
		"[FAIL] iteration 3 exit=3 attempt=3/5 backoff=4s",
		"[FAIL] iteration 4 exit=3 attempt=4/5 backoff=8s",
		"[FAIL] iteration 5 exit=3 attempt=5/5",
		"reason=failed",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if l.count_("START") != 5 {
		t.Errorf("%d iterations", l.count_("START"))
	}
	if el := time.Since(start); el < 15*time.Second {
		t.Errorf("backoffs of 1+2+4+8 s took only %v", el)
	}
	mon, _ := os.ReadFile(filepath.Join(l.Home, "ralph", "fail", "monitor.log"))
	if !strings.Contains(string(mon), "[ralph] fail: iteration 3 failed (exit: 3), retrying in 4s (attempt 3/5)") ||
		!strings.Contains(string(mon), "[ralph] fail: 5 consecutive failures, stopping loop") {
		t.Errorf("monitor log:\n%s", mon)
	}
	// Each of the monitor's lines starts with when it was written.
	for _, line := range strings.Split(strings.TrimSpace(string(mon)), "\n") {
		stamp, rest, _ := strings.Cut(line, " ")
		if _, err := time.Parse(time.RFC3339, stamp); strings.HasPrefix(rest, "[ralph] ") && err != nil {
			t.Errorf("a monitor line without its time: %q", line)
		}
		if strings.HasPrefix(line, "[ralph] ") {
			t.Errorf("a monitor line without its time: %q", line)
		}
	}
}

func TestCommandNotFoundStopsAtOnce(t *testing.T) {
	l := newLoop(t, "nocmd")
	l.WriteFile("PROMPT.md", "work")
	// Exists at spawn time, gone when the loop starts it.
	bin := l.WriteExecutable("agent.sh", "#!/bin/sh\nexit 0\n")
	r := l.Run("spawn", "--name", "nocmd", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "5", "--no-run", "--", bin)
	if r.Code != 0 {
		t.Fatal(r)
	}
	os.Remove(bin)
	r = l.Run("ralph", "run", "nocmd")
	if r.Code != 1 || l.count_("START") != 1 || l.str("status") != "failed" || !strings.Contains(l.str("exit_detail"), "not found: "+bin+" (exit 127)") ||
		!strings.Contains(r.Stderr, "swarm: error: agent command not found: "+bin+" (exit 127)\nhint: check the command and PATH, then: swarm ralph resume nocmd\n") {
		t.Fatalf("%s\nstate %v\nlog:\n%s", r, l.state(), l.RalphLog("nocmd"))
	}
}

func TestPauseResumeKeepsCount(t *testing.T) {
	l := newLoop(t, "pz")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "6"},
		l.agent("--script", "print iteration {n};sleep 700ms;exit 0")...)
	l.Eventually("iteration 2", 20*time.Second, func() bool { return l.num("current_iteration") >= 2 })
	if r := l.MustRun("ralph", "pause", "pz"); r.Stdout != "paused ralph loop for pz\n" {
		t.Fatalf("pause: %s", r)
	}
	if r := l.Run("ralph", "pause", "pz"); r.Code != 0 || !strings.Contains(r.Stderr, "swarm: warning: worker 'pz' is already paused") {
		t.Errorf("second pause: %s", r)
	}
	at := l.num("current_iteration")
	// The running agent finishes its iteration; no new one starts, and the
	// monitor does not undo the pause (swarm.py's failure 3).
	l.Eventually("iteration to end", 10*time.Second, func() bool { return l.state()["iteration_active"] == false })
	l.holds("the paused loop stays put", 2*time.Second, func() bool {
		return l.str("status") == "paused" && l.num("current_iteration") == at
	})
	if r := l.MustRun("ralph", "resume", "pz"); r.Stdout != "resumed ralph loop for pz\n" {
		t.Fatalf("resume: %s", r)
	}
	l.Eventually("next iteration", 10*time.Second, func() bool { return l.num("current_iteration") == at+1 })
	if r := l.Run("ralph", "resume", "pz"); !strings.Contains(r.Stderr, "swarm: warning: worker 'pz' is not paused") {
		t.Errorf("resume of running loop: %s", r)
	}
	log := l.RalphLog("pz")
	if !strings.Contains(log, "[PAUSE]") || !strings.Contains(log, "[RESUME]") {
		t.Errorf("log:\n%s", log)
	}
	l.MustRun("kill", "pz")
}

func TestKillStopsLoopForGood(t *testing.T) {
	l := newLoop(t, "kl")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "50"},
		l.agent("--script", "print busy;sleep 400ms;exit 0")...)
	l.Eventually("iteration 2", 20*time.Second, func() bool { return l.num("current_iteration") >= 2 })
	mon := l.monitorPID()
	if r := l.MustRun("kill", "kl"); r.Stdout != "killed kl\n" {
		t.Fatalf("kill: %s", r)
	}
	// kill returns once the monitor is gone.
	if alive(mon) {
		t.Fatal("monitor still alive after kill returned")
	}
	// No monitor process is left for the loop, so none can start an
	// iteration; and for good measure over 15 polls none does.
	if n := countMonitors(l.Swarm, "kl"); n != 0 {
		t.Fatalf("%d monitor processes after kill", n)
	}
	at := l.num("current_iteration")
	l.holds("the killed loop stays stopped", 1500*time.Millisecond, func() bool {
		return l.num("current_iteration") == at && l.str("status") == "stopped" && l.str("exit_reason") == "killed"
	})
	if l.WindowID("kl") != "" {
		t.Error("window still there")
	}
	if code := l.Run("ralph", "wait", "kl").Code; code != 1 {
		t.Errorf("ralph wait after kill: %d", code)
	}
}

func TestMonitorSIGKILLThenResumeRecovers(t *testing.T) {
	l := newLoop(t, "crash")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "4"},
		l.agent("--script", "print busy;sleep 1500ms;exit 0")...)
	l.Eventually("iteration 1 running", 10*time.Second, func() bool { return l.num("current_iteration") == 1 })
	mon := l.monitorPID()
	syscall.Kill(mon, syscall.SIGKILL)
	// Its lock goes with its last open descriptor: a child it was
	// forking (a tmux client, every poll) holds a copy until its exec, a
	// moment later under load.
	l.Eventually("monitor dead", 5*time.Second, func() bool {
		return !alive(mon) && strings.Contains(l.Run("ralph", "status", "crash").Stdout, "Monitor: dead")
	})
	r := l.Run("ralph", "status", "crash")
	if !strings.Contains(r.Stdout, "Monitor: dead (resume with: swarm ralph resume crash)") || !strings.Contains(r.Stdout, "Status: running") {
		t.Fatalf("status after SIGKILL: %s", r)
	}
	js := l.Run("ralph", "status", "crash", "--format", "json")
	var st map[string]any
	json.Unmarshal([]byte(js.Stdout), &st)
	if st["monitor_alive"] != false {
		t.Errorf("json: %s", js.Stdout)
	}
	l.MustRun("ralph", "resume", "crash")
	defer func() {
		if t.Failed() {
			l.dump()
		}
	}()
	l.waitEnded(40 * time.Second)
	if l.str("exit_reason") != "max_iterations" || l.num("current_iteration") != 4 || l.count_("START") != 4 {
		t.Fatalf("after resume: %v\n%s", l.state(), l.RalphLog("crash"))
	}
	// Exactly one monitor drove the rest: every iteration started once.
	for i := 1; i <= 4; i++ {
		if n := strings.Count(l.RalphLog("crash"), "[START] iteration "+strconv.Itoa(i)+"/"); n != 1 {
			t.Errorf("iteration %d started %d times", i, n)
		}
	}
}

// A monitor SIGKILLed while it was forking leaves a child holding a copy
// of its lock's descriptor until that child's exec: for a moment the lock
// is held by no monitor. A resume then must not take that for a running
// monitor (it did, and left the loop with none): it waits for the lock
// and starts one.
func TestResumeWaitsOutALockHeldByNoMonitor(t *testing.T) {
	l := newLoop(t, "stale")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--no-run"}, l.agent("--script", "quiet")...)
	lock := filepath.Join(l.Home, "ralph", "stale", "monitor.lock")
	// The pid of a process that is gone, as a dead monitor leaves it.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(strconv.Itoa(gone.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("flock", "-x", lock, "sleep", "1.5")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Wait()
	l.Eventually("the lock to be held", 5*time.Second, func() bool {
		return strings.Contains(l.Run("ralph", "status", "stale").Stdout, "Monitor: running")
	})
	if r := l.Run("ralph", "resume", "stale"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("resume: %s", r)
	}
	holder.Wait()
	l.Eventually("a monitor after the lock was let go", 10*time.Second, func() bool {
		return alive(l.monitorPID()) && strings.Contains(l.Run("ralph", "status", "stale").Stdout, "Monitor: running")
	})
	l.Run("kill", "stale")
}

func TestPromptFileDeletedMidLoopFails(t *testing.T) {
	l := newLoop(t, "gone")
	prompt := l.WriteFile("PROMPT.md", "work")
	r := l.Run("spawn", "--name", "gone", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "5", "--restart-delay", "100ms", "--foreground", "--",
		l.Agent, "--counter", l.count, "--script", "rm "+prompt+";exit 0")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: prompt file not found: "+prompt) {
		t.Fatalf("%s", r)
	}
	if l.str("status") != "failed" || l.num("current_iteration") != 1 {
		t.Errorf("state: %v", l.state())
	}
}

func TestRalphSpawnNoRunDefaultsAndForegroundExitCode(t *testing.T) {
	l := newLoop(t, "defaults")
	l.WriteFile("PROMPT.md", "work")
	r := l.Run("ralph", "spawn", "--name", "defaults", "--prompt-file", "PROMPT.md", "--no-run", "--no-worktree", "--tmux", "--", l.Agent)
	if r.Code != 0 || !strings.Contains(r.Stderr, "swarm: note: Ralph workers always use tmux (--tmux flag has no effect)") {
		t.Fatal(r)
	}
	if l.num("max_iterations") != 50 || l.num("inactivity_timeout") != 180 || l.str("prompt_file") != filepath.Join(l.Dir, "PROMPT.md") {
		t.Fatalf("state: %v", l.state())
	}
	if l.monitorPID() != 0 || l.WindowID("defaults") != "" {
		t.Error("--no-run started something")
	}
	// --foreground exits with the loop's code: BLOCKED is 2.
	fg := newLoopIn(t, "fg")
	fg.WriteFile("PROMPT.md", "work")
	r = fg.Run("ralph", "spawn", "--name", "fg", "--prompt-file", "PROMPT.md", "--no-worktree", "--foreground", "--restart-delay", "100ms", "--",
		fg.Agent, "--script", "print <promise>BLOCKED:need the staging password</promise>;quiet")
	if r.Code != 2 || !strings.Contains(r.Stdout, "[ralph] fg: blocked after 1 iterations: need the staging password") {
		t.Fatalf("foreground: %s", r)
	}
}

func TestBadLoopInputChangesNothing(t *testing.T) {
	l := newLoop(t, "bad")
	l.WriteFile("PROMPT.md", "work")
	// Flag values that cannot be parsed are usage errors (exit 2, the
	// flag named); the messages docs/commands.md lists with swarm.py's exit
	// 1 keep it.
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"spawn", "--name", "bad", "--ralph", "--max-iterations", "3", "--", "x"}, 1, "swarm: error: --ralph requires --prompt-file"},
		{[]string{"spawn", "--name", "bad", "--ralph", "--prompt-file", "PROMPT.md", "--", "x"}, 1, "swarm: error: --ralph requires --max-iterations"},
		{[]string{"spawn", "--name", "bad", "--ralph", "--prompt-file", "missing.md", "--max-iterations", "3", "--", "x"}, 1, "swarm: error: prompt file not found: missing.md"},
		{[]string{"spawn", "--name", "bad", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3", "--done-pattern", "a(b", "--", "x"}, 2, "swarm: error: invalid --done-pattern"},
		{[]string{"spawn", "--name", "bad", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3", "--prompt-mode", "fax", "--", "x"}, 2, "swarm: error: invalid choice for --prompt-mode: 'fax'"},
		{[]string{"spawn", "--name", "bad", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3", "--max-time", "soon", "--", "x"}, 2, "swarm: error: invalid --max-time 'soon': invalid duration 'soon'"},
		{[]string{"ralph", "pause", "nobody"}, 1, "swarm: error: worker 'nobody' not found"},
	}
	for _, c := range cases {
		r := l.Run(c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.msg) {
			t.Errorf("%v: %s", c.args, r)
		}
	}
	if _, err := os.Stat(filepath.Join(l.Home, "ralph")); err == nil {
		t.Error("ralph state created")
	}
	if len(l.Workers()) != 0 {
		t.Errorf("records: %v", l.Workers())
	}
	if out, err := l.Tmux("list-windows", "-a"); err == nil {
		t.Errorf("tmux windows: %s", out)
	}
	r := l.Run("spawn", "--name", "hi", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "51", "--no-run", "--", l.Agent)
	if r.Code != 0 || !strings.Contains(r.Stderr, "swarm: warning: high iteration count (>50) may consume significant resources") {
		t.Errorf("high count: %s", r)
	}
	// A plain worker is not a ralph worker.
	l.MustRun("spawn", "--name", "plain", "--tmux", "--", "sleep", "300")
	if r := l.Run("ralph", "pause", "plain"); r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: worker 'plain' is not a ralph worker") {
		t.Errorf("pause plain: %s", r)
	}
}

// A prompt the agent's input box would not send to the model (Claude
// Code runs "/fix ..." as a slash command) is warned about at spawn;
// other agents and prompts are not. One it would run in its shell
// ("!...") is refused instead (TestShellPromptIsNeverTyped).
func TestSpawnWarnsOfAPromptTheAgentWouldNotSend(t *testing.T) {
	l := newLoop(t, "slash")
	l.WriteFile("SLASH.md", "/fix the failing tests\n")
	l.WriteFile("PLAIN.md", "fix the failing tests; see /docs\n")
	cases := []struct{ name, file, agent, want string }{
		{"s1", "SLASH.md", "claude", "starts with '/', and claude runs a message that starts with '/' as one of its slash commands, not as a prompt; start the file with other text"},
		{"s3", "PLAIN.md", "claude", ""},
		{"s4", "SLASH.md", "generic", ""},
	}
	for _, c := range cases {
		r := l.Run("ralph", "spawn", "--name", c.name, "--prompt-file", c.file, "--no-worktree", "--no-run", "--agent", c.agent, "--", l.Agent)
		if r.Code != 0 || (c.want == "") != !strings.Contains(r.Stderr, "swarm: warning: the prompt file") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s (%s, %s): %s", c.name, c.file, c.agent, r)
		}
	}
}

func TestReplaceLeavesOneMonitorAndKeepsDirtyWorktree(t *testing.T) {
	l := newLoop(t, "rep")
	l.InitRepo()
	l.WriteFile("PROMPT.md", "work")
	l.Git(l.Dir, "add", "PROMPT.md")
	l.Git(l.Dir, "commit", "-qm", "prompt")
	agent := l.agent("--script", "print busy;sleep 500ms;exit 0")
	args := append([]string{"ralph", "spawn", "--name", "rep", "--prompt-file", "PROMPT.md", "--restart-delay", "100ms", "--"}, agent...)
	l.MustRun(args...)
	l.Eventually("iteration 1", 10*time.Second, func() bool { return l.num("current_iteration") >= 1 })
	first := l.monitorPID()
	wt := filepath.Join(filepath.Dir(l.Dir), "work-worktrees", "rep")
	os.WriteFile(filepath.Join(wt, "uncommitted.txt"), []byte("precious"), 0o644)
	replace := append([]string{"ralph", "spawn", "--name", "rep", "--prompt-file", "PROMPT.md", "--replace", "--restart-delay", "100ms", "--"}, agent...)
	r := l.Run(replace...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "cannot remove worktree for 'rep'") {
		t.Fatalf("replace: %s", r)
	}
	if alive(first) {
		t.Fatal("old monitor still alive after --replace")
	}
	if b, err := os.ReadFile(filepath.Join(wt, "uncommitted.txt")); err != nil || string(b) != "precious" {
		t.Fatal("--replace lost uncommitted work")
	}
	l.Eventually("new loop running", 10*time.Second, func() bool { return l.num("current_iteration") >= 1 && l.monitorPID() != first })
	// Exactly one swarm monitor process for the loop (the old one may take
	// a moment to leave after giving up its lock; it must not stay).
	l.Eventually("exactly one monitor process", 5*time.Second, func() bool { return countMonitors(l.Swarm, "rep") == 1 })
	if l.str("status") != "running" || l.monitorPID() == first {
		t.Errorf("new loop: %v", l.state())
	}
	l.MustRun("kill", "rep")
}

// TestReplaceKeepsCommitsOnNoBranch (issue 16, item 7): ralph spawn
// --replace of a loop whose worktree has a commit on no branch (a detached
// HEAD, which git status does not show) keeps the worktree and the commit,
// stops there with the reason and a hint (the new loop, on the worker's
// branch, cannot run in it), and --force-dirty goes on.
func TestReplaceKeepsCommitsOnNoBranch(t *testing.T) {
	l := newLoop(t, "det")
	l.InitRepo()
	l.WriteFile("PROMPT.md", "work")
	l.Git(l.Dir, "add", "PROMPT.md")
	l.Git(l.Dir, "commit", "-qm", "prompt")
	agent := l.agent("--script", "print busy;sleep 500ms;exit 0")
	args := append([]string{"ralph", "spawn", "--name", "det", "--prompt-file", "PROMPT.md", "--restart-delay", "100ms", "--"}, agent...)
	l.MustRun(args...)
	l.Eventually("iteration 1", 10*time.Second, func() bool { return l.num("current_iteration") >= 1 })
	first := l.monitorPID()
	wt := filepath.Join(filepath.Dir(l.Dir), "work-worktrees", "det")
	l.Git(wt, "checkout", "-q", "--detach")
	l.Git(wt, "commit", "-q", "--allow-empty", "-m", "precious")
	head := strings.TrimSpace(l.Git(wt, "rev-parse", "--short", "HEAD"))

	replace := append([]string{"ralph", "spawn", "--name", "det", "--prompt-file", "PROMPT.md", "--replace", "--restart-delay", "100ms", "--"}, agent...)
	r := l.Run(replace...)
	want := "swarm: error: cannot remove worktree for 'det': worktree has 1 commit(s) on no branch (HEAD detached at " + head + ") (kept)\n" +
		"hint: keep that work first (git -C " + tmux.ShellQuote(wt) + " branch NEW-BRANCH HEAD, or finish the rebase), or pass --force-dirty to discard it\n"
	if r.Code != 1 || r.Stderr != want {
		t.Fatalf("replace:\n%s\nwant exit 1 and stderr:\n%s", r, want)
	}
	if alive(first) {
		t.Error("old monitor still alive after --replace")
	}
	if got := strings.TrimSpace(l.Git(wt, "log", "-1", "--format=%s")); got != "precious" {
		t.Fatalf("--replace lost the commit on no branch: HEAD is %q", got)
	}
	r = l.Run(append(replace[:len(replace)-len(agent)-1], append([]string{"--force-dirty", "--"}, agent...)...)...)
	if r.Code != 0 {
		t.Fatalf("replace --force-dirty: %s", r)
	}
	l.Eventually("new loop running", 10*time.Second, func() bool { return l.num("current_iteration") >= 1 && l.monitorPID() != first })
	l.MustRun("kill", "det")
}

// countMonitors counts live "swarm ralph run NAME" processes of bin.
func countMonitors(bin, name string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, _ := os.Readlink("/proc/" + e.Name() + "/exe")
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if exe == bin && strings.Join(strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")[1:], " ") == "ralph run "+name {
			if pid, _ := strconv.Atoi(e.Name()); !zombie(pid) {
				n++
			}
		}
	}
	return n
}

func TestMonitorStartsFromAnyDirectory(t *testing.T) {
	// swarm.py's failure 1: a monitor started by a relative script path
	// died silently when spawn ran elsewhere.
	l := newLoop(t, "cwd")
	sub := filepath.Join(l.Dir, "deep", "er")
	os.MkdirAll(sub, 0o755)
	l.WriteFile("deep/er/PROMPT.md", "work")
	r := l.RunIn(sub, "spawn", "--name", "cwd", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "2", "--restart-delay", "100ms", "--", l.Agent, "--script", "exit 0")
	if r.Code != 0 {
		t.Fatal(r)
	}
	l.waitEnded(20 * time.Second)
	if l.str("exit_reason") != "max_iterations" {
		t.Fatalf("state %v", l.state())
	}
}

func (l *loop) dump() {
	l.T.Helper()
	mon, _ := os.ReadFile(filepath.Join(l.Home, "ralph", l.name, "monitor.log"))
	l.T.Logf("state: %v\nlog:\n%s\nmonitor.log:\n%s", l.state(), l.RalphLog(l.name), mon)
}

// TestPromptDeliveredWholeIntoCopyModePane: a user who scrolled back in
// the loop's window (copy mode) while the agent was starting does not
// break the delivery: the three-line prompt still arrives as one message.
// In copy mode tmux pasted unbracketed, and the agent took the first line
// alone as the whole prompt.
func TestPromptDeliveredWholeIntoCopyModePane(t *testing.T) {
	l := newLoop(t, "cm")
	l.WriteFile("PROMPT.md", "first line\nsecond line\nthird line")
	waiting, goFile := filepath.Join(l.Dir, "..", "waiting"), filepath.Join(l.Dir, "..", "go")
	// The agent starts only once the pane is in copy mode.
	gate := `touch "$0"; while [ ! -e "$1" ]; do sleep 0.05; done; shift; exec "$@"`
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1"},
		append([]string{"sh", "-c", gate, waiting, goFile}, l.agent("--script", "exit 0")...)...)
	l.Eventually("the agent's gate", 15*time.Second, func() bool { _, err := os.Stat(waiting); return err == nil })
	id := l.WindowID(l.name)
	if out, err := l.Tmux("copy-mode", "-t", id); err != nil {
		t.Fatalf("copy-mode: %v: %s", err, out)
	}
	if out, _ := l.Tmux("display-message", "-p", "-t", id, "#{pane_in_mode}"); strings.TrimSpace(out) != "1" {
		t.Fatalf("pane not in copy mode: %q", out)
	}
	os.WriteFile(goFile, nil, 0o644)
	l.waitEnded(30 * time.Second)
	if msgs := l.messages(); len(msgs) != 1 || msgs[0] != "first line\nsecond line\nthird line" {
		t.Fatalf("messages %q, want the three-line prompt as one\n%s", msgs, l.RalphLog(l.name))
	}
}
