package board

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
	"github.com/swarmtools/swarm/internal/worker"
)

// A snapshot of three tmux workers and two loops (one without a worker)
// runs tmux once: Manager.List and ralph.DescribeLoops share one listing.
func TestSnapshotListsTmuxOncePerRefresh(t *testing.T) {
	dir := t.TempDir()
	srv := tmuxtest.New()
	m := worker.New(filepath.Join(dir, "home"), nil)
	m.TmuxFor = func(tmux.Server) worker.Tmux { return srv }
	for _, n := range []string{"a", "b", "c"} {
		if _, err := m.Spawn(worker.SpawnOptions{Name: n, Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b", "gone"} {
		st := &state.Ralph{LoopConfig: state.LoopConfig{WorkerName: n, MaxIterations: 5},
			LoopProgress: state.LoopProgress{Status: state.RalphRunning, CurrentIteration: 1}}
		if err := m.Store.Ralph(n).Create(st); err != nil {
			t.Fatal(err)
		}
	}
	src := &ManagerSource{M: m}
	for refresh := 1; refresh <= 2; refresh++ {
		before := srv.Calls["ListPanes"]
		snap, err := src.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.Calls["ListPanes"] - before; got != 1 {
			t.Errorf("refresh %d: %d tmux listings, want 1", refresh, got)
		}
		got := names(Prepare(snap))
		// b's and gone's monitors are dead: problems first.
		if want := []string{"b", "gone", "a", "c"}; !reflect.DeepEqual(got, want) {
			t.Errorf("refresh %d: rows %q, want %q", refresh, got, want)
		}
	}
}

func TestActionsReportWhatTheyDid(t *testing.T) {
	dir := t.TempDir()
	srv := tmuxtest.New()
	m := worker.New(filepath.Join(dir, "home"), nil)
	m.TmuxFor = func(tmux.Server) worker.Tmux { return srv }
	if _, err := m.Spawn(worker.SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	if err := m.Store.Ralph("w").Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "w", MaxIterations: 5},
		LoopProgress: state.LoopProgress{Status: state.RalphRunning}}); err != nil {
		t.Fatal(err)
	}
	src := &ManagerSource{M: m}
	if text, err := src.Pause("w"); text != "paused ralph loop for w" || err != nil {
		t.Errorf("pause: %q, %v", text, err)
	}
	if text, err := src.Pause("w"); text != "warning: worker 'w' is already paused" || err != nil {
		t.Errorf("pause again: %q, %v", text, err)
	}
	if _, err := src.Pause("nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("pause of an unknown worker: %v", err)
	}
	if text, err := src.Kill("w"); text != "killed w" || err != nil {
		t.Errorf("kill: %q, %v", text, err)
	}
	if l, err := m.Status("w"); err != nil || l.Running() {
		t.Errorf("after kill: %+v, %v", l, err)
	}
	events, err := src.Events("w", 10)
	if err != nil || !strings.Contains(events, "[PAUSE] paused by user") {
		t.Errorf("events: %q, %v", events, err)
	}
	if _, err := src.Events("nope", 10); err == nil {
		t.Error("events of a loop without state: no error")
	}
	cmd := src.AttachCommand("w")
	if want := []string{"", "attach", "w"}; !reflect.DeepEqual(cmd.Args, want) ||
		!slices.Contains(cmd.Env, "SWARM_HOME="+m.Store.Root) {
		t.Errorf("attach command %q, env %q", cmd.Args, cmd.Env)
	}
}
