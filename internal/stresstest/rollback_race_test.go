package stresstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// gatedTmux writes a SWARM_TMUX shim that, for the tmux commands named,
// creates dir/<gate>.waiting and blocks until dir/<gate>.go exists, then
// runs the real tmux. It holds a swarm command at an exact point (after
// its snapshot of the state, before its tmux call) without any timing.
func gatedTmux(t *testing.T, gate string, commands ...string) (shim, dir string) {
	t.Helper()
	dir = t.TempDir()
	var cases []string
	for _, c := range commands {
		cases = append(cases, fmt.Sprintf(`*" %s "*`, c))
	}
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
%s)
	: > '%[2]s/%[3]s.waiting'
	while [ ! -e '%[2]s/%[3]s.go' ]; do sleep 0.01; done
	;;
esac
exec '%[4]s' "$@"
`, strings.Join(cases, "|"), dir, gate, real)
	shim = filepath.Join(dir, "tmux-"+gate)
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return shim, dir
}

// startWith starts swarm with extra environment, in its own process group.
func (w *world) startWith(extra []string, args ...string) (*exec.Cmd, *strings.Builder, *strings.Builder) {
	cmd := exec.Command(w.e.Swarm, args...)
	cmd.Dir = w.e.Dir
	cmd.Env = append(w.e.Env(), extra...)
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	return cmd, &out, &errb
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestListDuringSpawnKeepsTheWorktree: a swarm ls that reads the state
// while a --worktree spawn is under way, and looks at the spawning process
// only after that spawn has finished, must not take the finished spawn
// for a crashed one and "roll back" its worktree. The spawn is held just
// before it creates its window (its record is "starting" with its
// worktree made), ls is held just after reading the state, the spawn is
// let go to the end, then ls. Meanwhile another spawn must go through:
// the held one holds no lock.
func TestListDuringSpawnKeepsTheWorktree(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.initRepo()
	spawnShim, spawnDir := gatedTmux(t, "spawn", "new-window", "new-session")
	lsShim, lsDir := gatedTmux(t, "ls", "list-panes")

	sp, spOut, spErr := w.startWith([]string{"SWARM_TMUX=" + spawnShim},
		append([]string{"spawn", "--name", "wt", "--tmux", "--worktree", "--"}, w.agent()...)...)
	waitFile(t, filepath.Join(spawnDir, "spawn.waiting"))
	if recs := w.e.Workers(); len(recs) != 1 || recs[0]["status"] != "starting" || recs[0]["worktree"] == nil {
		t.Fatalf("spawn not held where expected: %v", recs)
	}
	// No lock is held across slow work: while this spawn waits in tmux,
	// another spawn (which writes the state three times) goes through.
	if r := w.run(append([]string{"spawn", "--name", "other", "--"}, w.agent()...)...); r.code != 0 {
		t.Errorf("a spawn while another waits in tmux: %s", r)
	}
	ls, _, lsErr := w.startWith([]string{"SWARM_TMUX=" + lsShim}, "ls", "--format", "json")
	waitFile(t, filepath.Join(lsDir, "ls.waiting"))
	os.WriteFile(filepath.Join(spawnDir, "spawn.go"), nil, 0o644)
	if err := sp.Wait(); err != nil {
		t.Fatalf("spawn: %v\n%s%s", err, spOut, spErr)
	}
	os.WriteFile(filepath.Join(lsDir, "ls.go"), nil, 0o644)
	if err := ls.Wait(); err != nil {
		t.Fatalf("ls: %v\n%s", err, lsErr)
	}

	if strings.Contains(lsErr.String(), "rolled back") || strings.Contains(lsErr.String(), "interrupted spawn") {
		t.Errorf("ls rolled back a spawn that finished: %s", lsErr)
	}
	for _, n := range []string{"wt", "other"} {
		if r := w.run("status", n); r.code != 0 {
			t.Errorf("worker %s stopped by a concurrent ls: %s", n, r)
		}
	}
	for _, p := range w.check(checkOptions{}) {
		t.Error(p)
	}
}

// TestListDuringSpawnKeepsTheWorkers: the same race at the last step of a
// spawn, between writing the window id or pid into the "starting" record
// and finishing it. No tmux call falls there, so the spawn's end is played
// by hand, exactly as Spawn's commit does it: the records of a running
// tmux worker and process worker are put back to "starting" under a live
// spawner (a sleep of the test's own), ls is held after reading the
// state, the records are finished ("running", spawner removed) and the
// spawner exits, then ls goes on. It must leave both workers running.
func TestListDuringSpawnKeepsTheWorkers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must(append([]string{"spawn", "--name", "tw", "--tmux", "--"}, w.agent()...)...)
	w.must(append([]string{"spawn", "--name", "pw", "--"}, w.agent()...)...)
	spawner, sp := startOwnSleep(t)
	w.editState(func(ws []map[string]any) {
		for _, r := range ws {
			r["status"] = "starting"
			r["metadata"].(map[string]any)["swarm_spawner"] = map[string]any{"pid": sp.pid, "start_ticks": sp.start}
		}
	})
	lsShim, lsDir := gatedTmux(t, "ls", "list-panes")
	ls, _, lsErr := w.startWith([]string{"SWARM_TMUX=" + lsShim}, "ls", "--format", "json")
	waitFile(t, filepath.Join(lsDir, "ls.waiting"))
	w.editState(func(ws []map[string]any) {
		for _, r := range ws {
			r["status"] = "running"
			delete(r["metadata"].(map[string]any), "swarm_spawner")
		}
	})
	spawner.Process.Kill()
	spawner.Wait()
	os.WriteFile(filepath.Join(lsDir, "ls.go"), nil, 0o644)
	if err := ls.Wait(); err != nil {
		t.Fatalf("ls: %v\n%s", err, lsErr)
	}

	if strings.Contains(lsErr.String(), "rolled back") {
		t.Errorf("ls rolled back spawns that finished: %s", lsErr)
	}
	for _, n := range []string{"tw", "pw"} {
		if r := w.run("status", n); r.code != 0 {
			t.Errorf("worker %s stopped by a concurrent ls: %s", n, r)
		}
	}
	for _, p := range w.check(checkOptions{}) {
		t.Error(p)
	}
}
