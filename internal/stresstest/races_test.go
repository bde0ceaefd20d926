package stresstest

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// together runs every command at once (released by one gate) and returns
// their results in order.
func (w *world) together(cmds ...[]string) []result {
	out := make([]result, len(cmds))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i] = w.run(args...)
		}()
	}
	close(gate)
	wg.Wait()
	return out
}

// times returns n copies of args.
func times(n int, args ...string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = args
	}
	return out
}

// windowCount is the number of windows on the env's tmux server.
func (w *world) windowCount() int {
	w.t.Helper()
	ps, err := w.panes()
	if err != nil {
		w.t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, p := range ps {
		ids[p.windowID] = true
	}
	return len(ids)
}

// oneWinner checks that exactly one of results succeeded and every other
// failed with exit 1 and the error busy matches (issue 16).
func oneWinner(t *testing.T, results []result, busy *regexp.Regexp) {
	t.Helper()
	wins := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			wins++
		case r.code != 1 || !busy.MatchString(r.stderr) || r.stdout != "":
			t.Errorf("a losing command must fail clearly (exit 1, %s): %s", busy, r)
		}
		if strings.Contains(r.stderr, "pid 0") {
			t.Errorf("pid 0 in a message: %s", r)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d commands succeeded, want exactly 1", wins, len(results))
		for _, r := range results {
			t.Logf("%s", r)
		}
	}
}

// TestConcurrentRespawnsOneWins (issue 16, item 9): ten respawns of one
// tmux worker at once. One wins; the others fail at once, saying another
// command is respawning it, and change nothing. Afterwards there is
// exactly one window and one agent, every one accounted for, and kill
// --all leaves none. The agent ignores SIGTERM, so the winner spends the
// kill grace (5 s) stopping it: every other respawn meets it under way.
func TestConcurrentRespawnsOneWins(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real tmux and processes")
	}
	w := newWorld(t)
	agent := []string{w.e.Agent, "--input", "none", "--script", "ignore-term;print armed;quiet", w.marker}
	w.must(append([]string{"spawn", "--name", "rw", "--tmux", "--"}, agent...)...)
	w.e.Eventually("the agent to ignore SIGTERM", 20*time.Second, func() bool {
		return strings.Contains(w.e.Screen("rw"), "armed")
	})

	results := w.together(times(10, "respawn", "rw")...)
	oneWinner(t, results, regexp.MustCompile(`^swarm: error: worker 'rw' is being respawned by another command \(pid [1-9][0-9]*\)\nhint: `))

	if fs := w.check(checkOptions{}); len(fs) > 0 {
		t.Errorf("after the respawns: %q", fs)
	}
	if n := w.windowCount(); n != 1 {
		t.Errorf("%d windows after the respawns, want 1", n)
	}
	w.e.Eventually("one agent", 20*time.Second, func() bool { return len(w.markedAgents(processes())) == 1 })
	for _, rec := range w.e.Workers() {
		if md, _ := rec["metadata"].(map[string]any); md["swarm_respawner"] != nil {
			t.Errorf("the respawn claim outlived the respawn: %v", md)
		}
	}

	w.must("kill", "--all")
	w.e.Eventually("no agent after kill --all", 20*time.Second, func() bool { return len(w.markedAgents(processes())) == 0 })
	if n := w.windowCount(); n != 0 {
		t.Errorf("%d windows after kill --all, want 0", n)
	}
}

// TestConcurrentRalphReplacesOneWins (issue 16, item 13): eight `ralph
// spawn --replace` of one loop at once. One wins; the others fail at once
// (another ralph spawn of the name is under way), and a loop remains with
// exactly one live monitor, whose agent is the only one. The old loop's
// agent ignores SIGTERM and SIGHUP, so the winner's replace takes the kill
// grace (5 s): every other spawn meets it under way.
func TestConcurrentRalphReplacesOneWins(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real tmux and processes")
	}
	w := newWorld(t)
	prompt := w.e.WriteFile("../PROMPT.md", "work")
	spawn := func(agent ...string) []string {
		return append([]string{"ralph", "spawn", "--name", "rl", "--prompt-file", prompt, "--no-worktree", "--replace",
			"--max-iterations", "5", "--inactivity-timeout", "120", "--"}, agent...)
	}
	// The old agent ignores SIGTERM and SIGHUP (which tmux sends when it
	// removes the window) and reads no terminal (it would end when the
	// window goes): only the SIGKILL after the kill grace stops it.
	w.must(spawn("sh", "-c", `trap "" HUP; exec "$0" "$@"`, w.e.Agent, "--input", "none", "--script", "ignore-term;print armed;quiet", w.marker)...)
	w.e.Eventually("the old agent to be up", 20*time.Second, func() bool {
		return strings.Contains(w.e.Screen("rl"), "armed")
	})

	results := w.together(times(8, spawn(w.e.Agent, "--script", "print new;quiet", w.marker)...)...)
	oneWinner(t, results, regexp.MustCompile(`^swarm: error: another ralph spawn of 'rl' is under way\nhint: `))

	w.e.Eventually("one monitor, recorded", 20*time.Second, func() bool {
		ms := w.monitors("rl")
		return len(ms) == 1 && ms[0].pid == w.ralphNum("rl", "monitor_pid")
	})
	if st := w.e.RalphState("rl"); st["status"] != "running" {
		t.Errorf("loop state after the replaces: %v", st)
	}
	// (The loop's wrapper shell carries the agent's arguments too.)
	w.e.Eventually("one agent, the new loop's", 20*time.Second, func() bool {
		var as []procInfo
		for _, p := range w.markedAgents(processes()) {
			if p.exe == w.e.Agent {
				as = append(as, p)
			}
		}
		return len(as) == 1 && as[0].carries("print new;quiet")
	})
	if fs := w.check(checkOptions{}); len(fs) > 0 {
		t.Errorf("after the replaces: %q", fs)
	}

	w.must("kill", "rl")
	w.e.Eventually("no monitor after kill", 20*time.Second, func() bool { return len(w.monitors("rl")) == 0 })
	w.e.Eventually("no agent after kill", 20*time.Second, func() bool { return len(w.markedAgents(processes())) == 0 })
}
