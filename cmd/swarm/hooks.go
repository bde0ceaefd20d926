package main

import (
	"fmt"

	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// workerHooks are the hooks of every worker manager: ralph's, with the
// worker's heartbeat ended first on kill and clean. kill, ralph stop and
// ralph spawn --replace all stop a worker through Manager.Kill, so none of
// them leaves a heartbeat typing into a window that is gone (or into the
// replacement's). LoopActive and AfterKill are ralph's alone.
type workerHooks struct {
	*ralph.Hooks
	root string
	warn func(string)
}

var _ worker.Hooks = (*workerHooks)(nil)

func newWorkerHooks(root string, m *worker.Manager) *workerHooks {
	// m.Warn as it is at each warning: kill --all replaces it while its
	// kills run concurrently (one warning at a time).
	warn := func(msg string) {
		if m.Warn != nil {
			m.Warn(msg)
		}
	}
	return &workerHooks{Hooks: ralph.NewHooks(m), root: root, warn: warn}
}

// BeforeKill ends the heartbeat before the agent is stopped, so no beat
// lands in a dying pane, then marks a loop killed.
func (h *workerHooks) BeforeKill(w *state.Worker) error {
	h.stopHeartbeat(w.Name)
	return h.Hooks.BeforeKill(w)
}

// AfterClean ends a heartbeat that outlived its worker's kill (one started
// on a stopped worker, say). Its state file stays for heartbeat list, as a
// loop's ralph state does.
func (h *workerHooks) AfterClean(name string) {
	h.stopHeartbeat(name)
	h.Hooks.AfterClean(name)
}

// stopHeartbeat warns rather than fails: a heartbeat process that will not
// stop must not keep a worker alive, and it ends by itself once the
// worker's window is gone.
func (h *workerHooks) stopHeartbeat(name string) {
	if _, err := heartbeat.StopFor(h.root, name); err != nil && h.warn != nil {
		h.warn(fmt.Sprintf("cannot stop the heartbeat of '%s': %v", name, err))
	}
}
