package state

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcessExit is how a process worker's command ended, as the supervisor
// that waited for it recorded it (logs/N.exit). The pid and start ticks
// name the process it is about: a record whose identity is not the
// worker's (an earlier run of the name, respawned since) is not the
// worker's end.
type ProcessExit struct {
	PID        int   `json:"pid"`
	StartTicks int64 `json:"start_ticks"`
	// ExitCode is shell-style: the exit status, or 128+signal.
	ExitCode int       `json:"exit_code"`
	Ended    Timestamp `json:"ended"`
}

// maxExitFile bounds the read of an exit file: it holds a few numbers.
const maxExitFile = 4096

// ExitPath is where the supervisor of process worker name records its end.
func (s *Store) ExitPath(name string) string {
	return filepath.Join(s.LogsDir(), name+".exit")
}

// WriteProcessExit records e at path (ExitPath), atomically, 0600,
// unless the file holds the end of a process that started after e's: the
// supervisor of a worker stopped for a respawn may record its end after
// the new process has ended, and must not hide that end.
func WriteProcessExit(path string, e ProcessExit) error {
	if old, ok := readProcessExit(path); ok && old.PID != e.PID && old.StartTicks > e.StartTicks && e.StartTicks != 0 {
		return nil
	}
	data, err := EncodeJSON(e)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data)
}

// ProcessExit reads the recorded end of worker name's process; ok is
// false when there is none, or it cannot be read (a symlink, a file that
// is not regular or not an exit record).
func (s *Store) ProcessExit(name string) (ProcessExit, bool) {
	return readProcessExit(s.ExitPath(name))
}

// readProcessExit reads an exit record: a regular file (never through a
// symlink), of bounded size.
func readProcessExit(path string) (e ProcessExit, ok bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return e, false
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return e, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxExitFile))
	if err != nil || json.Unmarshal(data, &e) != nil || e.PID <= 0 || e.Ended.IsZero() {
		return ProcessExit{}, false
	}
	return e, true
}

// RemoveProcessExit removes worker name's exit record, if any.
func (s *Store) RemoveProcessExit(name string) error {
	err := os.Remove(s.ExitPath(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// WindowExit is how a tmux worker's command ended, as the shell the
// window runs it under recorded it (WindowExitPath): tmux 3.3 keeps a dead
// pane's status and time only now and then. Token is the window's
// (the worker's tmux_window_token), so an earlier window's end is never
// this one's; Ended is when the record was written.
type WindowExit struct {
	Token    string
	ExitCode int
	Ended    time.Time
	// Signal is the signal the window's shell itself got while the
	// command ran ("term": a stop, a shutdown), "" for none: the command
	// ended by itself.
	Signal string
}

// WindowExitPath is where the window of tmux worker name records how its
// command ended.
func (s *Store) WindowExitPath(name string) string {
	return filepath.Join(s.LogsDir(), name+".window-exit")
}

// PrepareWindowExit makes worker name's window exit record empty (0600,
// never through a link) before its window starts: the window's shell
// writes into it, and an earlier window's end is gone.
func (s *Store) PrepareWindowExit(name string) (string, error) {
	if err := MakeDir(s.Root, s.LogsDir()); err != nil {
		return "", err
	}
	path := s.WindowExitPath(name)
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, filePerm)
	if err != nil {
		return "", err
	}
	return path, f.Close()
}

// WindowExit reads worker name's window exit record ("TOKEN CODE", then
// the signal the shell got, if any); ok is false when there is none (the
// command runs, or ended unrecorded).
func (s *Store) WindowExit(name string) (e WindowExit, ok bool) {
	path := s.WindowExitPath(name)
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return e, false
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return e, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxExitFile))
	if err != nil {
		return e, false
	}
	words := strings.Fields(string(data))
	if len(words) < 2 || len(words) > 3 {
		return e, false
	}
	n, err := strconv.Atoi(words[1])
	if err != nil {
		return e, false
	}
	e = WindowExit{Token: words[0], ExitCode: n, Ended: fi.ModTime()}
	if len(words) == 3 {
		e.Signal = words[2]
	}
	return e, true
}

// RemoveWindowExit removes worker name's window exit record, if any.
func (s *Store) RemoveWindowExit(name string) error {
	err := os.Remove(s.WindowExitPath(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
