package main

// Black-box tests of what a loop spawn checks before it creates anything:
// config.json, whose on_exit runs when the loop ends, and --notify's
// notifier.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// A config.json that is not JSON, or holds a key swarm does not know, is
// an error at spawn (exit 1, with the fix), and nothing is created; not
// one line in monitor.log after the loop has ended.
func TestLoopSpawnChecksConfig(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("PROMPT.md", "work")
	config := filepath.Join(e.Home, "config.json")
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	const fix = `hint: fix it or remove it; it holds settings for every loop: {"on_exit": "CMD"}` + "\n"
	for _, c := range []struct {
		name, content, problem string
	}{
		{"unknown key", `{"onexit": "notify"}`, `unknown key "onexit" (the keys are: on_exit, notify, prices)`},
		{"bad JSON", `{"on_exit": "notify"`, `invalid JSON: unexpected EOF`},
		{"wrong type", `{"on_exit": ["notify"]}`, `"on_exit" must be a string`},
		{"bad notify target", `{"notify": ["desktop", "email:me"]}`, `unknown notification target 'email:me' (use desktop, webhook:URL or ntfy:URL)`},
	} {
		if err := os.WriteFile(config, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		want := "swarm: error: invalid " + config + ": " + c.problem + "\n" + fix
		for _, args := range [][]string{
			{"spawn", "--name", "r", "--ralph", "--prompt-file", prompt, "--max-iterations", "1", "--", e.Agent},
			{"ralph", "spawn", "--name", "r", "--prompt-file", prompt, "--no-worktree", "--", e.Agent},
		} {
			wkExpect(t, c.name+": "+args[0], e.Run(args...), 1, "", want)
		}
		if w := e.Workers(); len(w) != 0 {
			t.Errorf("%s: a spawn refused for config.json left records: %v", c.name, w)
		}
		if wkExists(filepath.Join(e.Home, "ralph", "r")) || wkServerRunning(e) {
			t.Errorf("%s: a spawn refused for config.json left loop state or a tmux server", c.name)
		}
	}
	if err := os.WriteFile(config, []byte(`{"on_exit": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wkExpect(t, "spawn with a good config", e.Run("spawn", "--name", "r", "--ralph", "--prompt-file", prompt,
		"--max-iterations", "1", "--no-run", "--", e.Agent), 0,
		"spawned r (tmux: "+wkSession(e)+":r) [ralph mode: iteration 1/1]\nnot started (--no-run); start it with: swarm ralph run r\n", "")
}

// --notify warns at spawn when there is no notify-send to notify with
// (the loop's monitor looks it up on the PATH it inherits), and says
// nothing when there is one.
func TestLoopSpawnNotifyWithoutNotifier(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("PROMPT.md", "work")
	bare := t.TempDir()
	withNotifier := t.TempDir()
	testenv.WriteExecutable(t, filepath.Join(withNotifier, "notify-send"), "#!/bin/sh\nexit 0\n")
	spawnWith := func(name, path, notify string) testenv.Result {
		t.Helper()
		// --no-run: nothing runs that needs the PATH but the check.
		e.Extra = []string{"PATH=" + path}
		defer func() { e.Extra = nil }()
		args := []string{"spawn", "--name", name, "--ralph", "--prompt-file", prompt, "--max-iterations", "1", "--no-run"}
		if notify != "" {
			args = append(args, notify)
		}
		return e.Run(append(args, "--", e.Agent)...)
	}
	spawn := func(name, path string) testenv.Result { return spawnWith(name, path, "--notify") }
	spawned := func(name string) string {
		return "spawned " + name + " (tmux: " + wkSession(e) + ":" + name + ") [ralph mode: iteration 1/1]\nnot started (--no-run); start it with: swarm ralph run " + name + "\n"
	}
	wkExpect(t, "spawn --notify without notify-send", spawn("quiet", bare), 0, spawned("quiet"),
		"swarm: warning: --notify: notify-send is not installed (not on PATH); the loop's end will only ring the bell in swarm top\n")
	wkExpect(t, "spawn --notify with notify-send", spawn("loud", withNotifier), 0, spawned("loud"), "")
	// A webhook needs no notify-send; desktop in config.json does.
	wkExpect(t, "spawn --notify=webhook:URL", spawnWith("hook", bare, "--notify=webhook:http://127.0.0.1:9/x"), 0, spawned("hook"), "")
	if err := os.WriteFile(filepath.Join(e.Home, "config.json"), []byte(`{"notify": ["desktop"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wkExpect(t, "desktop in config.json without notify-send", spawnWith("cfg", bare, ""), 0, spawned("cfg"),
		"swarm: warning: --notify: notify-send is not installed (not on PATH); the loop's end will only ring the bell in swarm top\n")
}

// Budgets (issue 18): --max-cost and --max-tokens are refused at spawn
// (exit 1, with the fix, nothing created) for an agent that reports no
// cost or no tokens, taken for one that does (Claude Code; Codex's tokens,
// and its cost with prices in config.json), and ralph set checks the
// same; a value that is no amount is a usage error.
func TestLoopSpawnBudgets(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("PROMPT.md", "work")
	spawn := func(name string, args ...string) testenv.Result {
		t.Helper()
		a := append([]string{"ralph", "spawn", "--name", name, "--prompt-file", prompt, "--no-worktree", "--no-run"}, args...)
		return e.Run(append(a, "--", e.Agent)...)
	}
	wkExpect(t, "no cost from the fake agent", spawn("r", "--max-cost", "5"), 1, "",
		"swarm: error: --max-cost needs an agent that reports what it spends; the generic profile reports no cost (docs/agents.md)\n"+
			"hint: use an agent that reports its cost (Claude Code), or drop --max-cost\n")
	wkExpect(t, "no tokens from aider", spawn("r", "--agent", "aider", "--max-tokens", "2M"), 1, "",
		"swarm: error: --max-tokens needs an agent that reports what it spends; the aider profile reports no tokens (docs/agents.md)\n"+
			"hint: use an agent that reports its tokens (Claude Code, Codex), or drop --max-tokens\n")
	r := spawn("r", "--agent", "codex", "--max-cost", "5")
	if r.Code != 1 || !strings.Contains(r.Stderr, `the codex profile reports no cost`) || !strings.Contains(r.Stderr, `{"prices": {"codex": {`) {
		t.Errorf("codex without prices: %s", r)
	}
	if w := e.Workers(); len(w) != 0 || wkExists(filepath.Join(e.Home, "ralph", "r")) {
		t.Errorf("a refused spawn left records or state: %v", w)
	}
	wkExpect(t, "bad amount", spawn("r", "--agent", "claude", "--max-cost", "lots"), 2, "",
		"swarm: error: invalid --max-cost 'lots' (use an amount of US dollars, e.g. 5 or 0.50) (see: swarm ralph spawn --help)\n")
	if r := spawn("claude", "--agent", "claude", "--max-cost", "$0.05", "--max-tokens", "500k"); r.Code != 0 {
		t.Fatalf("claude with budgets: %s", r)
	}
	if st := e.RalphState("claude"); st["max_cost"] != 0.05 || st["max_tokens"] != float64(500000) {
		t.Errorf("budgets in the state: %v %v", st["max_cost"], st["max_tokens"])
	}
	if r := spawn("codex", "--agent", "codex", "--max-tokens", "2000000"); r.Code != 0 {
		t.Errorf("codex with a token budget: %s", r)
	}
	os.WriteFile(filepath.Join(e.Home, "config.json"), []byte(`{"prices": {"codex": {"input": 1.25, "output": 10}}}`), 0o600)
	if r := spawn("codex2", "--agent", "codex", "--max-cost", "3"); r.Code != 0 {
		t.Errorf("codex with prices: %s", r)
	}
	wkExpect(t, "ralph set a cost budget", e.Run("ralph", "set", "claude", "--max-cost", "2.5"), 0,
		"set ralph loop claude: max iterations 50, inactivity timeout 180s, time budget none, cost budget $2.50, token budget 500000\n", "")
	if r := e.Run("ralph", "set", "codex", "--max-cost", "1"); r.Code != 0 {
		t.Errorf("ralph set codex with prices: %s", r)
	}
	os.Remove(filepath.Join(e.Home, "config.json"))
	if r := e.Run("ralph", "set", "codex", "--max-cost", "1"); r.Code != 1 || !strings.Contains(r.Stderr, "reports no cost") {
		t.Errorf("ralph set codex without prices: %s", r)
	}
	if !strings.Contains(e.RalphLog("claude"), "[SET] max_cost=$2.50") {
		t.Errorf("iterations.log:\n%s", e.RalphLog("claude"))
	}
}
