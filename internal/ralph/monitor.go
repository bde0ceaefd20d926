package ralph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/swarmtools/swarm/internal/state"
)

// The monitor lock: a monitor holds an exclusive flock on
// ralph/N/monitor.lock for its whole life. The kernel releases it when the
// process dies, however it dies, so "is a monitor alive" is answered by
// probing the lock, never by trusting a stored pid.

// lockMonitor takes the monitor lock, retrying briefly so that a liveness
// probe holding it for an instant does not turn a monitor away.
func lockMonitor(rs *state.RalphStore) (*flock.Flock, error) {
	if !rs.Exists() {
		if err := rs.Err(); err != nil {
			return nil, err
		}
		return nil, state.ErrNoRalph
	}
	if err := os.MkdirAll(rs.Dir, 0o700); err != nil {
		return nil, err
	}
	fl := flock.New(rs.MonitorLockPath(), flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), monitorLockWait)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if !ok {
		return nil, errMonitorRunning
	}
	return fl, nil
}

var errMonitorRunning = fmt.Errorf("a monitor is already running")

// MonitorAlive reports whether a monitor holds the loop's lock.
func MonitorAlive(rs *state.RalphStore) bool {
	if rs.Err() != nil {
		return false
	}
	if _, err := os.Stat(rs.MonitorLockPath()); err != nil {
		return false
	}
	fl := flock.New(rs.MonitorLockPath())
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
		return false
	}
	return true
}

// StartMonitor starts a background monitor for the loop: this very binary
// (os.Executable, never a path relative to the caller's directory), in its
// own session so it survives the terminal closing, with its output in
// ralph/N/monitor.log. It returns once the monitor holds its lock, so a
// monitor that cannot start is an error now, not a silent death.
func StartMonitor(root, name string) (int, error) {
	rs := state.NewStore(root, nil).Ralph(name)
	if !rs.Exists() {
		if err := rs.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("no ralph state for '%s'", name)
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("cannot find the swarm executable: %w", err)
	}
	if err := os.MkdirAll(rs.Dir, 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(rs.MonitorLogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "%s monitor starting\n", time.Now().Format(time.RFC3339))
	cmd := exec.Command(exe, "ralph", "run", name)
	cmd.Env = append(withoutKeys(os.Environ(), "SWARM_HOME", "SWARM_DIR"), "SWARM_HOME="+root, monitorEnv+"=1")
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("cannot start the ralph monitor: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(monitorStartWait)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			// A loop can end at once (a done file already there, the cap
			// already reached): that monitor did its job. Or another
			// command started a monitor at the same moment (two resumes):
			// the loop has one, which is what was asked for.
			if st, err := rs.Load(); err == nil && !st.Active() {
				return pid, nil
			}
			if MonitorAlive(rs) {
				if st, err := rs.Load(); err == nil {
					return st.MonitorPID, nil
				}
				return 0, nil
			}
			return 0, fmt.Errorf("the ralph monitor exited at start (see %s)", rs.MonitorLogPath())
		default:
		}
		if MonitorAlive(rs) {
			if st, err := rs.Load(); err == nil && st.MonitorPID == pid {
				return pid, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	return 0, fmt.Errorf("the ralph monitor did not start within %s (see %s)", monitorStartWait, rs.MonitorLogPath())
}

// monitorEnv is set in a background monitor's environment.
const monitorEnv = "SWARM_RALPH_MONITOR"

// IsBackgroundMonitor reports whether this process was started by
// StartMonitor.
func IsBackgroundMonitor() bool { return os.Getenv(monitorEnv) == "1" }

// WaitMonitorExit waits until no monitor holds the loop's lock.
func WaitMonitorExit(rs *state.RalphStore, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for MonitorAlive(rs) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func withoutKeys(env []string, keys ...string) []string {
	var out []string
	for _, e := range env {
		keep := true
		for _, k := range keys {
			if strings.HasPrefix(e, k+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}
