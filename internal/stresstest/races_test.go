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
