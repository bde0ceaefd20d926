package ralph

import (
	"fmt"
	"os"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// NoWindowHint is the fix to print when a command that reads a worker's
// window (peek) finds none and the worker is a loop's: swarm respawn
// would start the agent without its loop, so the hint says where the
// loop keeps what its agent showed. ok is false for a worker that has no
// loop (or whose loop state cannot be read): the caller's own hint holds.
func NoWindowHint(m *worker.Manager, name string) (hint string, ok bool) {
	rs := m.Store.Ralph(name)
	if rs.Err() != nil || !rs.Exists() {
		return "", false
	}
	st, err := rs.Load()
	if err != nil {
		return "", false
	}
	if st.Active() {
		// Between two iterations (the next agent starts in a moment), or
		// lost (no monitor): ralph status says which.
		return fmt.Sprintf("it runs a ralph loop, between iterations or stopped: swarm ralph status %s", name), true
	}
	iter := st.CurrentIteration
	if _, err := os.Stat(outputPath(rs, iter)); err != nil {
		all := transcripts(rs)
		if len(all) == 0 {
			return fmt.Sprintf("its ralph loop ended (%s); its events: swarm ralph logs %s", reasonOf(st.ExitReason), name), true
		}
		iter = all[len(all)-1].iter
	}
	return fmt.Sprintf("its ralph loop ended (%s); the agent's last output: swarm ralph logs %s --iteration %d",
		reasonOf(st.ExitReason), name, iter), true
}

// reasonOf names how a loop ended, for messages.
func reasonOf(r state.ExitReason) string {
	if r == "" {
		return "no reason recorded"
	}
	return string(r)
}
