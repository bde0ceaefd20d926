package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Heartbeat status values, as swarm.py writes them.
const (
	HeartbeatActive  = "active"
	HeartbeatPaused  = "paused"
	HeartbeatExpired = "expired"
	HeartbeatStopped = "stopped"
)

// HeartbeatDefaultMessage is what a beat types unless told otherwise, and
// what a file without "message" reads as (swarm.py's default).
const HeartbeatDefaultMessage = "continue"

// Heartbeat is heartbeats/W.json. The first nine keys are swarm.py's
// HeartbeatState, in its order; the rest are swarm's additions, which
// swarm.py ignores.
type Heartbeat struct {
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
func (h *Heartbeat) Interval() time.Duration {
	return time.Duration(h.IntervalSeconds * float64(time.Second))
}

// Live reports whether the heartbeat has not ended (active or paused).
func (h *Heartbeat) Live() bool { return h.Status == HeartbeatActive || h.Status == HeartbeatPaused }

// Stamp is a heartbeat's timestamp kept as the text found in the file, so
// that a value swarm can not parse is shown as it is instead of failing a
// command (as swarm.py does). Empty is JSON null, as for a NullString.
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
	t, err := ParseTimestamp(string(s))
	if err != nil {
		return time.Time{}, false
	}
	return t.Time, true
}

// MarshalJSON writes null for "".
func (s Stamp) MarshalJSON() ([]byte, error) { return NullString(s).MarshalJSON() }

// UnmarshalJSON reads null as "".
func (s *Stamp) UnmarshalJSON(b []byte) error { return (*NullString)(s).UnmarshalJSON(b) }

// ErrCorruptHeartbeat marks a heartbeat file that is not a heartbeat.
var ErrCorruptHeartbeat = errors.New("corrupt heartbeat state")

// heartbeatControlTimeout bounds the wait for the control lock
// (WithControlLock). Its holder may be stopping a heartbeat process and
// starting another (start --force), which the heartbeat package bounds at
// 50 s at worst: stopping takes at most 15 s for the process to let go of
// its lock, 5 s more after SIGTERM, 10 s for it to exit and 5 s more after
// SIGKILL (heartbeat's stopTimeout, killTimeout, exitTimeout, killTimeout);
// starting at most daemon.DefaultStartTimeout (10 s) and 5 s for a child
// that did not start to be gone after SIGKILL (daemon's killWait). So this
// is longer than that, and than LockTimeout, which is meant for a read and
// a write.
const heartbeatControlTimeout = 60 * time.Second

// HeartbeatStore holds the heartbeats under one state root, heartbeats/.
type HeartbeatStore struct {
	Root string
	// Warn receives warnings (a corrupt file being reset); nil drops them.
	Warn func(string)
}

// Heartbeats returns the heartbeat store under the store's root, with its
// warnings.
func (s *Store) Heartbeats() *HeartbeatStore { return &HeartbeatStore{Root: s.Root, Warn: s.Warn} }

// Dir is heartbeats/ under the root.
func (s *HeartbeatStore) Dir() string { return filepath.Join(s.Root, "heartbeats") }

// Path is the worker's state file, heartbeats/W.json.
func (s *HeartbeatStore) Path(name string) string { return filepath.Join(s.Dir(), name+".json") }

// LockPath is the lock the worker's heartbeat process holds for its life.
func (s *HeartbeatStore) LockPath(name string) string {
	return filepath.Join(s.Dir(), name+".lock")
}

// LogPath receives the heartbeat process's output.
func (s *HeartbeatStore) LogPath(name string) string { return filepath.Join(s.Dir(), name+".log") }

// controlPath serialises the commands that start or stop the process
// (start, stop, resume), so two of them never race to start two.
func (s *HeartbeatStore) controlPath(name string) string {
	return filepath.Join(s.Dir(), name+".control.lock")
}

// rmwPath is the lock of every read-modify-write of a state file. It is
// the file swarm.py locks for the same purpose, so the two tools can share
// a state root.
func (s *HeartbeatStore) rmwPath() string { return filepath.Join(s.Root, "heartbeat.lock") }

// WithControlLock runs fn holding the worker's control lock
// (heartbeats/W.control.lock), which serialises the commands that start
// or stop its heartbeat process. It is not the lock of the state file:
// fn reads and writes the state with Load and Update as usual, and may
// take long (it starts or stops a process).
func (s *HeartbeatStore) WithControlLock(name string, fn func() error) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := MakeDir(s.Root, s.Dir()); err != nil {
		return err
	}
	return withLockFor(s.controlPath(name), heartbeatControlTimeout, fn)
}

// decodeHeartbeat reads a heartbeat file; missing keys take swarm.py's
// defaults (from_dict).
func decodeHeartbeat(data []byte) (*Heartbeat, error) {
	h := Heartbeat{Message: HeartbeatDefaultMessage, Status: HeartbeatActive}
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptHeartbeat, err)
	}
	if h.WorkerName == "" {
		return nil, fmt.Errorf("%w: no worker_name", ErrCorruptHeartbeat)
	}
	return &h, nil
}

// read returns the worker's heartbeat (nil when it has none) and the
// file's content, which a corrupt file's backup needs.
func (s *HeartbeatStore) read(name string) (*Heartbeat, []byte, error) {
	if err := ValidateName(name); err != nil {
		return nil, nil, err
	}
	if err := checkDirs(s.Root, s.Dir()); err != nil {
		return nil, nil, err
	}
	data, ok, err := readIfExists(s.Path(name))
	if !ok {
		return nil, nil, err
	}
	h, err := decodeHeartbeat(data)
	return h, data, err
}

// Load returns the worker's heartbeat, or nil when it has none. It takes
// no lock (writes are atomic renames, so a reader sees a whole file) and
// never writes: a corrupt file is an error wrapping ErrCorruptHeartbeat,
// left for the next Update.
func (s *HeartbeatStore) Load(name string) (*Heartbeat, error) {
	h, _, err := s.read(name)
	return h, err
}

// Update runs fn on the current state (nil when there is none) under the
// lock and writes what fn returns (nothing when it returns nil). A corrupt
// file is backed up to W.json.corrupted (keepCorrupt: never over an
// earlier backup of other content) and removed, with a warning, and fn
// sees nil.
func (s *HeartbeatStore) Update(name string, fn func(cur *Heartbeat) (*Heartbeat, error)) (*Heartbeat, error) {
	if err := MakeDir(s.Root, s.Dir()); err != nil {
		return nil, err
	}
	var out *Heartbeat
	err := withLock(s.rmwPath(), func() error {
		cur, data, err := s.read(name)
		if errors.Is(err, ErrCorruptHeartbeat) {
			if err := s.dropCorrupt(name, data, err); err != nil {
				return err
			}
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

// dropCorrupt backs up data, the content of the worker's corrupt file
// (cerr says why), and removes the file, as swarm.py moves it aside. Call
// it with the lock held.
func (s *HeartbeatStore) dropCorrupt(name string, data []byte, cerr error) error {
	path := s.Path(name)
	if _, err := keepCorrupt(path, data); err != nil {
		return fmt.Errorf("%w, and backing it up failed: %w", cerr, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w, and removing it failed: %w", cerr, err)
	}
	s.warn(fmt.Sprintf("corrupt heartbeat state for '%s', resetting", name))
	return nil
}

// write replaces the worker's state file with h, and sweeps temp files
// that crashed writers left. Call it with the lock held.
func (s *HeartbeatStore) write(name string, h *Heartbeat) error {
	data, err := EncodeJSON(h)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.Path(name), data); err != nil {
		return err
	}
	sweepStaleTemps(s.Path(name))
	return nil
}

// EncodeJSON renders v as swarm.py writes its state files and prints them
// (two-space indent, a final newline), without escaping <, > and & in
// messages. Heartbeat files are written with it, and swarm heartbeat's
// JSON output is printed with it.
func EncodeJSON(v any) ([]byte, error) {
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
// heartbeats (corrupt ones too) are left out, as swarm.py does.
func (s *HeartbeatStore) List() ([]Heartbeat, error) {
	if err := checkDirs(s.Root, s.Dir()); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(s.Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Heartbeat
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || ValidateName(name) != nil {
			continue
		}
		h, err := s.Load(name)
		if err != nil || h == nil {
			continue
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkerName < out[j].WorkerName })
	return out, nil
}

// Remove deletes the worker's heartbeat state and log (for clean). The
// lock files stay: removing a lock file a process holds would let a second
// process lock a new file. Stop the heartbeat first.
func (s *HeartbeatStore) Remove(name string) error {
	if err := ValidateName(name); err != nil {
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

func (s *HeartbeatStore) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
	}
}
