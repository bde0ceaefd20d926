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
			for {
				k, _ := f.ReadAt(buf, off)
				if k == 0 {
					break
				}
				w.Write(buf[:k])
				off += int64(k)
			}
			f.Close()
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
	defer f.Close()
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
	io.WriteString(w, strings.Join(lines, ""))
	return from + int64(len(data)), nil
}
