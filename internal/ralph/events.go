package ralph

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// Events writes the last n lines of the loop's iterations.log to w; with
// live it keeps writing new lines until ctx ends or the loop has ended.
func Events(ctx context.Context, rs *state.RalphStore, n int, live bool, w io.Writer) error {
	data, err := os.ReadFile(rs.LogPath())
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	io.WriteString(w, strings.Join(lines, ""))
	if !live {
		return nil
	}
	off := int64(len(data))
	interval := worker.PollInterval(500 * time.Millisecond)
	buf := make([]byte, 32<<10)
	for {
		f, err := os.Open(rs.LogPath())
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
