package ralph

import (
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

// A monitor's pollers attach their control clients under the state
// root's windows lock (tmux.Pollers.Exclusive is the manager's
// HoldWindows): no swarm command of the root kills a window meanwhile.
func TestEnginePollersHoldTheWindowsLock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	e := NewEngine(worker.New(root, nil), "loop", nil)
	p, ok := e.TmuxFor(tmux.Server{Name: "s"}).(*tmux.Poller)
	if !ok || p.Exclusive == nil {
		t.Fatalf("the engine's tmux client %T has no Exclusive", e.TmuxFor(tmux.Server{Name: "s"}))
	}
	release := p.Exclusive()
	defer release()
	if _, err := worker.New(root, nil).Store.LockWindows(50 * time.Millisecond); err == nil {
		t.Fatal("the windows lock could be taken while the poller held it")
	}
}
