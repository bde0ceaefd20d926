package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Worker status values.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
)

// Worker is one record of state.json, in the schema swarm.py writes.
type Worker struct {
	Name     string            `json:"name"`
	Status   string            `json:"status"`
	Cmd      []string          `json:"cmd"`
	Started  Timestamp         `json:"started"`
	Cwd      string            `json:"cwd"`
	Env      map[string]string `json:"env"`
	Tags     []string          `json:"tags"`
	Tmux     *TmuxInfo         `json:"tmux"`
	Worktree *WorktreeInfo     `json:"worktree"`
	PID      *int              `json:"pid"`
	Metadata map[string]any    `json:"metadata"`
}

// TmuxInfo locates a tmux worker: its session, window name and the tmux
// socket (-L name; empty for the default server).
type TmuxInfo struct {
	Session string     `json:"session"`
	Window  string     `json:"window"`
	Socket  NullString `json:"socket"`
}

// WorktreeInfo records the git worktree a worker runs in.
type WorktreeInfo struct {
	Path     string `json:"path"`
	Branch   string `json:"branch"`
	BaseRepo string `json:"base_repo"`
}

// NullString is a string stored as JSON null when empty, as swarm.py does.
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads null as "".
func (s *NullString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = NullString(v)
	return nil
}

// NullInt is an int stored as JSON null when zero: swarm.py tests such
// fields with "is not None", so 0 would mean a value of 0, not "unset".
type NullInt int

// MarshalJSON writes null for 0.
func (n NullInt) MarshalJSON() ([]byte, error) {
	if n == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(int(n))
}

// UnmarshalJSON reads null as 0.
func (n *NullInt) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = 0
		return nil
	}
	var v int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = NullInt(v)
	return nil
}

// IsRalph reports whether the worker runs a ralph loop.
func (w *Worker) IsRalph() bool {
	v, _ := w.Metadata["ralph"].(bool)
	return v
}

// Registry is the content of state.json.
type Registry struct {
	Workers []Worker `json:"workers"`
}

// Find returns the worker named name, or nil.
func (r *Registry) Find(name string) *Worker {
	for i := range r.Workers {
		if r.Workers[i].Name == name {
			return &r.Workers[i]
		}
	}
	return nil
}

// Remove deletes the worker named name and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	for i := range r.Workers {
		if r.Workers[i].Name == name {
			r.Workers = append(r.Workers[:i], r.Workers[i+1:]...)
			return true
		}
	}
	return false
}

// ErrNotFound is returned for a worker that has no record.
var ErrNotFound = errors.New("worker not found")

// Store is the worker registry under one state root.
type Store struct {
	Root string
	// Warn receives warnings such as a corrupt state file being reset.
	// Nil discards them.
	Warn func(msg string)

	notesOnce sync.Once
	notes     *notices
}

// NewStore returns the registry under root.
func NewStore(root string, warn func(string)) *Store {
	return &Store{Root: root, Warn: warn}
}

func (s *Store) statePath() string { return filepath.Join(s.Root, "state.json") }
func (s *Store) lockPath() string  { return filepath.Join(s.Root, "state.lock") }

// LogsDir is where process workers' stdout and stderr logs live.
func (s *Store) LogsDir() string { return filepath.Join(s.Root, "logs") }

func (s *Store) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
	}
}

// shared returns what this store and its RalphStores have already warned
// about, so one command warns once.
func (s *Store) shared() *notices {
	s.notesOnce.Do(func() { s.notes = &notices{} })
	return s.notes
}

// Load returns a snapshot of the registry. It takes no lock: writes are
// atomic renames, so a reader sees a whole file. A corrupt file is repaired
// under the lock (backed up and reset, with a warning).
func (s *Store) Load() (*Registry, error) {
	s.shared().checkDirs(s.Warn, s.Root, s.Root)
	reg, err := s.read()
	if err == nil {
		return reg, nil
	}
	if !errors.Is(err, errCorrupt) {
		return nil, err
	}
	err = withLock(s.lockPath(), func() error {
		reg, err = s.readRepair()
		return err
	})
	return reg, err
}

// Update runs fn on the current registry while holding the state lock and
// writes the result back atomically if fn returns nil. No other swarm
// process can write between the read and the write.
func (s *Store) Update(fn func(*Registry) error) error {
	if err := makeDir(s.Root); err != nil {
		return err
	}
	s.shared().checkDirs(s.Warn, s.Root, s.Root)
	return withLock(s.lockPath(), func() error {
		reg, err := s.readRepair()
		if err != nil {
			return err
		}
		if err := fn(reg); err != nil {
			return err
		}
		if err := s.write(reg); err != nil {
			return err
		}
		sweepStaleTemps(s.statePath())
		return nil
	})
}

// Get returns a copy of the named worker's record.
func (s *Store) Get(name string) (*Worker, error) {
	reg, err := s.Load()
	if err != nil {
		return nil, err
	}
	w := reg.Find(name)
	if w == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return w, nil
}

var errCorrupt = errors.New("corrupt state file")

func (s *Store) read() (*Registry, error) {
	data, err := os.ReadFile(s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return &Registry{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRegistry(data)
}

// decodeRegistry accepts {"workers": [...]}, a bare list (some swarm.py
// versions), and an empty file.
func decodeRegistry(data []byte) (*Registry, error) {
	data = bytes.TrimSpace(data)
	reg := &Registry{}
	if len(data) == 0 {
		return reg, nil
	}
	if data[0] == '[' {
		if err := json.Unmarshal(data, &reg.Workers); err != nil {
			return nil, fmt.Errorf("%w: %w", errCorrupt, err)
		}
	} else if err := json.Unmarshal(data, reg); err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	for i := range reg.Workers {
		if reg.Workers[i].Name == "" {
			return nil, fmt.Errorf("%w: record %d has no name", errCorrupt, i)
		}
	}
	return reg, nil
}

// readRepair reads the registry; a corrupt file is moved to
// state.json.corrupted and an empty registry returned. Call with the lock.
func (s *Store) readRepair() (*Registry, error) {
	reg, err := s.read()
	if errors.Is(err, errCorrupt) {
		if berr := backupCorrupt(s.statePath()); berr != nil {
			return nil, fmt.Errorf("corrupt state file %s, and backing it up failed: %w", s.statePath(), berr)
		}
		s.warn("corrupt state file, resetting")
		return &Registry{}, nil
	}
	return reg, err
}

func (s *Store) write(reg *Registry) error {
	if reg.Workers == nil {
		reg.Workers = []Worker{}
	}
	for i := range reg.Workers {
		normalize(&reg.Workers[i])
	}
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.statePath(), append(data, '\n'))
}

// normalize replaces nil collections with empty ones so the file always has
// the keys swarm.py expects ([] and {} rather than null).
func normalize(w *Worker) {
	if w.Cmd == nil {
		w.Cmd = []string{}
	}
	if w.Env == nil {
		w.Env = map[string]string{}
	}
	if w.Tags == nil {
		w.Tags = []string{}
	}
	if w.Metadata == nil {
		w.Metadata = map[string]any{}
	}
}
