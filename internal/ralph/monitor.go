package ralph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// The monitor lock: a monitor holds an exclusive lock on
// ralph/N/monitor.lock for its whole life (internal/daemon). The kernel
// releases it when the process dies, however it dies, so "is a monitor
// alive" is answered by probing the lock, never by trusting a stored pid.

// lockMonitor takes the monitor lock, retrying briefly so that a liveness
// probe holding it for an instant does not turn a monitor away.
func lockMonitor(rs *state.RalphStore) (*daemon.Held, error) {
	if !rs.Exists() {
		if err := rs.Err(); err != nil {
			return nil, err
		}
		return nil, state.ErrNoRalph
	}
	held, err := daemon.Lock(rs.MonitorLockPath())
	if errors.Is(err, daemon.ErrHeld) {
		return nil, errMonitorRunning
	}
	return held, err
}

var errMonitorRunning = fmt.Errorf("a monitor is already running")

// MonitorAlive reports whether a monitor holds the loop's lock.
func MonitorAlive(rs *state.RalphStore) bool {
	return rs.Err() == nil && daemon.Alive(rs.MonitorLockPath())
}

// StartMonitor starts a background monitor for the loop (the command
// m.MonitorCommand gives, detached by internal/daemon, its output in
// ralph/N/monitor.log). It returns once the monitor holds its lock and
// has recorded itself, so a monitor that cannot start is an error now,
// not a silent death.
func StartMonitor(m *worker.Manager, name string) (int, error) {
	rs := m.Store.Ralph(name)
	if !rs.Exists() {
		if err := rs.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("no ralph state for '%s'", name)
	}
	pid, err := startMonitor(m, name, rs)
	if !errors.Is(err, errStaleLock) {
		return pid, err
	}
	switch holder, free := settleMonitorLock(rs); {
	case holder > 0:
		return holder, nil
	case free:
		return startMonitor(m, name, rs)
	}
	return 0, fmt.Errorf("the monitor lock of '%s' is held by no monitor (%s)", name, rs.MonitorLockPath())
}

// settleMonitorLock waits, while the loop's monitor lock is held but not
// (yet) by a live monitor that wrote its pid in it, until it is: another
// monitor took it a moment ago; or until it is free: it was a copy of a
// dead monitor's descriptor, in a child the monitor was forking when it
// died (held until that child's exec). It returns the live holder's pid,
// or whether the lock is free; neither after monitorStartWait.
func settleMonitorLock(rs *state.RalphStore) (holder int, free bool) {
	clock.Wait(context.Background(), clock.Real, lockLook, monitorStartWait, func() bool {
		if !MonitorAlive(rs) {
			free = true
			return true
		}
		// Alive, not Exists: a monitor killed a moment ago is a zombie
		// until its parent reaps it, and holds nothing.
		if t, ok := daemon.HolderTarget(rs.MonitorLockPath()); ok && t.Alive() {
			holder = t.PID
			return true
		}
		return false
	})
	return holder, free
}

// lockLook paces the looks at a monitor lock held by no live monitor.
const lockLook = 20 * time.Millisecond

// errStaleLock: the monitor exited at start because the lock was held,
// but not by a live monitor.
var errStaleLock = errors.New("monitor lock held by no monitor")

func startMonitor(m *worker.Manager, name string, rs *state.RalphStore) (int, error) {
	var argv, env []string
	if m.MonitorCommand != nil {
		argv, env = m.MonitorCommand(name)
	}
	pid, err := daemon.Start(daemon.Spec{
		What:     "ralph monitor",
		Env:      []string{"SWARM_HOME=" + m.Store.Root},
		Unset:    []string{"SWARM_DIR"},
		LockPath: rs.MonitorLockPath(),
		LogPath:  rs.MonitorLogPath(),
		Timeout:  monitorStartWait,
		Ready: func(pid int) bool {
			st, err := rs.Load()
			return err == nil && st.MonitorPID == pid
		},
	}.With(argv, env))
	var exited *daemon.ExitedError
	if !errors.As(err, &exited) {
		return pid, err
	}
	// A loop can end at once (a done file already there, the cap already
	// reached): that monitor did its job. Or another command started a
	// monitor at the same moment (two resumes): the loop has one, which is
	// what was asked for, if a live monitor holds the lock.
	if st, lerr := rs.Load(); lerr == nil && !st.Active() {
		return 0, nil
	}
	if MonitorAlive(rs) {
		// Alive, not Exists: a monitor killed a moment ago is a zombie
		// until its parent reaps it, and holds nothing.
		if t, ok := daemon.HolderTarget(rs.MonitorLockPath()); ok && t.Alive() {
			return t.PID, nil
		}
		return 0, errStaleLock
	}
	return 0, fmt.Errorf("the ralph monitor exited at start (see %s)", rs.MonitorLogPath())
}

// WaitMonitorExit waits until no monitor holds the loop's lock.
func WaitMonitorExit(rs *state.RalphStore, timeout time.Duration) bool {
	return daemon.WaitExit(rs.MonitorLockPath(), timeout)
}
