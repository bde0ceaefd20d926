package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
)

// Command is how a daemon for name is started: its argv, the program
// first, and the environment entries it adds. cmd/swarm knows its own
// command line and gives it to the packages that start daemons (the ralph
// monitor, the heartbeat process); they only run it.
type Command func(name string) (argv, env []string)

// With fills in the program, arguments and environment of s from argv
// and env (as a Command returns them); no argv leaves s without a program,
// which Start refuses.
func (s Spec) With(argv, env []string) Spec {
	if len(argv) > 0 {
		s.Exe, s.Args = argv[0], argv[1:]
	}
	s.Env = append(append([]string{}, s.Env...), env...)
	return s
}

// Spec describes a daemon to start.
type Spec struct {
	// What names the daemon in errors ("heartbeat process").
	What string
	// Exe is the program, an absolute path (never one relative to the
	// caller's directory): the command line is the caller's to know, as
	// cmd/swarm knows its own (Command).
	Exe string
	// Args are the arguments after the program name.
	Args []string
	// Env entries (KEY=VAL) replace inherited values of the same keys.
	Env []string
	// Unset names inherited variables to drop.
	Unset []string
	// Marker, when set, is set to "1" in the child (see IsDaemon).
	Marker string
	// LockPath is the lock the child takes (with Lock) for its whole life.
	LockPath string
	// LogPath receives the child's stdout and stderr (appended).
	LogPath string
	// Timeout bounds the wait for the child to hold its lock
	// (DefaultStartTimeout when zero).
	Timeout time.Duration
	// Ready, when set, must also hold before Start returns, once the child
	// holds its lock (say, the child has recorded itself in a state file).
	Ready func(pid int) bool
}

// Start runs the daemon detached: in a new session (it survives the
// terminal closing and the caller's process group being signalled), in "/"
// (it never holds a directory busy or depends on the caller's), with stdin
// from /dev/null and stdout/stderr appended to LogPath. It returns the
// child's pid once the child holds LockPath (the pid in the lock file is
// the child's, not an older holder's) and Ready holds, so a daemon that
// cannot start is an error now, not a silent death. A child that exits
// first gives an *ExitedError.
func Start(s Spec) (int, error) {
	if s.What == "" {
		s.What = "background process"
	}
	if s.Exe == "" {
		return 0, fmt.Errorf("cannot start the %s: no program to run", s.What)
	}
	for _, p := range []string{s.LockPath, s.LogPath} {
		if err := os.MkdirAll(filepath.Dir(p), dirPerm); err != nil {
			return 0, err
		}
	}
	logf, err := state.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, filePerm)
	if err != nil {
		return 0, err
	}
	defer func() { _ = logf.Close() }() // the child has its own descriptors: a failed close must not fail a start that worked
	fmt.Fprintf(logf, "%s starting %s\n", time.Now().Format(time.RFC3339), s.What)
	cmd := exec.Command(s.Exe, s.Args...)
	cmd.Env = childEnv(s)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("cannot start the %s: %w", s.What, err)
	}
	// Reap the child when it exits, so it cannot linger as a zombie: this
	// goroutine outlives Start for as long as the caller runs, and once the
	// caller exits the child is reparented and reaped by init.
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reaps it; how it ended is in its log
	return waitHeld(s, cmd.Process, exited)
}

func childEnv(s Spec) []string {
	keys := append([]string{}, s.Unset...)
	for _, e := range s.Env {
		k, _, _ := strings.Cut(e, "=")
		keys = append(keys, k)
	}
	if s.Marker != "" {
		keys = append(keys, s.Marker)
	}
	env := withoutKeys(os.Environ(), keys)
	env = append(env, s.Env...)
	if s.Marker != "" {
		env = append(env, s.Marker+"=1")
	}
	return env
}

// waitHeld waits until the child holds its lock or exits or time runs out.
func waitHeld(s Spec, p *os.Process, exited <-chan struct{}) (int, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	var pid int
	var exitedFirst bool
	clock.Wait(context.Background(), clock.Real, waitPoll, timeout, func() bool {
		select {
		case <-exited:
			exitedFirst = true
			return true
		default:
		}
		if Alive(s.LockPath) && lockPID(s.LockPath) == p.Pid && (s.Ready == nil || s.Ready(p.Pid)) {
			pid = p.Pid
		}
		return pid != 0
	})
	switch {
	case exitedFirst:
		return 0, &ExitedError{What: s.What, LogPath: s.LogPath}
	case pid != 0:
		return pid, nil
	}
	// Our own child, not yet reaped (or reaped by Wait, which Kill knows):
	// this cannot hit a recycled pid.
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return 0, fmt.Errorf("the %s did not start within %v and could not be stopped: %w (see %s)", s.What, timeout, err, s.LogPath)
	}
	// A start that failed leaves nothing running: the child may hold the
	// lock by now, and a retry must not find it there (or run beside it).
	select {
	case <-exited:
	case <-time.After(killWait):
		return 0, fmt.Errorf("the %s did not start within %v and was still there %v after SIGKILL (pid %d; see %s)", s.What, timeout, killWait, p.Pid, s.LogPath)
	}
	return 0, fmt.Errorf("the %s did not start within %v (see %s)", s.What, timeout, s.LogPath)
}
