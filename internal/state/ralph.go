package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Ralph loop status values.
const (
	RalphRunning = "running"
	RalphPaused  = "paused"
	RalphStopped = "stopped"
	RalphFailed  = "failed"
	// RalphWaiting: the agent hit a usage limit; the loop waits until it
	// resets (waiting_until), then continues the same iteration.
	RalphWaiting = "waiting"
)

// Ralph is ralph/N/state.json: a superset of what swarm.py writes. Durations
// that users set in seconds are stored in seconds (float where sub-second
// values make sense), so the file stays readable and hand-editable (the seed
// documents editing max_iterations in place).
type Ralph struct {
	WorkerName          string       `json:"worker_name"`
	PromptFile          string       `json:"prompt_file"`
	MaxIterations       int          `json:"max_iterations"`
	CurrentIteration    int          `json:"current_iteration"`
	Status              string       `json:"status"`
	Started             Timestamp    `json:"started"`
	LastIterationStart  Timestamp    `json:"last_iteration_started"`
	LastIterationEnd    Timestamp    `json:"last_iteration_ended"`
	IterationDurations  []float64    `json:"iteration_durations"`
	ConsecutiveFailures int          `json:"consecutive_failures"`
	TotalFailures       int          `json:"total_failures"`
	DonePattern         NullString   `json:"done_pattern"`
	InactivityTimeout   int          `json:"inactivity_timeout"`
	CheckDoneContinuous bool         `json:"check_done_continuous"`
	ExitReason          NullString   `json:"exit_reason"`
	ExitDetail          NullString   `json:"exit_detail"`
	LastExitCode        *int         `json:"last_exit_code"`
	LastScreenChange    UTCTimestamp `json:"last_screen_change"`
	MonitorPID          int          `json:"monitor_pid"`
	MaxContext          NullInt      `json:"max_context"`

	// Options of the completion contract.
	PromptMode        string     `json:"prompt_mode"`
	ReadyTimeout      int        `json:"ready_timeout"`
	Promise           bool       `json:"promise"`
	CompletionPromise string     `json:"completion_promise"`
	DoneFile          NullString `json:"done_file"`
	Checks            []string   `json:"checks"`
	CheckTimeout      float64    `json:"check_timeout"`
	RequireChange     bool       `json:"require_change"`
	MaxTime           float64    `json:"max_time"`
	SameSession       bool       `json:"same_session"`
	RestartDelay      float64    `json:"restart_delay"`
	OnExit            NullString `json:"on_exit"`
	WorkDir           string     `json:"work_dir"`

	// The agent and what its screen says (docs/agents.md).
	Agent         string   `json:"agent"`      // profile name
	IdleGrace     float64  `json:"idle_grace"` // seconds idle after a turn that end it
	LimitMessage  string   `json:"limit_message"`
	LimitWait     float64  `json:"limit_wait"` // seconds, when no reset time is known
	LimitPatterns []string `json:"limit_patterns,omitempty"`
	ReadyPatterns []string `json:"ready_patterns,omitempty"`
	// AgentState is the agent's last judged state (working, idle,
	// dialog, limited, error), AgentDetail the screen line behind it.
	AgentState  NullString `json:"agent_state"`
	AgentDetail NullString `json:"agent_detail"`
	// LastError is the agent's last error line (an API error, a fatal
	// start error) for ralph status.
	LastError NullString `json:"last_error"`
	// WaitingUntil is when a usage-limit wait ends (status waiting);
	// LimitWaits counts waits in a row without a known reset time.
	WaitingUntil Timestamp `json:"waiting_until"`
	LimitWaits   int       `json:"limit_waits"`

	// Progress of the current iteration, so a new monitor can adopt a
	// running agent after the old one died.
	IterationActive bool  `json:"iteration_active"`
	OutputOffset    int64 `json:"output_offset"`
	PromptSent      bool  `json:"prompt_delivered"`
	// PromptEntered: the prompt was typed and Enter pressed, but the
	// agent has not yet shown it received it (PromptSent).
	PromptEntered bool       `json:"prompt_entered"`
	Delivered     string     `json:"delivered_prompt,omitempty"`
	StartHead     string     `json:"start_head,omitempty"`
	StartTree     string     `json:"start_tree,omitempty"`
	Feedback      NullString `json:"pending_feedback"`
	PauseReason   NullString `json:"pause_reason"`
	TasksDone     []TaskDone `json:"tasks_done"`
	LastEnd       NullString `json:"last_iteration_result"`
}

// TaskDone is one <promise>TASK-ID:DONE</promise> seen in an iteration.
type TaskDone struct {
	Iteration int    `json:"iteration"`
	ID        string `json:"id"`
}

// Active reports whether the loop has not ended (running, paused or
// waiting for a limit to reset).
func (r *Ralph) Active() bool {
	return r.Status == RalphRunning || r.Status == RalphPaused || r.Status == RalphWaiting
}

// Runs reports whether the loop goes on by itself: running, or waiting
// out a limit (it continues on its own at waiting_until).
func (r *Ralph) Runs() bool {
	return r.Status == RalphRunning || r.Status == RalphWaiting
}

// ErrNoRalph is returned when a worker has no ralph state.
var ErrNoRalph = errors.New("no ralph state")

// RalphStore is the ralph/N directory of one loop.
type RalphStore struct {
	Dir  string
	Name string
	Warn func(string)
	// err is set for a name that is not a valid worker name: such a name
	// must never become a path ("..", "a/b"), so every operation fails.
	err error
	// fallback, once set by KeepFallback, is the last state this store
	// read or wrote, kept current by every Load and Update: a corrupt file
	// is rebuilt from it, so corruption never loses the loop's
	// configuration or rolls its count back.
	mu       sync.Mutex
	fallback *Ralph
}

// KeepFallback makes the store remember the last good state (the monitor
// does this), starting from st.
func (r *RalphStore) KeepFallback(st *Ralph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *st
	r.fallback = &c
}

func (r *RalphStore) remember(st *Ralph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fallback != nil {
		c := *st
		r.fallback = &c
	}
}

// LastGood returns a copy of the last good state kept by KeepFallback, or nil.
func (r *RalphStore) LastGood() *Ralph {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fallback == nil {
		return nil
	}
	c := *r.fallback
	return &c
}

// Ralph returns the store of the named loop. An invalid name gives a store
// whose every operation fails with the invalid-name error.
func (s *Store) Ralph(name string) *RalphStore {
	if err := ValidateName(name); err != nil {
		return &RalphStore{Dir: filepath.Join(s.Root, "ralph", ".invalid"), Name: name, Warn: s.Warn, err: err}
	}
	return &RalphStore{Dir: filepath.Join(s.Root, "ralph", name), Name: name, Warn: s.Warn}
}

// Err is the invalid-name error of the store, if any.
func (r *RalphStore) Err() error { return r.err }

// RalphNames lists the loops that have a state directory.
func (s *Store) RalphNames() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.Root, "ralph"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(s.Root, "ralph", e.Name(), "state.json")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	return names, nil
}

// Paths of the files of a loop.
func (r *RalphStore) StatePath() string      { return filepath.Join(r.Dir, "state.json") }
func (r *RalphStore) LogPath() string        { return filepath.Join(r.Dir, "iterations.log") }
func (r *RalphStore) MonitorLogPath() string { return filepath.Join(r.Dir, "monitor.log") }
func (r *RalphStore) MonitorLockPath() string {
	return filepath.Join(r.Dir, "monitor.lock")
}
func (r *RalphStore) lockPath() string { return filepath.Join(r.Dir, "state.lock") }

// PromptSnapshotPath holds the prompt of the current iteration for the
// stdin and arg prompt modes.
func (r *RalphStore) PromptSnapshotPath() string { return filepath.Join(r.Dir, "prompt.txt") }

// Exists reports whether the loop has a state file.
func (r *RalphStore) Exists() bool {
	if r.err != nil {
		return false
	}
	_, err := os.Stat(r.StatePath())
	return err == nil
}

// Load returns the loop state. A corrupt file is repaired under the lock.
func (r *RalphStore) Load() (*Ralph, error) {
	st, err := r.read()
	if err == nil {
		r.remember(st)
		return st, nil
	}
	if !errors.Is(err, errCorrupt) {
		return nil, err
	}
	err = withLock(r.lockPath(), func() error {
		st, err = r.readRepair()
		if err == nil {
			err = r.write(st)
		}
		return err
	})
	return st, err
}

// Create writes a new state file, replacing any old one.
func (r *RalphStore) Create(st *Ralph) error {
	if r.err != nil {
		return r.err
	}
	return withLock(r.lockPath(), func() error { return r.write(st) })
}

// Update is a locked read-modify-write of the loop state: fn sees what is on
// disk now, never a stale copy, so the monitor cannot undo a pause or a kill
// written by another command.
func (r *RalphStore) Update(fn func(*Ralph) error) (*Ralph, error) {
	if r.err != nil {
		return nil, r.err
	}
	var out *Ralph
	err := withLock(r.lockPath(), func() error {
		st, err := r.readRepair()
		if err != nil {
			return err
		}
		if err := fn(st); err != nil {
			return err
		}
		out = st
		return r.write(st)
	})
	if err == nil {
		r.remember(out)
	}
	return out, err
}

// View runs fn on the current state under the lock, and writes nothing.
func (r *RalphStore) View(fn func(*Ralph)) error {
	if r.err != nil {
		return r.err
	}
	return withLock(r.lockPath(), func() error {
		st, err := r.readRepair()
		if err != nil {
			return err
		}
		fn(st)
		return nil
	})
}

// Remove deletes the loop's directory.
func (r *RalphStore) Remove() error {
	if r.err != nil {
		return r.err
	}
	return os.RemoveAll(r.Dir)
}

func (r *RalphStore) read() (*Ralph, error) {
	if r.err != nil {
		return nil, r.err
	}
	data, err := os.ReadFile(r.StatePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w for '%s'", ErrNoRalph, r.Name)
	}
	if err != nil {
		return nil, err
	}
	st := &Ralph{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return st, nil
}

func (r *RalphStore) readRepair() (*Ralph, error) {
	st, err := r.read()
	if err == nil {
		if fb := r.LastGood(); fb != nil {
			st.fillConfig(fb)
		}
		return st, nil
	}
	if !errors.Is(err, errCorrupt) {
		return nil, err
	}
	if berr := backupCorrupt(r.StatePath()); berr != nil {
		return nil, fmt.Errorf("corrupt ralph state %s, and backing it up failed: %w", r.StatePath(), berr)
	}
	if r.Warn != nil {
		r.Warn(fmt.Sprintf("corrupt ralph state for '%s', resetting", r.Name))
	}
	if fb := r.LastGood(); fb != nil {
		return fb, nil
	}
	// Nothing to rebuild the configuration from: keep the loop visible but
	// ended, so nobody restarts an agent with an empty prompt.
	return &Ralph{WorkerName: r.Name, Status: RalphStopped, ExitReason: "failed",
		ExitDetail: "ralph state was corrupt and has been reset"}, nil
}

// fillConfig restores configuration fields that a reset file lost.
func (st *Ralph) fillConfig(from *Ralph) {
	if st.PromptFile != "" {
		return
	}
	status, reason, detail := st.Status, st.ExitReason, st.ExitDetail
	cur := st.CurrentIteration
	*st = *from
	if status != "" {
		st.Status, st.ExitReason, st.ExitDetail = status, reason, detail
	}
	if cur > st.CurrentIteration {
		st.CurrentIteration = cur
	}
}

func (r *RalphStore) write(st *Ralph) error {
	if st.IterationDurations == nil {
		st.IterationDurations = []float64{}
	}
	if st.Checks == nil {
		st.Checks = []string{}
	}
	if st.TasksDone == nil {
		st.TasksDone = []TaskDone{}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(r.StatePath(), append(data, '\n'))
}

// LogTimeLayout is the time of an iterations.log line, as swarm.py writes
// it: local time to the second, no zone.
const LogTimeLayout = "2006-01-02T15:04:05"

// Log appends one event line to iterations.log:
// "<local time> [EVENT] text". One write per line with O_APPEND, so lines
// from concurrent writers never interleave.
func (r *RalphStore) Log(event, text string) error {
	if r.err != nil {
		return r.err
	}
	if err := ensureDir(r.Dir); err != nil {
		return err
	}
	f, err := os.OpenFile(r.LogPath(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, filePerm)
	if err != nil {
		return err
	}
	defer f.Close()
	line := fmt.Sprintf("%s [%s] %s\n", time.Now().Format(LogTimeLayout), event, strings.ReplaceAll(text, "\n", " "))
	_, err = f.WriteString(line)
	return err
}
