package ralph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCompleteInIterationTwo(t *testing.T) {
	l := newLoop(t, "done2")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5"},
		l.agent("--iter", "1=print not yet;exit 0", "--script", "print finished;print <promise>COMPLETE</promise>;quiet")...)
	r := l.Run("ralph", "wait", "done2", "--timeout", "30")
	if r.Code != 0 || r.Stdout != "done2: complete after 2 iterations\n" {
		t.Fatalf("wait: %s", r)
	}
	if l.str("exit_reason") != "complete" || l.num("current_iteration") != 2 {
		t.Fatalf("state: %v", l.state())
	}
	js := l.MustRun("ralph", "status", "done2", "--format", "json")
	if !strings.Contains(js.Stdout, `"exit_reason": "complete"`) || !strings.Contains(js.Stdout, `"exit_code": 0`) {
		t.Errorf("json: %s", js.Stdout)
	}
}

func TestBlockedAndDecideExitCodes(t *testing.T) {
	l := newLoop(t, "blk")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5"},
		l.agent("--script", "print <promise>BLOCKED:Missing API credentials for payments</promise>;quiet")...)
	if r := l.Run("ralph", "wait", "blk", "--timeout", "30"); r.Code != 2 || !strings.Contains(r.Stdout, "blocked after 1 iterations: Missing API credentials for payments") {
		t.Fatalf("wait: %s", r)
	}
	st := l.MustRun("ralph", "status", "blk")
	if !strings.Contains(st.Stdout, "\nExit reason: blocked\n") || !strings.Contains(st.Stdout, "\nExit code: 2\n") || !strings.Contains(st.Stdout, "Blocked: Missing API credentials for payments") {
		t.Errorf("status: %s", st.Stdout)
	}
	if l.str("exit_detail") != "Missing API credentials for payments" {
		t.Errorf("state: %v", l.state())
	}

	d := newLoopIn(t, "dec")
	d.WriteFile("PROMPT.md", "work")
	d.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5"},
		d.agent("--script", "print <promise>DECIDE:Should the endpoint use REST or GraphQL?</promise>;quiet")...)
	if r := d.Run("ralph", "wait", "dec", "--timeout", "30"); r.Code != 3 {
		t.Fatalf("wait: %s", r)
	}
	st = d.MustRun("ralph", "status", "dec")
	if !strings.Contains(st.Stdout, "Question: Should the endpoint use REST or GraphQL?") {
		t.Errorf("status: %s", st.Stdout)
	}
	js := d.MustRun("ralph", "status", "dec", "--format", "json")
	if !strings.Contains(js.Stdout, `"exit_detail": "Should the endpoint use REST or GraphQL?"`) || !strings.Contains(js.Stdout, `"exit_code": 3`) {
		t.Errorf("json: %s", js.Stdout)
	}
}

func TestPromptContainingTagDoesNotStopLoop(t *testing.T) {
	l := newLoop(t, "trap")
	l.WriteFile("PROMPT.md", "Fix the bug in parser.go.\nWhen every test passes, print <promise>COMPLETE</promise>\n")
	// The agent shows the prompt in its transcript, like Claude Code.
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2"},
		l.agent("--echo-transcript", "--script", "print reading parser.go;sleep 300ms;exit 0")...)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "max_iterations" {
		t.Fatalf("the prompt stopped the loop: %v\n%s", l.state(), l.RalphLog("trap"))
	}
}

func TestTaskDoneRecordedWithoutStopping(t *testing.T) {
	l := newLoop(t, "task")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2"},
		l.agent("--script", "print <promise>TASK-{n}:DONE</promise>;sleep 200ms;exit 0")...)
	l.waitEnded(30 * time.Second)
	if l.str("exit_reason") != "max_iterations" {
		t.Fatalf("state: %v", l.state())
	}
	st := l.MustRun("ralph", "status", "task")
	if !strings.Contains(st.Stdout, "Tasks done: TASK-1 (iteration 1), TASK-2 (iteration 2)") {
		t.Errorf("status: %s", st.Stdout)
	}
}

func TestDoneFileStopsAtTwo(t *testing.T) {
	l := newLoop(t, "df")
	l.WriteFile("PROMPT.md", "work")
	r := l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--done-file", "DONE"},
		l.agent("--iter", "1=print working;exit 0", "--script", "touch DONE;print made DONE;quiet")...)
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("spawn without a done file warned: %s", r)
	}
	if r := l.Run("ralph", "wait", "df", "--timeout", "30"); r.Code != 0 {
		t.Fatalf("wait: %s", r)
	}
	if l.str("exit_reason") != "done_file" || l.num("current_iteration") != 2 {
		t.Fatalf("state: %v", l.state())
	}
	// A DONE file present before the loop starts ends it at once.
	pre := newLoopIn(t, "pre")
	pre.WriteFile("PROMPT.md", "work")
	pre.WriteFile("DONE", "")
	// ... and spawn warns, saying what to do.
	done := filepath.Join(pre.Dir, "DONE")
	warn := "swarm: warning: --done-file DONE already exists (" + done + "): the loop ends before its first iteration (unless a --check rejects it); remove it (rm '" + done + "') and spawn again with --replace\n"
	if r := pre.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--done-file", "DONE"}, pre.agent()...); r.Code != 0 || !strings.Contains(r.Stderr, warn) {
		t.Fatalf("spawn with a DONE file present: %s", r)
	}
	defer func() {
		if t.Failed() {
			pre.dump()
		}
	}()
	pre.waitEnded(10 * time.Second)
	if pre.str("exit_reason") != "done_file" || pre.num("current_iteration") != 0 {
		t.Fatalf("pre-existing DONE: %v", pre.state())
	}
	// So does ralph spawn --replace, with the DONE file the old loop left.
	r = pre.Run(append([]string{"ralph", "spawn", "--name", "pre", "--replace", "--no-worktree", "--prompt-file", "PROMPT.md", "--done-file", "DONE", "--"}, pre.agent()...)...)
	if r.Code != 0 || !strings.Contains(r.Stderr, warn) {
		t.Fatalf("ralph spawn --replace with a DONE file present: %s", r)
	}
}

func TestChecksGateCompletionAndFeedBack(t *testing.T) {
	l := newLoop(t, "chk")
	l.WriteFile("PROMPT.md", "make the check pass")
	check := `test -f fixed.marker || { echo "FAIL: TestWidget expected 3 got 2"; exit 1; }`
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "6", "--check", check},
		l.agent("--iter", "3+=touch fixed.marker;print <promise>COMPLETE</promise>;quiet",
			"--script", "print <promise>COMPLETE</promise>;quiet")...)
	if r := l.Run("ralph", "wait", "chk", "--timeout", "40"); r.Code != 0 {
		t.Fatalf("wait: %s\n%s", r, l.RalphLog("chk"))
	}
	if l.str("exit_reason") != "complete" || l.num("current_iteration") != 3 {
		t.Fatalf("state: %v", l.state())
	}
	log := l.RalphLog("chk")
	if strings.Count(log, "[REJECT] iteration") != 2 || !strings.Contains(log, "[REJECT] iteration 1 reason=check failed: "+check+" (exit 1)") {
		t.Errorf("log:\n%s", log)
	}
	msgs := l.messages()
	if len(msgs) != 3 {
		t.Fatalf("messages: %q", msgs)
	}
	if strings.Contains(msgs[0], "FAIL: TestWidget") {
		t.Error("iteration 1 got feedback")
	}
	if !strings.HasPrefix(msgs[1], "make the check pass\n\n") || !strings.Contains(msgs[1], "FAIL: TestWidget expected 3 got 2") {
		t.Errorf("iteration 2 prompt lacks the check output: %q", msgs[1])
	}
}

func TestCheckThatHangsIsKilledAtItsTimeout(t *testing.T) {
	l := newLoop(t, "hang")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--check", "echo started; sleep 300", "--check-timeout", "1s"},
		l.agent("--script", "print <promise>COMPLETE</promise>;quiet")...)
	l.waitEnded(20 * time.Second)
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("took %v", el)
	}
	if l.str("exit_reason") != "max_iterations" || !strings.Contains(l.RalphLog("hang"), "timed out after 1s") {
		t.Fatalf("state %v\n%s", l.state(), l.RalphLog("hang"))
	}
}

func TestRequireChange(t *testing.T) {
	l := newLoop(t, "chg")
	l.InitRepo()
	l.WriteFile("PROMPT.md", "change something")
	l.Git(l.Dir, "add", "PROMPT.md")
	l.Git(l.Dir, "commit", "-qm", "prompt")
	// A shell agent in stdin mode: iteration 1 claims completion without
	// doing anything, iteration 2 commits a change first.
	agent := l.WriteExecutable("agent.sh", `#!/bin/sh
cat > /dev/null
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
git add count >/dev/null 2>&1 || true
if [ "$n" -ge 2 ]; then echo "iteration $n" > work.txt; git add work.txt count; git -c user.email=a@b -c user.name=a commit -qm "work $n"; fi
echo '<promise>COMPLETE</promise>'
`)
	l.Git(l.Dir, "add", "agent.sh")
	l.Git(l.Dir, "commit", "-qm", "agent")
	// count is committed as untracked-free: make iteration 1 leave no trace.
	l.WriteFile(".gitignore", "count\n")
	l.Git(l.Dir, "add", ".gitignore")
	l.Git(l.Dir, "commit", "-qm", "ignore")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "4", "--prompt-mode", "stdin", "--require-change", "--no-check-done-continuous"}, agent)
	if r := l.Run("ralph", "wait", "chg", "--timeout", "30"); r.Code != 0 {
		t.Fatalf("wait: %s\n%s", r, l.RalphLog("chg"))
	}
	log := l.RalphLog("chg")
	if l.num("current_iteration") != 2 || !strings.Contains(log, "[REJECT] iteration 1 reason=no change") || strings.Contains(log, "[REJECT] iteration 2") {
		t.Fatalf("state %v\n%s", l.state(), log)
	}
}

func TestMaxTimeStopsBusyAgent(t *testing.T) {
	l := newLoop(t, "budget")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--max-time", "3s"},
		l.agent("--script", "spin forever")...)
	if r := l.Run("ralph", "wait", "budget", "--timeout", "30"); r.Code != 0 {
		t.Fatalf("wait: %s", r)
	}
	el := time.Since(start)
	if l.str("exit_reason") != "max_time" || el < 3*time.Second || el > 10*time.Second {
		t.Fatalf("reason %q after %v", l.str("exit_reason"), el)
	}
	if l.WindowID("budget") != "" {
		t.Error("agent window left running")
	}
}

func TestWaitWithoutRestart(t *testing.T) {
	l := newLoop(t, "w42")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5"},
		l.agent("--iter", "1=print need a human;exit 42", "--script", "print <promise>COMPLETE</promise>;quiet")...)
	l.Eventually("paused", 20*time.Second, func() bool { return l.str("status") == "paused" })
	if !strings.Contains(l.str("pause_reason"), "exit 42") || l.num("current_iteration") != 1 {
		t.Fatalf("state: %v", l.state())
	}
	l.holds("no restart after exit 42", time.Second, func() bool {
		return l.num("current_iteration") == 1 && l.str("status") == "paused"
	})
	l.MustRun("ralph", "resume", "w42")
	if r := l.Run("ralph", "wait", "w42", "--timeout", "20"); r.Code != 0 || l.num("current_iteration") != 2 {
		t.Fatalf("after resume: %s %v", r, l.state())
	}

	f := newLoopIn(t, "wf")
	f.WriteFile("PROMPT.md", "work")
	f.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--done-file", "out/DONE"},
		f.agent("--iter", "1=touch out/WAIT;exit 0", "--script", "touch out/DONE;quiet")...)
	os.MkdirAll(filepath.Join(f.Dir, "out"), 0o755)
	f.Eventually("paused by WAIT", 20*time.Second, func() bool { return f.str("status") == "paused" })
	if !strings.Contains(f.str("pause_reason"), "WAIT file") {
		t.Fatalf("state: %v", f.state())
	}
	f.MustRun("ralph", "resume", "wf")
	if _, err := os.Stat(filepath.Join(f.Dir, "out", "WAIT")); err == nil {
		t.Error("resume left the WAIT file")
	}
	if r := f.Run("ralph", "wait", "wf", "--timeout", "20"); r.Code != 0 || f.str("exit_reason") != "done_file" {
		t.Fatalf("after resume: %s %v", r, f.state())
	}
}

func TestOnExitHookGetsOutcome(t *testing.T) {
	l := newLoop(t, "hook")
	l.WriteFile("PROMPT.md", "work")
	out := filepath.Join(l.Dir, "hook.out")
	hook := `echo "$SWARM_WORKER $SWARM_EXIT_REASON $SWARM_EXIT_CODE $SWARM_ITERATIONS [$SWARM_EXIT_DETAIL]" >> ` + out
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3", "--on-exit", hook},
		l.agent("--script", "print <promise>DECIDE:tabs or spaces?</promise>;quiet")...)
	l.Eventually("hook ran", 20*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	b, _ := os.ReadFile(out)
	if string(b) != "hook decide 3 1 [tabs or spaces?]\n" {
		t.Fatalf("hook output %q", b)
	}
}

func TestSameSessionContinuesInsteadOfRestarting(t *testing.T) {
	l := newLoop(t, "same")
	l.WriteFile("PROMPT.md", "finish the task")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "5", "--same-session", "--inactivity-timeout", "1"},
		l.agent("--script", "print working;wait;print <promise>COMPLETE</promise>;quiet")...)
	if r := l.Run("ralph", "wait", "same", "--timeout", "30"); r.Code != 0 {
		t.Fatalf("wait: %s\n%s", r, l.RalphLog("same"))
	}
	msgs := l.messages()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[1], "You stopped without printing <promise>COMPLETE</promise>. Continue the task below; print it only when the task is fully done.") ||
		!strings.Contains(msgs[1], "finish the task") {
		t.Fatalf("messages: %q", msgs)
	}
	cnt, _ := os.ReadFile(l.count)
	if strings.TrimSpace(string(cnt)) != "1" {
		t.Errorf("agent started %s times, want once", cnt)
	}
	if l.num("current_iteration") != 2 || l.str("exit_reason") != "complete" {
		t.Errorf("state: %v", l.state())
	}
	log := l.RalphLog("same")
	if strings.Count(log, "[END] iteration 1 ") != 1 || strings.Count(log, "[END] iteration 2 ") != 1 || strings.Count(log, "[START] iteration 2/5 (same session)") != 1 {
		t.Errorf("log:\n%s", log)
	}
	if d, _ := l.state()["iteration_durations"].([]any); len(d) != 2 {
		t.Errorf("durations %v", d)
	}
}

func TestRestartDelaySeparatesIterations(t *testing.T) {
	l := newLoop(t, "delay")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	l.Run("spawn", "--name", "delay", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3", "--restart-delay", "1500ms",
		"--prompt-mode", "arg", "--", l.Agent, "--input", "arg", "--record", l.record, "--script", "exit 0")
	l.waitEnded(30 * time.Second)
	if el := time.Since(start); el < 3*time.Second {
		t.Errorf("3 instant iterations with 1.5 s delays took %v", el)
	}
	if msgs := l.messages(); len(msgs) != 3 || msgs[0] != "work" {
		t.Errorf("arg mode messages: %q", msgs)
	}
}

func TestTagWrappedByTerminalAndPrintedRightBeforeExit(t *testing.T) {
	l := newLoop(t, "wrap")
	l.WriteFile("PROMPT.md", "work")
	// 70 characters, then the tag: the pane is 80 columns wide, so the tag
	// is split over two screen lines.
	pad := strings.Repeat("x", 70)
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"},
		l.agent("--script", "print "+pad+"<promise>COMPLETE</promise>;exit 0")...)
	if r := l.Run("ralph", "wait", "wrap", "--timeout", "20"); r.Code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 1 {
		t.Fatalf("%s %v", r, l.state())
	}
}

func TestStdinModeAndRalphRunExitCode(t *testing.T) {
	l := newLoop(t, "stdin")
	l.WriteFile("PROMPT.md", "line one\nline two\n")
	r := l.Run("ralph", "spawn", "--name", "stdin", "--prompt-file", "PROMPT.md", "--no-worktree", "--prompt-mode", "stdin", "--no-run", "--restart-delay", "100ms", "--",
		l.Agent, "--input", "stdin", "--record", l.record, "--script", "print <promise>DECIDE:which db?</promise>;exit 0")
	if r.Code != 0 {
		t.Fatal(r)
	}
	r = l.Run("ralph", "run", "stdin")
	if r.Code != 3 || !strings.Contains(r.Stdout, "decision needed after 1 iterations: which db?") {
		t.Fatalf("ralph run: %s", r)
	}
	if msgs := l.messages(); len(msgs) != 1 || msgs[0] != "line one\nline two\n" {
		t.Errorf("stdin messages: %q", msgs)
	}
}

func TestCheckLeavingBackgroundProcessDoesNotHang(t *testing.T) {
	l := newLoop(t, "bg")
	l.WriteFile("PROMPT.md", "work")
	start := time.Now()
	// The check passes at once but leaves a child holding its output
	// open; and one escapes its process group entirely.
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3", "--check-timeout", "20",
		"--check", "sleep 30 & exit 0", "--check", "setsid sleep 30 & exit 0"},
		l.agent("--script", "print <promise>COMPLETE</promise>;quiet")...)
	if r := l.Run("ralph", "wait", "bg", "--timeout", "25"); r.Code != 0 || l.str("exit_reason") != "complete" {
		t.Fatalf("%s %v\n%s", r, l.state(), l.RalphLog("bg"))
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("passing checks held the loop for %v", el)
	}
}

// A loop that reaches its cap while its checks reject the agent's
// completion has not completed: exit 4, and wait and status say so. So
// has any cap with --fail-on-cap; a plain cap stays exit 0.
func TestCapReachedNotComplete(t *testing.T) {
	l := newLoop(t, "capchk")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--check", "echo FAIL; exit 1"},
		l.agent("--script", "print <promise>COMPLETE</promise>;quiet")...)
	r := l.Run("ralph", "wait", "capchk", "--timeout", "30")
	want := "capchk: max_iterations after 2 iterations: cap reached, not complete: the last completion was rejected (iteration 2: check failed: echo FAIL; exit 1 (exit 1))\n"
	if r.Code != 4 || r.Stdout != want {
		t.Fatalf("wait: %s\n%s", r, l.RalphLog("capchk"))
	}
	st := l.MustRun("ralph", "status", "capchk")
	if !strings.Contains(st.Stdout, "\nExit reason: max_iterations\n") || !strings.Contains(st.Stdout, "\nExit code: 4\n") ||
		!strings.Contains(st.Stdout, "\nDetail: cap reached, not complete: ") {
		t.Errorf("status: %s", st.Stdout)
	}
	js := l.MustRun("ralph", "status", "capchk", "--format", "json")
	if !strings.Contains(js.Stdout, `"exit_code": 4`) || !strings.Contains(js.Stdout, `"cap_incomplete": true`) {
		t.Errorf("json: %s", js.Stdout)
	}

	// In the foreground too: the loop's own exit code and last words.
	f := newLoopIn(t, "capflag")
	f.WriteFile("PROMPT.md", "work")
	r = f.Run(append([]string{"ralph", "spawn", "--name", "capflag", "--no-worktree", "--foreground", "--restart-delay", "100ms",
		"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--fail-on-cap", "--"}, f.agent("--script", "print working;exit 0")...)...)
	if r.Code != 4 || !strings.Contains(r.Stdout, "[ralph] capflag: stopping loop after 1 iterations: cap reached, not complete (--fail-on-cap)\n") {
		t.Fatalf("--fail-on-cap --foreground: %s", r)
	}
	if r := f.Run("ralph", "wait", "capflag", "--timeout", "30"); r.Code != 4 ||
		r.Stdout != "capflag: max_iterations after 1 iterations: cap reached, not complete (--fail-on-cap)\n" {
		t.Fatalf("--fail-on-cap: %s", r)
	}

	p := newLoopIn(t, "capplain")
	p.WriteFile("PROMPT.md", "work")
	p.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1"},
		p.agent("--script", "print working;exit 0")...)
	if r := p.Run("ralph", "wait", "capplain", "--timeout", "30"); r.Code != 0 || r.Stdout != "capplain: max_iterations after 1 iterations\n" {
		t.Fatalf("plain cap: %s", r)
	}
}
