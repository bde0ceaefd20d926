// Package heartbeat nudges a worker on a schedule: every interval it types
// a message (default "continue") into the worker's tmux pane, so an agent
// stalled on a rate limit retries when the limit renews.
//
// Each heartbeat is one background process (this binary, "swarm heartbeat
// run W"), started detached by Start with internal/daemon. It holds
// heartbeats/W.lock for its whole life: that lock, not a stored pid, says
// whether it is alive, and it makes a second process for the same worker
// impossible. Its configuration and progress live in heartbeats/W.json, in
// swarm.py's format (a superset), and every change to that file is a locked
// read-modify-write, so a stop or pause written by a command is never
// undone by the process.
package heartbeat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/swarmtools/swarm/internal/state"
)

// Status values, as swarm.py writes them.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusExpired = "expired"
	StatusStopped = "stopped"
)

// DefaultMessage is what a beat types unless told otherwise.
const DefaultMessage = "continue"

// State is heartbeats/W.json. The first nine keys are swarm.py's
// HeartbeatState, in its order; the rest are swarm's additions, which
// swarm.py ignores.
type State struct {
	WorkerName      string  `json:"worker_name"`
	IntervalSeconds float64 `json:"interval_seconds"`
	Message         string  `json:"message"`
	ExpireAt        Stamp   `json:"expire_at"`
	CreatedAt       Stamp   `json:"created_at"`
	LastBeatAt      Stamp   `json:"last_beat_at"`
	BeatCount       int     `json:"beat_count"`
	Status          string  `json:"status"`
	MonitorPID      *int    `json:"monitor_pid"`

	// NextBeatAt is when the process plans the next beat.
	NextBeatAt Stamp `json:"next_beat_at"`
	// PausedAt is when the heartbeat was paused: paused time does not
	// count against expiry (resume moves expire_at on by it).
	PausedAt Stamp `json:"paused_at"`
	// MonitorStarted is when the process took over, so that a stop that
	// must signal it can confirm the pid (pid plus start time).
	MonitorStarted Stamp `json:"monitor_started"`
	// SkipCount counts beats skipped because the previous message was
	// still on the worker's last line or its pane was not running.
	SkipCount int `json:"skip_count"`
}

// Interval is the time between beats.
func (s *State) Interval() time.Duration {
	return time.Duration(s.IntervalSeconds * float64(time.Second))
}

// Live reports whether the heartbeat has not ended (active or paused).
func (s *State) Live() bool { return s.Status == StatusActive || s.Status == StatusPaused }

// Stamp is a timestamp kept as the text found in the file, so that a value
// swarm can not parse is shown as it is instead of failing a command (as
// swarm.py does). Empty is JSON null.
type Stamp string

// stampLayout is what swarm.py's heartbeat writes:
// datetime.now(timezone.utc).isoformat().
const stampLayout = "2006-01-02T15:04:05.000000-07:00"

// StampOf formats t as swarm.py does, in UTC.
func StampOf(t time.Time) Stamp { return Stamp(t.UTC().Format(stampLayout)) }

// Time parses the stamp; ok is false when it is empty or not a time.
func (s Stamp) Time() (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := state.ParseTimestamp(string(s))
	if err != nil {
		return time.Time{}, false
	}
	return t.Time, true
}

// MarshalJSON writes null for "".
func (s Stamp) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads null as "".
func (s *Stamp) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Stamp(v)
	return nil
}

// Store holds the heartbeats under one state root.
type Store struct {
	Root string
	// Warn receives warnings (a corrupt file being reset); nil drops them.
	Warn func(string)
}

// NewStore returns the heartbeat store under root.
func NewStore(root string, warn func(string)) *Store { return &Store{Root: root, Warn: warn} }

// Dir is heartbeats/ under the root.
func (s *Store) Dir() string { return filepath.Join(s.Root, "heartbeats") }

// Path is the worker's state file, heartbeats/W.json.
func (s *Store) Path(name string) string { return filepath.Join(s.Dir(), name+".json") }

// LockPath is the lock the worker's heartbeat process holds for its life.
func (s *Store) LockPath(name string) string { return filepath.Join(s.Dir(), name+".lock") }

// LogPath receives the heartbeat process's output.
func (s *Store) LogPath(name string) string { return filepath.Join(s.Dir(), name+".log") }

// controlPath serialises the commands that start or stop the process
// (start, stop, resume), so two of them never race to start two.
func (s *Store) controlPath(name string) string {
	return filepath.Join(s.Dir(), name+".control.lock")
}

// rmwPath is the lock of every read-modify-write of a state file. It is
// the file swarm.py locks for the same purpose, so the two tools can share
// a state root.
func (s *Store) rmwPath() string { return filepath.Join(s.Root, "heartbeat.lock") }

// Permissions of the state root (SPEC 1).
const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// lockTimeout bounds the wait for another swarm process to release a
// heartbeat lock: critical sections are a read and a write (or, for the
// control lock, a start or stop of the process, which is bounded by
// stopTimeout, killTimeout, exitTimeout and daemon.DefaultStartTimeout:
// 45 s at worst), so hitting this means a process is stuck.
const lockTimeout = 60 * time.Second

// lockRetryDelay is the pause between attempts at a contended lock.
const lockRetryDelay = 10 * time.Millisecond

// withLock runs fn holding an exclusive flock on path (the flock style of
// internal/state, whose helper is not exported).
func withLock(path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return err
	}
	fl := flock.New(path, flock.SetPermissions(filePerm))
	ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, lockRetryDelay)
	if err != nil || !ok {
		return fmt.Errorf("cannot lock %s: another swarm process holds it (%v)", path, err)
	}
	defer fl.Unlock()
	return fn()
}

// errCorrupt marks a state file that is not a heartbeat.
var errCorrupt = errors.New("corrupt heartbeat state")

func decode(data []byte) (*State, error) {
	// Defaults of swarm.py's from_dict for missing keys.
	st := State{Message: DefaultMessage, Status: StatusActive}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if st.WorkerName == "" {
		return nil, fmt.Errorf("%w: no worker_name", errCorrupt)
	}
	return &st, nil
}

func (s *Store) read(name string) (*State, error) {
	if err := state.ValidateName(name); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(s.Path(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(data)
}

// Load returns the worker's heartbeat, or nil when it has none. It takes
// no lock: writes are atomic renames, so a reader sees a whole file.
func (s *Store) Load(name string) (*State, error) { return s.read(name) }

// Update runs fn on the current state (nil when there is none) under the
// lock and writes what fn returns (nothing when it returns nil). A corrupt
// file is moved to W.json.corrupted, with a warning, and fn sees nil.
func (s *Store) Update(name string, fn func(cur *State) (*State, error)) (*State, error) {
	var out *State
	err := withLock(s.rmwPath(), func() error {
		cur, err := s.read(name)
		if errors.Is(err, errCorrupt) {
			if rerr := os.Rename(s.Path(name), s.Path(name)+".corrupted"); rerr != nil {
				return fmt.Errorf("%v, and backing it up failed: %v", err, rerr)
			}
			s.warn(fmt.Sprintf("corrupt heartbeat state for '%s', resetting", name))
			cur, err = nil, nil
		}
		if err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			out = cur
			return err
		}
		if err := s.write(name, next); err != nil {
			return err
		}
		out = next
		return nil
	})
	return out, err
}

func (s *Store) write(name string, st *State) error {
	data, err := marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir(), dirPerm); err != nil {
		return err
	}
	return state.WriteFileAtomic(s.Path(name), data)
}

// marshal writes JSON as swarm.py does (two-space indent), without
// escaping <, > and & in messages.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// List returns every heartbeat, sorted by worker name. Files that are not
// heartbeats are left out, as swarm.py does.
func (s *Store) List() ([]State, error) {
	entries, err := os.ReadDir(s.Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []State
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || state.ValidateName(name) != nil {
			continue
		}
		st, err := s.read(name)
		if err != nil || st == nil {
			continue
		}
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkerName < out[j].WorkerName })
	return out, nil
}

// Remove deletes the worker's heartbeat state and log (for clean). The
// lock files stay: removing a lock file a process holds would let a second
// process lock a new file. Stop the heartbeat first (StopFor).
func (s *Store) Remove(name string) error {
	if err := state.ValidateName(name); err != nil {
		return err
	}
	return withLock(s.rmwPath(), func() error {
		for _, p := range []string{s.Path(name), s.LogPath(name)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

func (s *Store) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
	}
}
