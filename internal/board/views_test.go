package board

import (
	"path/filepath"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
	"github.com/swarmtools/swarm/internal/worker"
)

// diffSource is the fake source whose diff fails with err.
type diffSource struct {
	*fakeSource
	err error
}

func (d diffSource) Diff(name string) (string, error) {
	d.record("diff " + name)
	return "", d.err
}

// d on a loop's row whose worker was cleaned says so, and what is left
// to look at, instead of "worker 'x' not found"; the board prints an
// error's hint as the commands do.
func TestDiffOfCleanedWorkerExplainsItself(t *testing.T) {
	dir := t.TempDir()
	m := worker.New(filepath.Join(dir, "home"), nil)
	srv := tmuxtest.New()
	m.TmuxFor = func(tmux.Server) worker.Tmux { return srv }
	if err := m.Store.Ralph("gone").Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "gone", MaxIterations: 5},
		LoopProgress: state.LoopProgress{Status: state.RalphStopped, CurrentIteration: 5, ExitReason: "max_iterations"}}); err != nil {
		t.Fatal(err)
	}
	_, err := (&ManagerSource{M: m}).Diff("gone")
	want := "no diff: worker 'gone' was cleaned, and its worktree went with its record"
	wantHint := "l shows the loop's events; a branch the worker had is kept in its repository (git log gone)"
	if err == nil || err.Error() != want || hint.Of(err) != wantHint {
		t.Fatalf("diff of a cleaned worker: %v (hint %q)\nwant %q (hint %q)", err, hint.Of(err), want, wantHint)
	}

	h := newHarness(t)
	h.m.opts.Source = diffSource{h.src, err}
	h.keys("d")
	h.viewHas("error: "+want, "hint: "+wantHint)
}
