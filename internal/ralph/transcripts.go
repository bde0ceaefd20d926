package ralph

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

// TranscriptBudget bounds all of a loop's kept iteration outputs: every
// iteration's transcript is kept (each capped by --max-log-size) until
// together they pass this, then the oldest go first. A night of 50
// iterations at a few MB each fits well within it.
const TranscriptBudget int64 = 1 << 30

// transcript is one kept iteration output.
type transcript struct {
	iter int
	path string
	size int64
}

// outputPath is where the agent's raw output of iteration iter is piped.
func outputPath(rs *state.RalphStore, iter int) string {
	return filepath.Join(rs.Dir, "output", fmt.Sprintf("iteration-%04d.log", iter))
}

// exitPath is where the wrapper records the exit status of iteration
// iter's agent.
func exitPath(rs *state.RalphStore, iter int) string {
	return filepath.Join(rs.Dir, "output", fmt.Sprintf("iteration-%04d.exit", iter))
}

// transcripts lists a loop's iteration outputs, oldest first.
func transcripts(rs *state.RalphStore) []transcript {
	dir := filepath.Join(rs.Dir, "output")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []transcript
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "iteration-")
		if !ok || !strings.HasSuffix(n, ".log") {
			continue
		}
		iter, err := strconv.Atoi(strings.TrimSuffix(n, ".log"))
		if err != nil {
			continue
		}
		var size int64
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		out = append(out, transcript{iter: iter, path: filepath.Join(dir, e.Name()), size: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].iter < out[j].iter })
	return out
}

// trimTranscripts removes the oldest transcripts (and their exit files)
// until the rest fit in budget, never the one of iteration keep.
func trimTranscripts(rs *state.RalphStore, budget int64, keep int) {
	all := transcripts(rs)
	var total int64
	for _, t := range all {
		total += t.size
	}
	for _, t := range all {
		if total <= budget || t.iter == keep {
			break
		}
		_ = os.Remove(t.path)               // best effort: one left is trimmed again after the next iteration
		_ = os.Remove(exitPath(rs, t.iter)) // best effort, as the transcript
		for _, p := range reportingFiles(rs, t.iter) {
			_ = os.Remove(p) // best effort, as the transcript
		}
		total -= t.size
	}
}

// Transcript writes iteration iter's agent output (the raw terminal
// stream, within the loop's log cap) to w.
func Transcript(rs *state.RalphStore, iter int, w io.Writer) error {
	st, err := rs.Load()
	if err != nil {
		return err
	}
	max := logMax(st)
	c, err := logcap.ReadCapped(outputPath(rs, iter), max)
	if os.IsNotExist(err) {
		return fmt.Errorf("no output kept for iteration %d of '%s' (kept: %s)", iter, rs.Name, keptRange(rs))
	}
	if err != nil {
		return err
	}
	_, err = w.Write(c.Bytes(max))
	return err
}

// TranscriptText writes iteration iter's agent output to w as the text
// a terminal showed (termtext.Render, at the size of swarm's windows):
// the lines that scrolled by, then the last screen, not the fragments of
// every redraw of a full-screen agent.
func TranscriptText(rs *state.RalphStore, iter int, w io.Writer) error {
	var raw bytes.Buffer
	if err := Transcript(rs, iter, &raw); err != nil {
		return err
	}
	_, err := w.Write(renderOutput(raw.Bytes()))
	return err
}

// renderOutput renders an agent's raw output at the size of the window
// it ran in (swarm's sessions are made that size; one a user resized
// renders at the size it was made).
func renderOutput(raw []byte) []byte {
	return termtext.Render(raw, worker.WindowWidth, worker.WindowHeight)
}

// outputTailBytes is how much of the end of an iteration's output
// OutputTail reads: enough for a screenful of lines, however many escape
// sequences they carry, without reading a 50 MiB log every refresh.
const outputTailBytes = 256 << 10

// OutputTail returns the last lines of the loop's last iteration output
// as plain text (termtext), and which iteration it is: the current
// iteration's, else the newest kept.
func OutputTail(rs *state.RalphStore, lines int) (int, string, error) {
	st, err := rs.Load()
	if err != nil {
		return 0, "", err
	}
	iter := st.CurrentIteration
	if _, err := os.Stat(outputPath(rs, iter)); err != nil {
		all := transcripts(rs)
		if len(all) == 0 {
			return 0, "", fmt.Errorf("no output kept for '%s'", rs.Name)
		}
		iter = all[len(all)-1].iter
	}
	limit := logMax(st)
	size, err := logcap.Size(outputPath(rs, iter), limit)
	if err != nil {
		return 0, "", err
	}
	r := logcap.NewReader(outputPath(rs, iter), limit)
	from := max(0, size-outputTailBytes)
	r.SetOffset(from)
	data, err := r.ReadNew()
	if err != nil {
		return 0, "", err
	}
	if from > 0 {
		// Read from the middle of a line: start at the next one.
		_, data, _ = bytes.Cut(data, []byte{'\n'})
	}
	text := strings.TrimRight(string(renderOutput(data)), "\n")
	all := strings.Split(text, "\n")
	return iter, strings.Join(all[max(0, len(all)-lines):], "\n"), nil
}

// keptRange says which iterations' outputs are kept ("3-12", "none").
func keptRange(rs *state.RalphStore) string {
	all := transcripts(rs)
	switch len(all) {
	case 0:
		return "none"
	case 1:
		return strconv.Itoa(all[0].iter)
	}
	return fmt.Sprintf("%d-%d", all[0].iter, all[len(all)-1].iter)
}

// FollowAgent writes the current iteration's agent output to w as it
// comes, moving on to the next iteration's when it starts, until ctx ends
// or the loop has ended.
func FollowAgent(ctx context.Context, rs *state.RalphStore, w io.Writer) error {
	st, err := rs.Load()
	if err != nil {
		return err
	}
	iter, max := st.CurrentIteration, logMax(st)
	r := logcap.NewReader(outputPath(rs, iter), max)
	interval := worker.PollInterval(followPoll)
	for {
		if data, _ := r.ReadNew(); len(data) > 0 {
			if _, err := w.Write(data); err != nil {
				return err // no one reads any more (a closed pipe)
			}
		}
		st, err := rs.Load()
		if err != nil {
			return err
		}
		if st.CurrentIteration != iter {
			iter = st.CurrentIteration
			fmt.Fprintf(w, "\n--- [swarm] iteration %d ---\n", iter)
			r = logcap.NewReader(outputPath(rs, iter), max)
			continue
		}
		if !st.Active() && !MonitorAlive(rs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// followPoll paces ralph logs --agent.
const followPoll = 500 * time.Millisecond
