package main

// Tests of what the views and messages say about loops (issue 27, items
// 10-12): real loops of the fake agent in tmux. Helpers start with "vw".

import (
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// vwEnded runs a loop of the fake agent to its end: script is what each
// iteration's agent does.
func vwEnded(t *testing.T, e *testenv.Env, name, script string, extra ...string) {
	t.Helper()
	prompt := e.WriteFile(name+".md", "work\n")
	args := append([]string{"ralph", "spawn", "--name", name, "--no-worktree", "--prompt-file", prompt}, extra...)
	e.MustRun(append(args, "--", e.Agent, "--script", script)...)
	if r := e.Run("ralph", "wait", name, "--timeout", "60"); r.Code == 124 || r.Code == 125 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog(name))
	}
	e.Eventually("the monitor to exit", wkTimeout, func() bool { return !lcMonitorRuns(e, name) })
}

// peek of a loop's worker once the loop ended points at the loop's kept
// output, not at swarm respawn (which would start the agent alone).
func TestPeekOfEndedLoopHintsItsLogs(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	vwEnded(t, e, "pk", "print bye;exit 3", "--max-iterations", "2")
	wkExpect(t, "peek of the ended loop's worker", e.Run("peek", "pk"), 1, "",
		"swarm: error: worker 'pk' is not running\n"+
			"hint: its ralph loop ended (max_iterations); the agent's last output: swarm ralph logs pk --iteration 2\n")
	if r := e.Run("ralph", "logs", "pk", "--iteration", "2"); r.Code != 0 || !strings.Contains(r.Stdout, "bye") {
		t.Errorf("the hint's command: %s", r)
	}
}
