package ralph

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// eventsTail bounds how much of the end of iterations.log is read for its
// last n lines: a line is a few hundred bytes, and the file grows with
// every iteration of a loop that may run for days.
const eventsTail = 4 << 20

// Events writes the last n lines (0: all) of the loop's iterations.log to
// w; with live it keeps writing new lines until ctx ends or the loop has
// ended. The file is read through state.OpenFile and never whole into
// memory.
func Events(ctx context.Context, rs *state.RalphStore, n int, live bool, w io.Writer) error {
	off, err := lastEvents(rs.LogPath(), n, w)
	if err != nil {
		return err
	}
	if !live {
		return nil
	}
	interval := worker.PollInterval(500 * time.Millisecond)
	buf := make([]byte, 32<<10)
	for {
		f, err := state.OpenFile(rs.LogPath(), os.O_RDONLY, 0)
		if err == nil {
			off, err = copyNew(f, off, buf, w)
			_ = f.Close() // read only: nothing to lose
			if err != nil {
				return err // no one reads any more (a closed pipe)
			}
		}
		if st, err := rs.Load(); err == nil && !st.Active() && !MonitorAlive(rs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// copyNew writes what f holds from off on to w, and returns where it
// ended.
func copyNew(f *os.File, off int64, buf []byte, w io.Writer) (int64, error) {
	for {
		k, _ := f.ReadAt(buf, off)
		if k == 0 {
			return off, nil
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return off, err
		}
		off += int64(k)
	}
}

// lastEvents writes the last n lines (0: all) of the event log at path to
// w and returns the offset its end had. A missing log has none.
func lastEvents(path string, n int, w io.Writer) (int64, error) {
	f, err := state.OpenFile(path, os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if n <= 0 {
		_, err := io.Copy(w, io.NewSectionReader(f, 0, size))
		return size, err
	}
	from := max(0, size-eventsTail)
	data, err := io.ReadAll(io.NewSectionReader(f, from, size-from))
	if err != nil {
		return 0, err
	}
	if from > 0 {
		// The read began inside a line: it is not one of the last n.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	_, err = io.WriteString(w, strings.Join(lines, ""))
	return from + int64(len(data)), err
}
