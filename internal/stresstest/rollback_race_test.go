package stresstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// tmuxGate holds swarm commands in a SWARM_TMUX shim (see gatedTmux).
type tmuxGate struct {
	t         *testing.T
	shim      string // the shim, for SWARM_TMUX
	dir, name string
}

// gatedTmux writes a SWARM_TMUX shim that, for the tmux commands named,
// creates dir/<gate>.waiting and blocks until dir/<gate>.go exists, then
// runs the real tmux. It holds a swarm command at an exact point (after
// its snapshot of the state, before its tmux call) without any timing.
// Should the test end first (its temp dir removed), the shim gives up.
func gatedTmux(t *testing.T, gate string, commands ...string) *tmuxGate {
	t.Helper()
	g := &tmuxGate{t: t, dir: t.TempDir(), name: gate}
	action := fmt.Sprintf(`	: > '%[1]s/%[2]s.waiting'
	while [ ! -e '%[1]s/%[2]s.go' ]; do
		[ -d '%[1]s' ] || exit 1
		sleep 0.01
	done`, g.dir, gate)
	g.shim = tmuxShim(t, g.dir, "tmux-"+gate, action, commands...)
	return g
}

// env is the environment entry that makes swarm use the shim.
func (g *tmuxGate) env() []string { return []string{"SWARM_TMUX=" + g.shim} }

// waitHeld waits until a command is held at the gate.
func (g *tmuxGate) waitHeld() {
	g.t.Helper()
	path := filepath.Join(g.dir, g.name+".waiting")
	testenv.Eventually(g.t, "a command held at the "+g.name+" gate", 20*time.Second, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// open lets the held commands go on.
func (g *tmuxGate) open() {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, g.name+".go"), nil, 0o644); err != nil {
		g.t.Fatalf("opening the %s gate: %v", g.name, err)
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
	spawnGate := gatedTmux(t, "spawn", "new-window", "new-session")
	lsGate := gatedTmux(t, "ls", "list-panes")

	sp, spOut, spErr := w.startWith(spawnGate.env(),
		append([]string{"spawn", "--name", "wt", "--tmux", "--worktree", "--"}, w.agent()...)...)
	spawnGate.waitHeld()
	if recs := w.e.Workers(); len(recs) != 1 || recs[0]["status"] != "starting" || recs[0]["worktree"] == nil {
		t.Fatalf("spawn not held where expected: %v", recs)
	}
	// No lock is held across slow work: while this spawn waits in tmux,
	// another spawn (which writes the state three times) goes through.
	if r := w.run(append([]string{"spawn", "--name", "other", "--"}, w.agent()...)...); r.code != 0 {
		t.Errorf("a spawn while another waits in tmux: %s", r)
	}
	ls, _, lsErr := w.startWith(lsGate.env(), "ls", "--format", "json")
	lsGate.waitHeld()
	spawnGate.open()
	if err := sp.Wait(); err != nil {
		t.Fatalf("spawn: %v\n%s%s", err, spOut, spErr)
	}
	lsGate.open()
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
	lsGate := gatedTmux(t, "ls", "list-panes")
	ls, _, lsErr := w.startWith(lsGate.env(), "ls", "--format", "json")
	lsGate.waitHeld()
	w.editState(func(ws []map[string]any) {
		for _, r := range ws {
			r["status"] = "running"
			delete(r["metadata"].(map[string]any), "swarm_spawner")
		}
	})
	spawner.Process.Kill()
	spawner.Wait()
	lsGate.open()
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
