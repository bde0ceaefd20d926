package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// Timings of the commands.
const (
	// stopTimeout bounds the wait for a told-to-stop process to release
	// its lock: it reads its state every poll (1 s) and may be in the
	// middle of a beat (a few tmux calls) or waiting for the state lock.
	stopTimeout = 15 * time.Second
	// killTimeout bounds the wait after the fallback SIGTERM.
	killTimeout = 5 * time.Second
	// exitPoll is how often the wait for a process to exit looks.
	exitPoll = 10 * time.Millisecond
)

// exitTimeout bounds the wait, after the lock is released, for the process
// itself to be gone. It releases the lock as it returns, so this normally
// takes milliseconds; but a binary built with the race detector sleeps a
// second at exit (GORACE atexit_sleep_ms), and a loaded machine adds more.
// A process still there after this is stuck in its exit and is killed: its
// replacement never runs beside it. StartOptions.ExitTimeout overrides it
// for a forced start.
const exitTimeout = 10 * time.Second

// StartOptions control how the process is started.
type StartOptions struct {
	// Force replaces a live heartbeat (its process is stopped first).
	Force bool
	// Command is how the heartbeat process of a worker is started (swarm
	// heartbeat run W, which calls Run): cmd/swarm knows its own command
	// line, tests point it at a test binary. Without it no process starts.
	Command daemon.Command
	// Warn receives warnings (a corrupt state file being reset).
	Warn func(string)
	// ExitTimeout, if positive, replaces exitTimeout when a forced start
	// waits for the replaced process to exit. Tests of the kill of a
	// process stuck in its exit set it so as not to wait 10 s; it is an
	// option, not a package variable, because tests run in parallel.
	ExitTimeout time.Duration
}

// exitWait is the wait for a replaced process to exit (see exitTimeout).
func (o StartOptions) exitWait() time.Duration {
	if o.ExitTimeout > 0 {
		return o.ExitTimeout
	}
	return exitTimeout
}

func (o StartOptions) spec(s *Store, name string) daemon.Spec {
	sp := daemon.Spec{
		What:     "heartbeat process",
		Env:      []string{"SWARM_HOME=" + s.Root},
		Unset:    []string{"SWARM_DIR"},
		LockPath: s.LockPath(name),
		LogPath:  s.LogPath(name),
		// Return once the process has recorded itself, so the state a
		// caller reads next names it.
		Ready: func(pid int) bool {
			st, err := s.Load(name)
			return err == nil && st != nil && st.MonitorPID != nil && *st.MonitorPID == pid
		},
	}
	if o.Command != nil {
		sp = sp.With(o.Command(name))
	}
	return sp
}

// Start starts a heartbeat for the worker and returns its state once its
// process holds its lock. The worker must exist and be a tmux worker. A
// live heartbeat (active or paused, or a process still holding the lock)
// is refused unless o.Force, which stops its process, waits for its lock
// to go, and then starts the new one: never two processes.
func Start(root, name string, c Config, o StartOptions) (*State, error) {
	if err := state.ValidateName(name); err != nil {
		return nil, err
	}
	w, err := state.NewStore(root, nil).Get(name)
	if errors.Is(err, state.ErrNotFound) {
		return nil, &Error{KindWorkerMissing, fmt.Sprintf("worker '%s' not found", name)}
	}
	if err != nil {
		return nil, err
	}
	if w.Tmux == nil {
		return nil, &Error{KindNotTmux, "heartbeat requires tmux worker"}
	}
	s := NewStore(root, o.Warn)
	var out *State
	err = s.WithControlLock(name, func() error {
		var err error
		out, err = s.startLocked(name, c, o)
		return err
	})
	return out, err
}

func (s *Store) startLocked(name string, c Config, o StartOptions) (*State, error) {
	prev, err := s.Load(name)
	if err != nil && !errors.Is(err, state.ErrCorruptHeartbeat) {
		return nil, err
	}
	if (prev != nil && prev.Live()) || daemon.Alive(s.LockPath(name)) {
		if !o.Force {
			return nil, &Error{KindAlreadyActive, fmt.Sprintf("heartbeat already active for '%s' (use --force to replace)", name)}
		}
		if err := s.stopLocked(name, o.exitWait()); err != nil {
			return nil, err
		}
		prev, _ = s.Load(name)
	}
	now := time.Now()
	st := &State{
		WorkerName:      name,
		IntervalSeconds: c.Interval.Seconds(),
		Message:         c.Message,
		CreatedAt:       StampOf(now),
		Status:          StatusActive,
		NextBeatAt:      StampOf(now.Add(c.Interval)),
	}
	if c.Expire > 0 {
		st.ExpireAt = StampOf(ExpireAt(now, c.Expire))
	}
	if _, err := s.Update(name, func(*State) (*State, error) { return st, nil }); err != nil {
		return nil, err
	}
	pid, err := daemon.Start(o.spec(s, name))
	if err != nil {
		return nil, errors.Join(err, s.undoStart(name, prev))
	}
	st.MonitorPID = &pid
	return st, nil
}

// undoStart puts back what was there before a start that failed: a failed
// command changes nothing (beyond a replaced process, which is gone).
// It returns what it could not put back.
func (s *Store) undoStart(name string, prev *State) error {
	_, err := s.Update(name, func(*State) (*State, error) {
		if prev == nil {
			return nil, nil
		}
		if prev.Live() {
			prev.Status = StatusStopped
		}
		prev.MonitorPID = nil
		return prev, nil
	})
	if prev == nil {
		err = errors.Join(err, s.Remove(name))
	}
	if err != nil {
		return fmt.Errorf("cannot undo the heartbeat's start: %w", err)
	}
	return nil
}

// Stop ends the worker's heartbeat ("heartbeat stop W"): status stopped
// (an expired one stays expired), then it waits until the process has
// released its lock. found is false when the worker has no heartbeat at
// all (swarm.py then prints "No active heartbeat for W" and exits 0).
func Stop(root, name string) (found bool, err error) {
	return stopIf(root, name, func(st *State) bool { return st != nil })
}

// StopFor ends the worker's heartbeat if it has a live one, for kill and
// clean; stopped reports whether there was one. It returns once the
// process has exited.
func StopFor(root, name string) (stopped bool, err error) {
	return stopIf(root, name, func(st *State) bool { return st != nil && st.Live() })
}

// stopIf stops the worker's heartbeat when its process runs or its state
// passes has, under the control lock, and reports whether it did.
func stopIf(root, name string, has func(st *State) bool) (stopped bool, err error) {
	if err := state.ValidateName(name); err != nil {
		return false, err
	}
	s := NewStore(root, nil)
	err = s.WithControlLock(name, func() error {
		st, err := s.Load(name)
		if err != nil && !errors.Is(err, state.ErrCorruptHeartbeat) {
			return err
		}
		stopped = has(st) || daemon.Alive(s.LockPath(name))
		if !stopped {
			return nil
		}
		return s.stopLocked(name, exitTimeout)
	})
	return stopped, err
}

// stopLocked writes status stopped and waits for the process to go. A
// process that does not notice in time is sent SIGTERM, but only once its
// pid is confirmed: it holds the lock (the pid in the lock file is the
// holder's) and its start time is the one it recorded. It returns once
// the process has released the lock and is gone (waitGone, which waits up
// to exitWait for that), so whatever starts next never runs beside it.
func (s *Store) stopLocked(name string, exitWait time.Duration) error {
	lock := s.LockPath(name)
	// Who holds the lock now, by pid and start time: once it lets go, its
	// pid alone could soon be another process's, and it must be waited for
	// until it is gone (see waitGone).
	holder, _ := daemon.HolderTarget(lock)
	st, err := s.Update(name, func(cur *State) (*State, error) {
		if cur == nil || !cur.Live() {
			return nil, nil
		}
		cur.Status = StatusStopped
		cur.NextBeatAt = ""
		return cur, nil
	})
	if err != nil {
		return err
	}
	if daemon.WaitExit(lock, stopTimeout) {
		return s.waitGone(name, holder, exitWait)
	}
	// The holder now, by pid and start time as above: it is the process
	// SIGTERM goes to, and the one waited for once it lets go.
	t, _ := daemon.HolderTarget(lock)
	pid := t.PID
	if pid > 0 && st != nil && st.MonitorPID != nil && *st.MonitorPID == pid {
		if started, ok := st.MonitorStarted.Time(); ok && proc.Same(pid, started) {
			_ = syscall.Kill(pid, syscall.SIGTERM) // one that is gone already let go of its lock too: the wait tells
			if daemon.WaitExit(lock, killTimeout) {
				return s.waitGone(name, t, exitWait)
			}
		}
	}
	return fmt.Errorf("the heartbeat process for '%s' (pid %d) did not exit (see %s)", name, pid, s.LogPath(name))
}

// waitGone waits for a process that has released its lock to be gone too
// (exited: a zombie has done all it will do), so that a replacement never
// runs beside it, even while it exits. A process that let go of its lock
// has finished its work, so one still there after exitWait is stuck in
// its exit: it is sent SIGKILL, which is safe because t names it exactly
// (pid and start time, read while it held the lock). Only where that
// identity cannot be read (no /proc) is nothing signalled; then a process
// that outlives the wait is an error rather than a second process. The
// zero Target (no holder when the stop began) has nothing to wait for,
// and neither has a holder that is this very process (Run in a goroutine,
// as tests do): for it, letting go of the lock is the end.
func (s *Store) waitGone(name string, t proc.Target, exitWait time.Duration) error {
	if t.PID <= 0 || t.PID == os.Getpid() {
		return nil
	}
	gone := func() bool { return !t.Alive() }
	if clock.Wait(context.Background(), clock.Real, exitPoll, exitWait, gone) {
		return nil
	}
	if t.Ticks != 0 && t.Alive() {
		_ = syscall.Kill(t.PID, syscall.SIGKILL) // one that is gone already is what the wait looks for
		if clock.Wait(context.Background(), clock.Real, exitPoll, killTimeout, gone) {
			return nil
		}
	}
	return fmt.Errorf("the heartbeat process for '%s' (pid %d) released its lock but did not exit (see %s)", name, t.PID, s.LogPath(name))
}

// Pause stops beats without ending the heartbeat ("heartbeat pause W").
func Pause(root, name string) error {
	if err := state.ValidateName(name); err != nil {
		return err
	}
	_, err := NewStore(root, nil).Update(name, func(cur *State) (*State, error) {
		if cur == nil {
			return nil, noHeartbeat(name)
		}
		if cur.Status != StatusActive {
			return nil, &Error{KindNotActive, fmt.Sprintf("Heartbeat for %s is not active (status: %s)", name, cur.Status)}
		}
		cur.Status = StatusPaused
		cur.PausedAt = StampOf(time.Now())
		cur.NextBeatAt = ""
		return cur, nil
	})
	return err
}
