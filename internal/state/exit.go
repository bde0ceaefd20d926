package state

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
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
	defer f.Close()
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
