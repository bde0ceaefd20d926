package worker

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// LogsOptions control logs.
type LogsOptions struct {
	History bool // include tmux scrollback
	Lines   int  // at most this many lines (default 1000)
}

// Logs returns a worker's output: the tmux pane (with scrollback when
// History is set), or a process worker's stdout log.
func (m *Manager) Logs(name string, o LogsOptions) (string, error) {
	if o.Lines <= 0 {
		o.Lines = 1000
	}
	l, err := m.Status(name)
	if err != nil {
		return "", err
	}
	if l.Tmux == nil {
		s, err := tailFile(m.stdoutLog(name), o.Lines)
		if os.IsNotExist(err) {
			return "", nil
		}
		return s, err
	}
	if l.WindowID == "" {
		return "", fmt.Errorf("worker '%s' %w", name, ErrNotRunning)
	}
	opt := tmux.CaptureOptions{}
	if o.History || l.PaneDead {
		// A dead pane's screen is in its history (tmux moves it there).
		opt.Start = fmt.Sprint(-o.Lines)
	}
	out, err := m.tmux(&l.Worker).Capture(l.WindowID, opt)
	if err != nil {
		return "", err
	}
	return lastLines(out, o.Lines), nil
}

// Follow writes a worker's output to w as it appears until ctx ends or
// the worker stops. For tmux workers it prints each line once the cursor
// has moved past it (so a line is printed complete, once); programs that
// redraw the screen in place show their final text. Process workers'
// logs are tailed.
func (m *Manager) Follow(ctx context.Context, name string, w io.Writer) error {
	l, err := m.Status(name)
	if err != nil {
		return err
	}
	interval := PollInterval(500 * time.Millisecond)
	if l.Tmux == nil {
		return m.followFile(ctx, m.stdoutLog(name), *l.PID, w, interval)
	}
	if l.WindowID == "" {
		return fmt.Errorf("worker '%s' %w", name, ErrNotRunning)
	}
	tc := m.tmux(&l.Worker)
	id := l.WindowID
	printed := -1 // absolute row (history+y) of the next row to print
	for {
		st, screen, err := tc.Poll(id)
		gone := err != nil
		if err != nil && !tmux.IsNotFound(err) {
			return err
		}
		if !gone {
			rows := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
			end := st.History + st.CursorY // rows before the cursor are complete
			if st.Dead {
				end = st.History + lastNonBlank(rows) + 1
			}
			if printed < 0 {
				// Start like tail -f: the lines already on screen.
				printed = st.History
			}
			if printed < st.History {
				hist, err := tc.Capture(id, tmux.CaptureOptions{Start: fmt.Sprint(printed - st.History), End: "-1"})
				if err == nil {
					fmt.Fprint(w, hist)
				}
				printed = st.History
			}
			for abs := printed; abs < end; abs++ {
				y := abs - st.History
				if y >= 0 && y < len(rows) {
					fmt.Fprintln(w, rows[y])
				}
			}
			if end > printed {
				printed = end
			}
			if st.Dead {
				return nil
			}
		} else {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func lastNonBlank(rows []string) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if strings.TrimSpace(rows[i]) != "" {
			return i
		}
	}
	return -1
}

func (m *Manager) followFile(ctx context.Context, path string, pid int, w io.Writer, interval time.Duration) error {
	f, err := state.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if s, err := tailFile(path, 10); err == nil {
		fmt.Fprint(w, s)
	}
	off, _ := f.Seek(0, io.SeekEnd)
	buf := make([]byte, 32<<10)
	for {
		n, _ := f.ReadAt(buf, off)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err // no one reads any more (a closed pipe)
			}
			off += int64(n)
			continue
		}
		if !procAlive(pid) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}
