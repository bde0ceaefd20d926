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

// A swarm flag after the command goes to the command: spawn, spawn
// --ralph and ralph spawn say so (the loop would run with swarm's
// defaults), except for the agent's own options of the same name and
// anything after the command's own "--".
func TestSpawnWarnsOfSwarmFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("P.md", "work\n")
	one := "swarm: warning: --max-iterations after the command is passed to fakeagent, not read by swarm: put swarm's flags before the command (or before \"--\")\n"
	two := "swarm: warning: --max-iterations, --max-time after the command are passed to fakeagent, not read by swarm: put swarm's flags before the command (or before \"--\")\n"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ralph", "spawn", "--name", "a", "--no-worktree", "--prompt-file", prompt, "--no-run", "--", e.Agent, "--max-iterations", "3"}, one},
		{[]string{"spawn", "--name", "b", "--ralph", "--prompt-file", prompt, "--max-iterations", "2", "--no-run", e.Agent, "--max-iterations=3", "--max-time", "1h", "--max-iterations", "4"}, two},
		{[]string{"spawn", "--name", "c", "--tmux", "--", e.Agent, "--script", "quiet", "--max-iterations", "3"}, one},
		// After the command's own "--" a word is an argument, not a flag.
		{[]string{"spawn", "--name", "d", "--tmux", "--", e.Agent, "--script", "quiet", "--", "--max-iterations"}, ""},
	}
	for _, c := range cases {
		r := e.Run(c.args...)
		if r.Code != 0 || r.Stderr != c.want {
			t.Errorf("swarm %q:\n got %s\nwant stderr %q", c.args, r, c.want)
		}
	}
	// claude's own --agent and --worktree are claude's; the swarm flag
	// among them is warned about (before claude is found missing).
	r := e.Run("ralph", "spawn", "--name", "e", "--no-worktree", "--prompt-file", prompt, "--no-run", "--",
		"claude", "--agent", "reviewer", "--worktree", "--max-time", "2h", "--help")
	if want := "swarm: warning: --max-time after the command is passed to claude, not read by swarm: put swarm's flags before the command (or before \"--\")\n"; !strings.HasPrefix(r.Stderr, want) {
		t.Errorf("claude's own options:\n got %s\nwant stderr starting %q", r, want)
	}
}
