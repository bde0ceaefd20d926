package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// TestRestoreLeavesANoRunLoopNotStarted (issue 27, item 2): a loop made
// with --no-run is not lost, before or after a reboot (its tmux server
// killed): ls and ralph ls say it has not started, restore --all starts
// no monitor and runs no iteration for it (and names it only when asked
// for by name, with the command that starts it), its state stays one
// swarm.py reads, and swarm ralph run still starts it.
func TestRestoreLeavesANoRunLoopNotStarted(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.WriteFile("PROMPT.md", "work")
	e.MustRun("ralph", "spawn", "--name", "later", "--prompt-file", "PROMPT.md", "--max-iterations", "1", "--no-worktree", "--no-run",
		"--", e.Agent, "--script", "print <promise>COMPLETE</promise>;quiet")
	// Another worker, so that the tmux server a reboot takes holds one.
	e.MustRun("spawn", "--name", "other", "--tmux", "--", "sleep", "300")
	notStarted := func(when string) {
		t.Helper()
		if ls := e.MustRun("ls").Stdout; !strings.Contains(ls, "\nlater  stopped(not-started)  ") {
			t.Errorf("%s: ls:\n%s", when, ls)
		}
		for _, w := range wkLsJSON(t, e) {
			if w["name"] == "later" && (w["not_started"] != true || w["lost"] != nil) {
				t.Errorf("%s: ls --format json: %v", when, w)
			}
		}
		rls := e.MustRun("ralph", "ls").Stdout
		if lines := strings.Split(rls, "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], "later  not-started ") || strings.Fields(lines[1])[7] != "-" {
			t.Errorf("%s: ralph ls:\n%s", when, rls)
		}
		st := e.RalphState("later")
		if st["status"] != "running" || st["current_iteration"] != float64(0) || st["monitor_pid"] != float64(0) || st["iteration_active"] == true {
			t.Errorf("%s: the loop's state changed: %v", when, st)
		}
		if ralph.MonitorAlive(state.NewStore(e.Home, nil).Ralph("later")) {
			t.Errorf("%s: a monitor runs", when)
		}
		if log := e.RalphLog("later"); strings.Contains(log, "[START]") || strings.Contains(log, "[RESUME]") {
			t.Errorf("%s: iterations.log:\n%s", when, log)
		}
	}
	notStarted("after the spawn")

	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	wkExpect(t, "restore --all", e.Run("restore", "--all"), 0, "restored other (tmux: "+wkSession(e)+":other)\n", "")
	notStarted("after restore --all")
	wkExpect(t, "restore of the loop by name", e.Run("restore", "later"), 0, "later: nothing to restore (not lost)\n",
		"swarm: note: loop later has not started (spawned with --no-run): start it with: swarm ralph run later\n")
	notStarted("after restore later")

	// swarm.py's way of reading the state still reads it.
	if python, err := exec.LookPath("python3"); err == nil {
		expect := filepath.Join(t.TempDir(), "expect.json")
		data, _ := json.Marshal(map[string]any{"workers": map[string]any{"later": map[string]any{}, "other": map[string]any{}}, "ralph": map[string]any{"later": map[string]any{}}})
		if err := os.WriteFile(expect, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(python, filepath.Join("..", "..", "internal", "state", "testdata", "swarmpy_load.py"), e.Home, expect).CombinedOutput(); err != nil {
			t.Errorf("swarm.py's reader fails on the state: %v\n%s", err, out)
		}
	} else {
		t.Log("no python3: swarm.py's reader not run")
	}

	r := e.Run("ralph", "run", "later")
	if r.Code != 0 || e.RalphState("later")["exit_reason"] != "complete" || !strings.Contains(e.RalphLog("later"), "[START] iteration 1") {
		t.Fatalf("ralph run after the restore: %s\n%v\n%s", r, e.RalphState("later"), e.RalphLog("later"))
	}
}
