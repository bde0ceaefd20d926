package worker

import (
	"sync"

	"github.com/swarmtools/swarm/internal/tmux"
)

// windowKiller gathers the window kills of KillAll's concurrent kills:
// each kill-window is one tmux call under the state root's windows lock
// (tmux.Client.KillWindow), so one after another they were most of kill
// --all's time (60 loops: some 4.5 s of calls, each waiting up to 2 s
// for the lock). The first kill of a server runs its window's kill at
// once; the kills that come meanwhile wait and go together in the next
// call (tmux.Client.KillWindows: one call, one hold of the lock).
type windowKiller struct {
	mu      sync.Mutex
	queued  map[tmux.Server]*windowBatch // the batch taking kills, per server
	running map[tmux.Server]bool         // a kill runs on the server
}

// windowBatch is the window kills of one call.
type windowBatch struct {
	tc   Tmux
	ids  []string
	errs []error
	done chan struct{}
}

// multiKiller is a tmux client that kills many windows in one call.
type multiKiller interface {
	KillWindows(targets []string) []error
}

func newWindowKiller() *windowKiller {
	return &windowKiller{queued: map[tmux.Server]*windowBatch{}, running: map[tmux.Server]bool{}}
}

// kill removes window id of server (through tc, the server's client) as
// tc.KillWindow does, and returns its error.
func (k *windowKiller) kill(server tmux.Server, tc Tmux, id string) error {
	if _, ok := tc.(multiKiller); !ok {
		return tc.KillWindow(id)
	}
	k.mu.Lock()
	b := k.queued[server]
	if b == nil {
		b = &windowBatch{tc: tc, done: make(chan struct{})}
		k.queued[server] = b
	}
	i := len(b.ids)
	b.ids = append(b.ids, id)
	if k.running[server] {
		k.mu.Unlock()
		<-b.done
		return b.errs[i]
	}
	// This kill runs the server's calls until none is queued: its own
	// batch first, then those queued meanwhile.
	k.running[server] = true
	mine := b
	for b != nil {
		delete(k.queued, server)
		k.mu.Unlock()
		b.errs = b.tc.(multiKiller).KillWindows(b.ids)
		close(b.done)
		k.mu.Lock()
		b = k.queued[server]
	}
	k.running[server] = false
	k.mu.Unlock()
	return mine.errs[i]
}
