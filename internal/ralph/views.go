package ralph

import (
	"fmt"
	"os"
	"strings"

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
	if NotStarted(st) && !MonitorAlive(rs) {
		// Made with --no-run: no agent has run yet.
		return fmt.Sprintf("its ralph loop has not started (spawned with --no-run): swarm ralph run %s", name), true
	}
	if st.Active() {
		// Between two iterations (the next agent starts in a moment), or
		// paused: ralph status says which (a lost one is the caller's).
		return fmt.Sprintf("its ralph loop has not ended (between iterations, paused): swarm ralph status %s", name), true
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

// lastWords is the last n non-blank lines of the agent's output in the
// loop's last kept iteration, and that iteration: what a failed loop's
// agent said last, its window gone. (0, nil) when no output is kept.
func lastWords(rs *state.RalphStore, n int) (int, []string) {
	iter, text, err := OutputTail(rs, outputTailLines)
	if err != nil {
		return 0, nil
	}
	var words []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			words = append(words, strings.TrimRight(l, " "))
		}
	}
	if len(words) == 0 {
		return 0, nil
	}
	return iter, words[max(0, len(words)-n):]
}

// outputTailLines is how many of an output's last lines lastWords looks
// through for its non-blank ones: a screen or two.
const outputTailLines = 200
