package worker

import (
	"sync"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
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

// refresher gathers the refreshes of KillAll's concurrent kills as
// windowKiller gathers their window kills: each was a tmux list-panes -a
// of the whole server (and a kill looked twice more at its pane), one
// process each. A refresh asked for while one runs is answered by the
// next call, which starts after it was asked: what it says is as fresh as
// a call of its own.
type refresher struct {
	m       *Manager
	mu      sync.Mutex
	queued  *refreshBatch
	running bool
}

// refreshBatch is the workers of one Refresh call and its answer.
type refreshBatch struct {
	workers []state.Worker
	live    []Live
	err     error
	done    chan struct{}
}

func newRefresher(m *Manager) *refresher { return &refresher{m: m} }

// refresh is m.Refresh of w alone, in a call shared with the kills under
// way.
func (r *refresher) refresh(w *state.Worker) (Live, error) {
	r.mu.Lock()
	b := r.queued
	if b == nil {
		b = &refreshBatch{done: make(chan struct{})}
		r.queued = b
	}
	i := len(b.workers)
	b.workers = append(b.workers, *w)
	if !r.running {
		r.running = true
		for b := r.queued; b != nil; b = r.queued {
			r.queued = nil
			r.mu.Unlock()
			b.live, b.err = r.m.Refresh(b.workers)
			close(b.done)
			r.mu.Lock()
		}
		r.running = false
	}
	r.mu.Unlock()
	<-b.done
	if b.err != nil {
		if len(b.workers) == 1 {
			return Live{}, b.err
		}
		// The call failed for one of the servers (a hung tmux): this
		// worker's server may answer. Looked at on its own, as before
		// the looks were shared.
		live, err := r.m.Refresh([]state.Worker{*w})
		if err != nil {
			return Live{}, err
		}
		return live[0], nil
	}
	return b.live[i], nil
}

// paneTarget is PaneTarget through r: the pane's pid from a refresh, its
// process identified, and the pane looked at again in a later refresh,
// still alive with that pid. Only for a window of one pane, as the
// listing gives the first pane's (PaneTarget asks for the window's
// current pane): ok is false with done false for others.
func (r *refresher) paneTarget(w *state.Worker, l Live) (t proc.Target, ok, done bool) {
	if l.Panes != 1 {
		return proc.Target{}, false, false
	}
	if l.PaneDead || l.PanePID <= 1 {
		return proc.Target{}, false, true
	}
	t, ok = proc.Identify(l.PanePID)
	if !ok {
		return proc.Target{}, false, true
	}
	again, err := r.refresh(w)
	if err != nil || again.WindowID != l.WindowID || again.PaneDead || again.PanePID != l.PanePID {
		return proc.Target{}, false, true
	}
	return t, true, true
}
