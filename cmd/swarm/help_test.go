package main

// Phrases the help must contain.

import (
	"strings"
	"testing"
)

// swarm.py's black-box tests look for these phrases in the help.
func TestSwarmPyHelpPhrases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args  []string
		wants []string
	}{
		{[]string{"ralph", "--help"}, []string{"Ralph Wiggum pattern", "context windows", "Prompt Design Principles",
			"ONE task per iteration", "Quick Reference", "swarm ralph init", "swarm send", "clean"}},
		{[]string{"ralph", "spawn", "--help"}, []string{"Examples:", "--prompt-file PROMPT.md", "--max-iterations",
			"Intervention:", "swarm send", "Monitoring:", "swarm attach", "swarm logs", "--no-worktree",
			"--heartbeat 4h", "--heartbeat-expire 24h", "Rate Limit Recovery"}},
		{[]string{"ralph", "init", "--help"}, []string{"PROMPT.md", "customize"}},
		{[]string{"ralph", "run", "--help"}, []string{"monitoring loop", "--no-run"}},
		{[]string{"ralph", "status", "--help"}, []string{"iteration"}},
		{[]string{"ralph", "list", "--help"}, []string{"--format json"}},
		{[]string{"heartbeat", "--help"}, []string{"heartbeat", "rate limits", "Quick Reference"}},
		{[]string{"heartbeat", "start", "--help"}, []string{"--interval", "--expire", "--message", "--force"}},
		{[]string{"heartbeat", "status", "--help"}, []string{"--format", "json"}},
		{[]string{"heartbeat", "ls", "--help"}, []string{"--format"}},
		{[]string{"init", "--help"}, []string{"--with-sandbox"}},
		{[]string{"spawn", "--help"}, []string{"--heartbeat", "--heartbeat-expire", "--heartbeat-message"}},
	}
	for _, c := range cases {
		r := ipRun(t, c.args...)
		if r.code != 0 {
			t.Errorf("swarm %q: exit %d", c.args, r.code)
		}
		for _, w := range c.wants {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("swarm %q lacks %q", c.args, w)
			}
		}
	}
	// ralph spawn's --tmux says it is there for consistency.
	r := ipRun(t, "ralph", "spawn", "--help")
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "--tmux ") && !strings.Contains(line, "consistency") {
			t.Errorf("ralph spawn --tmux usage: %q", line)
		}
	}
	// The heartbeat process's own command stays out of the help.
	if r := ipRun(t, "heartbeat", "--help"); strings.Contains(r.stdout, "\n  run ") {
		t.Errorf("heartbeat --help lists run:\n%s", r.stdout)
	}
}
