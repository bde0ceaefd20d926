package ralph_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every iteration's output is kept: after 12 iterations, iteration 3's
// transcript is there, and --agent follows the output live.
func TestTranscriptsOfEveryIteration(t *testing.T) {
	l := newLoop(t, "tr")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "12"},
		l.agent("--script", "print output of iteration {n};exit 0")...)
	l.waitEnded(90 * time.Second)
	r := l.MustRun("ralph", "logs", "tr", "--iteration", "3")
	if !strings.Contains(r.Stdout, "output of iteration 3") || strings.Contains(r.Stdout, "output of iteration 4") {
		t.Fatalf("iteration 3: %q", r.Stdout)
	}
	if r := l.Run("ralph", "logs", "tr", "--iteration", "13"); r.Code != 1 || !strings.Contains(r.Stderr, "no output kept for iteration 13 of 'tr' (kept: 1-12)") {
		t.Fatalf("missing iteration: %s", r)
	}
	if r := l.MustRun("ralph", "logs", "tr", "--agent"); !strings.Contains(r.Stdout, "output of iteration 12") {
		t.Fatalf("--agent of an ended loop: %q", r.Stdout)
	}
}

// ralph set raises the cap of a live loop; the next decision uses it.
func TestRalphSetRaisesTheCapOfALiveLoop(t *testing.T) {
	l := newLoop(t, "set")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2"},
		l.agent("--script", "print busy;sleep 300ms;exit 0")...)
	r := l.MustRun("ralph", "set", "set", "--max-iterations", "4")
	if r.Stdout != "set ralph loop set: max iterations 4, inactivity timeout 60s, time budget none\n" {
		t.Fatalf("set: %q", r.Stdout)
	}
	l.waitEnded(60 * time.Second)
	if l.num("current_iteration") != 4 || l.str("exit_reason") != "max_iterations" || !strings.Contains(l.RalphLog("set"), "[SET] max_iterations=4") {
		t.Fatalf("state %v\n%s", l.state(), l.RalphLog("set"))
	}
	// An ended loop: its cap raised, resume carries on.
	if r := l.Run("ralph", "resume", "set"); r.Code != 1 || !strings.Contains(r.Stderr, "hint: swarm ralph set set --max-iterations 14") {
		t.Fatalf("resume at the cap: %s", r)
	}
	if r := l.Run("ralph", "set", "nope", "--max-iterations", "3"); r.Code != 1 || !strings.Contains(r.Stderr, "worker 'nope' not found") {
		t.Fatalf("set unknown: %s", r)
	}
}

// A rejected completion leaves its reason and the failing check's first
// lines in ralph status, text and JSON.
func TestStatusShowsTheRejectedCompletionsEvidence(t *testing.T) {
	l := newLoop(t, "ev")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--check", "echo FAIL: widget test; echo line2; exit 1"},
		l.agent("--script", "print <promise>COMPLETE</promise>;exit 0")...)
	l.waitEnded(60 * time.Second)
	r := l.MustRun("ralph", "status", "ev")
	for _, want := range []string{"Last rejected completion: iteration 2: check failed: echo FAIL", "Check output (first 2 lines):\n  FAIL: widget test\n  line2\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.Stdout)
		}
	}
	var js map[string]any
	json.Unmarshal([]byte(l.MustRun("ralph", "status", "ev", "--format", "json").Stdout), &js)
	if out, _ := js["last_check_output"].([]any); len(out) != 2 || out[0] != "FAIL: widget test" {
		t.Errorf("json last_check_output: %v", js["last_check_output"])
	}
}

// Texts and files swarm.py users rely on: a --no-run loop is "not
// started"; clean keeps ralph state until ralph clean; ralph logs of an
// unknown loop; ralph stop takes kill's worktree flags; a typo in a
// subcommand is a usage error.
func TestLoopTextsAndFiles(t *testing.T) {
	l := newLoop(t, "nr")
	l.WriteFile("PROMPT.md", "work")
	l.MustRun("ralph", "spawn", "--name", "nr", "--prompt-file", "PROMPT.md", "--no-worktree", "--no-run", "--ready-wait", "--", l.Agent)
	if r := l.MustRun("ralph", "status", "nr"); !strings.Contains(r.Stdout, "Status: not started (start it with: swarm ralph run nr)") || strings.Contains(r.Stdout, "dead") {
		t.Errorf("status of a --no-run loop:\n%s", r.Stdout)
	}
	if r := l.MustRun("ralph", "ls"); !strings.Contains(r.Stdout, "not-started") || !strings.HasPrefix(r.Stdout, "NAME  RALPH_STATUS  WORKER_STATUS  ITERATION  FAILURES  ELAPSED") {
		t.Errorf("ralph ls:\n%s", r.Stdout)
	}
	l.MustRun("clean", "nr")
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "nr", "state.json")); err != nil {
		t.Errorf("clean removed the ralph state: %v", err)
	}
	l.MustRun("ralph", "clean", "nr")
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "nr")); !os.IsNotExist(err) {
		t.Errorf("ralph clean kept the state: %v", err)
	}
	if r := l.Run("ralph", "logs", "ghost"); r.Code != 1 || !strings.HasPrefix(r.Stderr, "swarm: error: no ralph state found for worker 'ghost'\n") {
		t.Errorf("logs of unknown: %s", r)
	}
	if r := l.Run("ralph", "stop", "ghost", "--rm-worktree", "--force-dirty"); r.Code != 1 || !strings.Contains(r.Stderr, "worker 'ghost' not found") {
		t.Errorf("stop flags: %s", r)
	}
	for _, args := range [][]string{{"ralph", "stauts", "x"}, {"ralph"}, {"ralph", "bogus"}} {
		if r := l.Run(args...); r.Code != 2 {
			t.Errorf("%v: %s", args, r)
		}
	}
	if r := l.Run("ralph", "stauts", "x"); !strings.Contains(r.Stderr, `unknown command "stauts" for "swarm ralph"`) || !strings.Contains(r.Stderr, "status") {
		t.Errorf("typo: %s", r)
	}
}

// A loop's end runs the global hook (config.json's on_exit) once, with the
// outcome in its environment, and with --notify a desktop notification
// (notify-send, here a stand-in on PATH).
func TestLoopEndRunsTheGlobalHookAndNotifies(t *testing.T) {
	l := newLoop(t, "hook")
	l.WriteFile("PROMPT.md", "work")
	hookOut := filepath.Join(l.Dir, "..", "hook.out")
	notified := filepath.Join(l.Dir, "..", "notified")
	cfg := `{"on_exit": "echo \"$SWARM_WORKER $SWARM_EXIT_REASON $SWARM_EXIT_CODE $SWARM_ITERATIONS\" >> ` + hookOut + `"}`
	os.MkdirAll(l.Home, 0o700)
	if err := os.WriteFile(filepath.Join(l.Home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(l.WriteExecutable("../bin/notify-send", "#!/bin/sh\nprintf '%s|' \"$@\" >> "+notified+"\n"))
	l.Extra = append(l.Extra, "PATH="+bin+":"+os.Getenv("PATH"))
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--notify"}, l.agent("--script", "exit 0")...)
	l.waitEnded(30 * time.Second)
	l.Eventually("the hook ran", 10*time.Second, func() bool {
		data, _ := os.ReadFile(hookOut)
		return len(data) > 0
	})
	data, _ := os.ReadFile(hookOut)
	if string(data) != "hook max_iterations 0 1\n" {
		t.Fatalf("hook output %q", data)
	}
	l.Eventually("the notification", 10*time.Second, func() bool {
		n, _ := os.ReadFile(notified)
		return strings.HasPrefix(string(n), "swarm: hook max_iterations (exit 0)|after 1 iteration(s)")
	})
}

// ralph ls and ralph status compute a loop's figures the same way: for an
// ended loop their JSON agrees exactly, for a running one on everything
// that does not move with the clock.
func TestListAndStatusAgreeOnTheFigures(t *testing.T) {
	l := newLoop(t, "agree")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"},
		l.agent("--iter", "1=print one;sleep 200ms;exit 0", "--iter", "2=print two;sleep 400ms;exit 1", "--script", "print busy;sleep 3s;exit 0")...)
	computed := []string{"avg_iteration_seconds", "elapsed_seconds", "eta_seconds", "quiet_seconds", "monitor", "monitor_alive",
		"worker_status", "exit_code", "last_iteration_result", "iteration_durations", "current_iteration", "total_failures", "status"}
	read := func() (list, status map[string]any) {
		var all []map[string]any
		if err := json.Unmarshal([]byte(l.MustRun("ralph", "ls", "--format", "json").Stdout), &all); err != nil || len(all) != 1 {
			t.Fatalf("ralph ls json: %v %v", err, all)
		}
		if err := json.Unmarshal([]byte(l.MustRun("ralph", "status", "agree", "--format", "json").Stdout), &status); err != nil {
			t.Fatal(err)
		}
		return all[0], status
	}
	l.Eventually("iteration 3 to run", 60*time.Second, func() bool { return l.num("current_iteration") == 3 && l.str("status") == "running" })
	list, status := read()
	for _, k := range computed {
		switch k {
		case "elapsed_seconds", "quiet_seconds", "eta_seconds":
			a, _ := list[k].(float64)
			b, _ := status[k].(float64)
			if d := a - b; d > 2 || d < -2 {
				t.Errorf("running: %s: ls %v, status %v", k, list[k], status[k])
			}
		default:
			if !reflect.DeepEqual(list[k], status[k]) {
				t.Errorf("running: %s: ls %v, status %v", k, list[k], status[k])
			}
		}
	}
	l.waitEnded(60 * time.Second)
	list, status = read()
	if !reflect.DeepEqual(list, status) {
		for k := range status {
			if !reflect.DeepEqual(list[k], status[k]) {
				t.Errorf("ended: %s: ls %v, status %v", k, list[k], status[k])
			}
		}
	}
	if status["avg_iteration_seconds"] == nil || status["total_failures"] != 1.0 {
		t.Fatalf("figures: %v", status)
	}
}
