package ralph

import (
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/state"
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

// StartMonitor starts a background monitor for the loop ("swarm ralph run
// N", detached by internal/daemon, its output in ralph/N/monitor.log). It
// returns once the monitor holds its lock and has recorded itself, so a
// monitor that cannot start is an error now, not a silent death.
func StartMonitor(root, name string) (int, error) {
	rs := state.NewStore(root, nil).Ralph(name)
	if !rs.Exists() {
		if err := rs.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("no ralph state for '%s'", name)
	}
	pid, err := daemon.Start(daemon.Spec{
		What:     "ralph monitor",
		Args:     []string{"ralph", "run", name},
		Env:      []string{"SWARM_HOME=" + root},
		Unset:    []string{"SWARM_DIR"},
		Marker:   monitorEnv,
		LockPath: rs.MonitorLockPath(),
		LogPath:  rs.MonitorLogPath(),
		Timeout:  monitorStartWait,
		Ready: func(pid int) bool {
			st, err := rs.Load()
			return err == nil && st.MonitorPID == pid
		},
	})
	var exited *daemon.ExitedError
	if !errors.As(err, &exited) {
		return pid, err
	}
	// A loop can end at once (a done file already there, the cap already
	// reached): that monitor did its job. Or another command started a
	// monitor at the same moment (two resumes): the loop has one, which is
	// what was asked for.
	if st, lerr := rs.Load(); lerr == nil && !st.Active() {
		return 0, nil
	}
	if MonitorAlive(rs) {
		if st, lerr := rs.Load(); lerr == nil {
			return st.MonitorPID, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("the ralph monitor exited at start (see %s)", rs.MonitorLogPath())
}

// monitorEnv is set in a background monitor's environment.
const monitorEnv = "SWARM_RALPH_MONITOR"

// IsBackgroundMonitor reports whether this process was started by
// StartMonitor.
func IsBackgroundMonitor() bool { return daemon.IsDaemon(monitorEnv) }

// WaitMonitorExit waits until no monitor holds the loop's lock.
func WaitMonitorExit(rs *state.RalphStore, timeout time.Duration) bool {
	return daemon.WaitExit(rs.MonitorLockPath(), timeout)
}
