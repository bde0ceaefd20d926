package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNoRalph is returned when a worker has no ralph state.
var ErrNoRalph = errors.New("no ralph state")

// RalphStore is the ralph/N directory of one loop.
type RalphStore struct {
	Dir  string
	Name string
	Warn func(string)
	// root is the state root, whose directories are checked as this
	// loop's are; notes is shared with the Store, so one command warns
	// once.
	root  string
	notes *notices
	// err is set for a name that is not a valid worker name: such a name
	// must never become a path ("..", "a/b"), so every operation fails.
	err error
	// fallback, once set by KeepFallback, is the last state this store
	// read or wrote, kept current by every Load and Update: a corrupt file
	// is rebuilt from it, so corruption never loses the loop's
	// configuration or rolls its count back.
	mu       sync.Mutex
	fallback *Ralph
	// looks and changes count the reads of the state file (Reads).
	looks, changes atomic.Int64
}

// Reads says how many times this store has read the state file: to look
// at it (Load, View) and to change it (Update, which reads what is on disk
// under the lock before it writes). The loop engine's tests hold the looks
// to about one a poll: the file changes behind the engine only when
// another command writes it.
func (r *RalphStore) Reads() (looks, changes int64) {
	return r.looks.Load(), r.changes.Load()
}

// KeepFallback makes the store remember the last good state (the monitor
// does this), starting from st.
func (r *RalphStore) KeepFallback(st *Ralph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fallback = fallbackCopy(st)
}

func (r *RalphStore) remember(st *Ralph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fallback != nil {
		r.fallback = fallbackCopy(st)
	}
}

// fallbackCopy copies st for the fallback, without a legacy delivered
// prompt: once written, that belongs to the delivered-prompt file, and a
// reset from the fallback must not bring an old one back over a newer one.
func fallbackCopy(st *Ralph) *Ralph {
	c := *st
	c.legacyDelivered = ""
	return &c
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
	rs := &RalphStore{Dir: filepath.Join(s.Root, "ralph", name), Name: name, Warn: s.Warn, root: s.Root, notes: s.shared()}
	if err := ValidateName(name); err != nil {
		rs.Dir, rs.err = filepath.Join(s.Root, "ralph", ".invalid"), err
	}
	return rs
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

// ActiveOrUnreadable reports whether the loop is active (running, paused
// or waiting out a usage limit), or may be: a state file that cannot be
// read or decoded counts, so that a caller never ends something on a guess
// (a heartbeat waiting for the loop's window). No file (or an invalid name, which has none) is false. Unlike
// Load it neither warns nor falls back on a last good copy, and like it
// takes no lock and never writes.
func (r *RalphStore) ActiveOrUnreadable() bool {
	if r.err != nil {
		return false
	}
	data, ok, err := readIfExists(r.StatePath())
	if err != nil {
		return true
	}
	if !ok {
		return false
	}
	var st struct {
		Status RalphStatus `json:"status"`
	}
	if json.Unmarshal(data, &st) != nil {
		return true
	}
	return st.Status.Active()
}

// Load returns the loop state. It takes no lock and never writes: status
// and list commands must not change what they show. What cannot be used is
// left out with a warning, for the next Update to deal with: a field of the
// wrong type reads as the fallback's value (else zero), and a corrupt file
// as the fallback (else as a stopped loop).
func (r *RalphStore) Load() (*Ralph, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := checkDirs(r.root, r.Dir); err != nil {
		return nil, err
	}
	r.looks.Add(1)
	l, err := r.readState()
	if err != nil {
		return nil, err
	}
	r.warnRead(l)
	if !l.corrupt {
		r.remember(l.st)
	}
	return l.st, nil
}

// Create writes a new state file, replacing any old one.
func (r *RalphStore) Create(st *Ralph) error {
	if r.err != nil {
		return r.err
	}
	if err := r.prepare(); err != nil {
		return err
	}
	return withLock(r.lockPath(), func() error { return r.write(st) })
}

// Update is a locked read-modify-write of the loop state: fn sees what is on
// disk now, never a stale copy, so the monitor cannot undo a pause or a kill
// written by another command. A corrupt file is backed up and replaced, and
// invalid fields are moved to the sidecar (state.json.rejected), only when
// the write happens: a failed update changes nothing.
func (r *RalphStore) Update(fn func(*Ralph) error) (*Ralph, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	var out *Ralph
	err := withLock(r.lockPath(), func() error {
		r.changes.Add(1)
		l, err := r.readLocked()
		if err != nil {
			return err
		}
		// Before fn, so that a prompt fn saves for a new iteration is
		// never overwritten by the old one.
		if err := r.migrateDelivered(l.st); err != nil {
			return err
		}
		if err := fn(l.st); err != nil {
			return err
		}
		notes, err := r.setAside(l)
		if err != nil {
			return err
		}
		if err := r.write(l.st); err != nil {
			return err
		}
		for _, n := range notes {
			r.warn(n)
		}
		out = l.st
		return nil
	})
	if err == nil {
		r.remember(out)
	}
	return out, err
}

// View runs fn on the current state under the lock, and writes nothing:
// like Load, it leaves a corrupt file or invalid fields to the next Update.
func (r *RalphStore) View(fn func(*Ralph)) error {
	if r.err != nil {
		return r.err
	}
	// Checked first so that viewing a loop that does not exist creates no
	// directory and no lock file for it.
	if !r.Exists() {
		return fmt.Errorf("%w for '%s'", ErrNoRalph, r.Name)
	}
	return withLock(r.lockPath(), func() error {
		r.looks.Add(1)
		l, err := r.readLocked()
		if err != nil {
			return err
		}
		r.warnRead(l)
		fn(l.st)
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

// loaded is a loop state as read from the disk, with what could not be
// used: the invalid fields, or (corrupt) all of it, whose content data is
// kept for the backup.
type loaded struct {
	st      *Ralph
	bad     []rejected
	data    []byte
	corrupt bool
}

// readState reads and decodes the state file, writing nothing. A corrupt
// file gives the state to go on with (resetState).
func (r *RalphStore) readState() (*loaded, error) {
	data, ok, err := readIfExists(r.StatePath())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w for '%s'", ErrNoRalph, r.Name)
	}
	st, bad, err := decodeRalph(data, r.LastGood())
	if err != nil {
		return &loaded{st: r.resetState(), data: data, corrupt: true}, nil
	}
	return &loaded{st: st, bad: bad, data: data}, nil
}

// readLocked is readState for a caller holding the lock: a state that lost
// its configuration (a reset file) gets it back from the fallback.
func (r *RalphStore) readLocked() (*loaded, error) {
	l, err := r.readState()
	if err != nil || l.corrupt {
		return l, err
	}
	if fb := r.LastGood(); fb != nil {
		l.st.fillConfig(fb)
	}
	return l, nil
}

// resetState is what a corrupt file is replaced with: the fallback, else,
// with nothing to rebuild the configuration from, a loop that is visible but
// ended, so nobody restarts an agent with an empty prompt.
func (r *RalphStore) resetState() *Ralph {
	if fb := r.LastGood(); fb != nil {
		return fb
	}
	return &Ralph{LoopConfig: LoopConfig{WorkerName: r.Name}, LoopProgress: LoopProgress{Status: RalphStopped,
		ExitReason: ReasonFailed, ExitDetail: "ralph state was corrupt and has been reset"}}
}

// warnRead tells, once per command (or per content, for a monitor), what a
// read without repair left out.
func (r *RalphStore) warnRead(l *loaded) {
	if l.corrupt {
		using := "read as stopped"
		if r.LastGood() != nil {
			using = "using the last good copy"
		}
		r.shared().warnOnce(r.Warn, l.data, fmt.Sprintf("corrupt ralph state for '%s', %s (the next change backs it up and resets it)", r.Name, using))
		return
	}
	for _, b := range l.bad {
		r.shared().warnOnce(r.Warn, l.data, fmt.Sprintf("ignoring invalid %s of ralph state for '%s': %s", b.what, r.Name, b.reason))
	}
}

// setAside keeps what the coming write drops: a corrupt file's content as a
// backup, invalid fields in the sidecar. It returns the warnings to give
// once the write has succeeded.
func (r *RalphStore) setAside(l *loaded) ([]string, error) {
	if l.corrupt {
		if _, err := keepCorrupt(r.StatePath(), l.data); err != nil {
			return nil, fmt.Errorf("corrupt ralph state %s, and backing it up failed: %w", r.StatePath(), err)
		}
		return []string{fmt.Sprintf("corrupt ralph state for '%s', resetting", r.Name)}, nil
	}
	if err := moveRejected(r.StatePath(), l.bad); err != nil {
		return nil, err
	}
	var notes []string
	for _, b := range l.bad {
		notes = append(notes, fmt.Sprintf("moved invalid %s of ralph state for '%s' to %s: %s", b.what, r.Name, r.StatePath()+rejectedSuffix, b.reason))
	}
	return notes, nil
}

func (r *RalphStore) warn(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
	}
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

// migrateDelivered moves the delivered prompt an older swarm kept in the
// state to its own file. Call it with the lock held.
func (r *RalphStore) migrateDelivered(st *Ralph) error {
	if st.legacyDelivered == "" {
		return nil
	}
	sum, n, err := r.SaveDelivered(st.legacyDelivered)
	if err != nil {
		return err
	}
	st.PromptSHA256, st.PromptBytes, st.legacyDelivered = sum, n, ""
	return nil
}

// write replaces the state file with st, a legacy delivered prompt moved to
// its own file first (Create may be given a state read from an old file),
// and sweeps temp files that crashed writers left. Call it with the lock
// held.
func (r *RalphStore) write(st *Ralph) error {
	if err := r.migrateDelivered(st); err != nil {
		return err
	}
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
	if err := WriteFileAtomic(r.StatePath(), append(data, '\n')); err != nil {
		return err
	}
	sweepStaleTemps(r.StatePath())
	return nil
}

// MakeDir makes dir, a directory of the loop's (its output directory),
// refusing one that is not the user's alone (state.MakeDir).
func (r *RalphStore) MakeDir(dir string) error {
	if r.err != nil {
		return r.err
	}
	return MakeDir(r.root, dir)
}

// prepare makes the loop's directory, refusing one that is not the user's
// alone (MakeDir).
func (r *RalphStore) prepare() error {
	return MakeDir(r.root, r.Dir)
}

// shared returns the notices shared with the Store; a RalphStore made
// without one gets its own.
func (r *RalphStore) shared() *notices {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.notes == nil {
		r.notes = &notices{}
	}
	return r.notes
}

// LogTimeLayout is the time of an iterations.log line, as swarm.py writes
// it: local time to the second, no zone.
const LogTimeLayout = "2006-01-02T15:04:05"

// Event is the kind of an iterations.log line, the word in brackets.
type Event string

// The events of iterations.log (docs/ralph.md). Scripts grep for them:
// the words are swarm.py's, but for LIMIT and SET, which swarm added.
const (
	EventStart   Event = "START"   // an iteration starts: "iteration I/M"
	EventEnd     Event = "END"     // an iteration ends: exit, reason, duration
	EventFail    Event = "FAIL"    // an iteration failed: attempt n/5, backoff
	EventTimeout Event = "TIMEOUT" // the agent was quiet for the inactivity timeout
	EventFatal   Event = "FATAL"   // the agent's context is spent: restarted fresh
	EventReject  Event = "REJECT"  // a completion signal was rejected (checks, no change)
	EventLimit   Event = "LIMIT"   // a usage limit: the loop waits until it resets
	EventWarn    Event = "WARN"    // something the user may need to look at
	EventPause   Event = "PAUSE"   // the loop was paused
	EventResume  Event = "RESUME"  // the loop was resumed
	EventSet     Event = "SET"     // ralph set changed the loop's settings
	EventDone    Event = "DONE"    // the loop ended: "loop complete after I iterations reason=R"
	EventMerge   Event = "MERGE"   // --on-complete merged (or did not merge) the loop's branch
	EventCommit  Event = "COMMIT"  // --auto-commit committed what an iteration left in the worktree
)

// Log appends one event line to iterations.log:
// "<local time> [EVENT] text". One write per line with O_APPEND, so lines
// from concurrent writers never interleave.
func (r *RalphStore) Log(event Event, text string) error {
	if r.err != nil {
		return r.err
	}
	if err := r.prepare(); err != nil {
		return err
	}
	line := fmt.Sprintf("%s [%s] %s\n", time.Now().Format(LogTimeLayout), event, strings.ReplaceAll(text, "\n", " "))
	return appendLines(r.LogPath(), false, []byte(line))
}
