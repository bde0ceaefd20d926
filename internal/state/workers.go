package state

import (
	"bytes"
	"encoding/json"
)

// Worker status values.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
	// StatusStarting marks a record whose spawn is under way: it is
	// written before anything is started, so a crashed spawn leaves a
	// record that says what to clean up (worker.Manager recovers it).
	StatusStarting = "starting"
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
// socket (-L name; empty for none). The keys are swarm.py's, which fails
// on any other here: the server's socket path is in the metadata
// (worker.SocketPathKey).
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
