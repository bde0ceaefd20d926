package main

// Black-box tests of what a loop spawn checks before it creates anything:
// config.json, whose on_exit runs when the loop ends, and --notify's
// notifier.

import (
	"os"
	"path/filepath"
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
