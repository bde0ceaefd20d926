package main

// The name sources of completion (complete.go): workers from the registry,
// loops from their state directories, heartbeats from theirs. All of them
// only read, and a file that cannot be read offers nothing rather than an
// error (the shell has nowhere to show one).

import (
	"fmt"
	"strings"

	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
)

// workerFilter picks the workers a command can act on; root is the state
// root, for a filter that needs more than the record.
type workerFilter func(root string, w *state.Worker) bool

func anyWorker(string, *state.Worker) bool { return true }

func tmuxWorker(_ string, w *state.Worker) bool { return w.Tmux != nil }

// liveWorker: running, or its spawn under way.
func liveWorker(_ string, w *state.Worker) bool { return w.Status != state.StatusStopped }

func liveTmuxWorker(root string, w *state.Worker) bool {
	return tmuxWorker(root, w) && liveWorker(root, w)
}

// worktreeWorker: a worker in a worktree of its own (merge, diff).
func worktreeWorker(_ string, w *state.Worker) bool { return w.Worktree != nil }

// plainWorker: respawn refuses a ralph loop's worker.
func plainWorker(_ string, w *state.Worker) bool { return !w.IsRalph() }

// killableWorker: running, or a loop's worker between iterations (stopped,
// with its loop not ended), which kill --all kills too.
func killableWorker(root string, w *state.Worker) bool {
	if liveWorker(root, w) {
		return true
	}
	if !w.IsRalph() {
		return false
	}
	st, err := state.NewStore(root, nil).Ralph(w.Name).Load()
	return err == nil && st.Active()
}

// workers lists the registry's workers that keep picks.
func workers(keep workerFilter) nameSource {
	return func(root string) []candidate {
		reg, err := state.NewStore(root, nil).Load()
		if err != nil {
			return nil
		}
		var out []candidate
		for i := range reg.Workers {
			if w := &reg.Workers[i]; keep(root, w) {
				out = append(out, candidate{w.Name, workerDesc(w)})
			}
		}
		return out
	}
}

// workerDesc is "running, tmux" or "stopped, process, ralph loop".
func workerDesc(w *state.Worker) string {
	parts := []string{w.Status, "process"}
	if w.Tmux != nil {
		parts[1] = "tmux"
	}
	if w.IsRalph() {
		parts = append(parts, "ralph loop")
	}
	return strings.Join(parts, ", ")
}

func anyLoop(*state.Ralph) bool { return true }

// loops lists the loops whose state keep picks.
func loops(keep func(*state.Ralph) bool) nameSource {
	return func(root string) []candidate {
		s := state.NewStore(root, nil)
		names, err := s.RalphNames()
		if err != nil {
			return nil
		}
		var out []candidate
		for _, n := range names {
			st, err := s.Ralph(n).Load()
			if err != nil || !keep(st) {
				continue
			}
			out = append(out, candidate{n, fmt.Sprintf("%s, iteration %d/%d", st.Status, st.CurrentIteration, st.MaxIterations)})
		}
		return out
	}
}

func anyHeartbeat(*heartbeat.State) bool { return true }

func activeHeartbeat(st *heartbeat.State) bool { return st.Status == heartbeat.StatusActive }

// heartbeats lists the workers whose heartbeat keep picks.
func heartbeats(keep func(*heartbeat.State) bool) nameSource {
	return func(root string) []candidate {
		states, err := heartbeat.NewStore(root, nil).List()
		if err != nil {
			return nil
		}
		var out []candidate
		for i := range states {
			if st := &states[i]; keep(st) {
				out = append(out, candidate{st.WorkerName, fmt.Sprintf("%s, every %s", st.Status, heartbeat.FormatInterval(st.IntervalSeconds))})
			}
		}
		return out
	}
}

// tags lists the tags the registry's workers have.
func tags(root string) []candidate {
	reg, err := state.NewStore(root, nil).Load()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []candidate
	for _, w := range reg.Workers {
		for _, t := range w.Tags {
			if !seen[t] {
				seen[t] = true
				out = append(out, candidate{name: t})
			}
		}
	}
	return out
}

// hostNames lists the hosts of hosts.json, with their targets.
func hostNames(root string) []candidate {
	hosts, err := state.NewStore(root, nil).Hosts()
	if err != nil {
		return nil
	}
	out := make([]candidate, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, candidate{h.Name, termtext.Line(h.Target)})
	}
	return out
}
