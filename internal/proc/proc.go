// Package proc starts and stops worker processes and their descendants.
//
// Agents start children (shells, test runners, language servers). Signalling
// only the top process leaves them running, so swarm signals whole process
// groups: the worker's own group, and on Linux every group of the session
// the worker leads (a shell with job control puts jobs in groups of their
// own).
//
// A pid names a process only until it is reaped; then the number may go to
// an unrelated process. So swarm never signals a pid it learned earlier:
// it holds a Target (pid and exact start time, see Identify) and
// TerminateTarget signals only what still belongs to it.
package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// StartSpec describes a detached process worker.
type StartSpec struct {
	Command []string
	Dir     string
	Env     []string // full environment
	Stdout  string   // log file paths
	Stderr  string
	// LogSink, when set, is a command that copies its standard input to
	// the file named by the argument appended to it, capped (swarm
	// _logpipe --max N). Stdout and stderr then go through a pipe to one
	// sink each instead of straight into the files, so a chatty worker
	// cannot fill the disk. Each sink runs in a session of its own, so
	// stopping the worker does not cut off its last words, and exits when
	// the worker and everything it started have closed the pipe.
	LogSink []string
	// Supervisor, when set, is the argv of a command that starts the
	// worker, reports its identity and records how it ended (swarm
	// _supervise ... --); the command's path and argv are appended. See
	// supervise.go.
	Supervisor []string
}

// Start runs the command in a new session (and so a new process group)
// with stdio going to the log files, and returns its pid. The process is
// not waited for: it outlives swarm. Spawn also returns its identity.
func Start(spec StartSpec) (int, error) {
	t, err := Spawn(spec)
	return t.PID, err
}

// Spawn is Start returning the process's identity, read before anything
// can reap it, so the Target is exact: record it (pid and start ticks) to
// stop the worker later without guessing from the spawn time.
func Spawn(spec StartSpec) (Target, error) {
	if len(spec.Command) == 0 {
		return Target{}, errors.New("no command")
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return Target{}, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return Target{}, err
	}
	defer func() { _ = devnull.Close() }() // read only; the child has its own copy
	stdout, err := openLog(spec.Stdout, spec.LogSink, devnull)
	if err != nil {
		return Target{}, err
	}
	defer func() { _ = stdout.Close() }() // the child's to write: this copy wrote nothing
	stderr, err := openLog(spec.Stderr, spec.LogSink, devnull)
	if err != nil {
		return Target{}, err
	}
	defer func() { _ = stderr.Close() }() // the child's to write: this copy wrote nothing
	stdio := []*os.File{devnull, stdout, stderr}
	if len(spec.Supervisor) > 0 {
		return spawnSupervised(path, spec, stdio)
	}
	return startDetached(path, spec.Command, spec.Dir, spec.Env, stdio)
}

// startDetached starts argv in a new session with the given stdio and
// returns its identity. It is reaped in the background for as long as we
// live, so a short-lived process does not linger as a zombie that looks
// alive; its identity is read first, while it cannot have been reaped.
func startDetached(path string, argv []string, dir string, env []string, files []*os.File) (Target, error) {
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir: dir, Env: env, Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return Target{}, err
	}
	t, ok := Identify(p.Pid)
	if !ok {
		t = Target{PID: p.Pid} // identity unreadable: stopping it will refuse
	}
	go func() { _, _ = p.Wait() }() // only reaps it: how it ended is not asked here
	return t, nil
}

// openLog returns the file a worker writes one of its streams to: the log
// file itself, opened for appending, or with a sink the write end of a
// pipe whose read end a new sink process copies into the log file.
func openLog(path string, sink []string, devnull *os.File) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Logs live in the state root: never opened through a symbolic link,
	// only a regular file of the user's (state.OpenFile).
	if len(sink) == 0 {
		return state.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	// The log exists when the spawn returns, whenever the sink starts;
	// one that cannot be used fails the spawn now, not the sink later.
	f, err := state.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	_ = f.Close() // opened only to make and check the log: nothing written
	bin, err := exec.LookPath(sink[0])
	if err != nil {
		return nil, fmt.Errorf("log sink: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }() // the sink holds its own copy
	argv := append(append([]string{}, sink...), path)
	if _, err := startDetached(bin, argv, "/", os.Environ(), []*os.File{r, devnull, devnull}); err != nil {
		return nil, errors.Join(fmt.Errorf("log sink: %w", err), w.Close())
	}
	return w, nil
}

// Alive reports whether pid is a live process (not a zombie).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if !pidExists(pid) {
		return false
	}
	st, ok := readStat(pid)
	return !ok || !st.dead()
}

// pidExists reports whether pid is taken, by a running process or a
// zombie.
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// GroupAlive reports whether any process of the group is alive.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// kill(-pgid, 0) succeeds while zombies remain; look closer on Linux.
	if groups, ok := scan(); ok {
		for _, st := range groups {
			if st.pgrp == pgid && !st.dead() {
				return true
			}
		}
		return false
	}
	return true
}

// StartTime returns when pid started (Linux; ok is false elsewhere or when
// the process is gone).
func StartTime(pid int) (time.Time, bool) {
	st, ok := readStat(pid)
	if !ok {
		return time.Time{}, false
	}
	t := ticksTime(st.start)
	return t, !t.IsZero()
}

// Same reports whether pid is still the process started around when: a
// recorded pid may have been reused by an unrelated process since, which
// must never be mistaken for the worker. Where start times cannot be read,
// or when is zero, a live pid counts. It is for showing status; before
// signalling, take an identity with SameAs (or better, record Spawn's).
func Same(pid int, when time.Time) bool {
	if !Alive(pid) {
		return false
	}
	start, ok := StartTime(pid)
	if !ok || when.IsZero() {
		return true
	}
	d := start.Sub(when)
	return d > -SpawnSlack && d < SpawnSlack
}

// Groups returns the process groups of a worker whose top process is pid:
// its own group plus, on Linux, every group in the session it leads and
// every group of its descendants. It is a snapshot of one moment for a pid
// that may have been reused: to signal them, use TerminateTarget, which
// checks identities.
func Groups(pid int) []int {
	groups := []int{pid}
	seen := map[int]bool{pid: true}
	all, ok := scan()
	if !ok {
		return groups
	}
	if st, ok := readStat(pid); ok && st.pgrp != pid && !seen[st.pgrp] {
		// Not a group leader: its own group is the one to signal.
		groups = []int{st.pgrp}
		seen = map[int]bool{st.pgrp: true}
	}
	children := map[int][]stat{}
	for _, st := range all {
		children[st.ppid] = append(children[st.ppid], st)
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if !seen[c.pgrp] && c.pgrp != 0 {
				seen[c.pgrp] = true
				groups = append(groups, c.pgrp)
			}
			walk(c.pid)
		}
	}
	walk(pid)
	for _, st := range all {
		if st.session == pid && !seen[st.pgrp] && st.pgrp != 0 {
			seen[st.pgrp] = true
			groups = append(groups, st.pgrp)
		}
	}
	return groups
}

// Signal sends sig to each group; groups already gone are ignored.
func Signal(groups []int, sig syscall.Signal) {
	for _, g := range groups {
		if g > 1 {
			_ = syscall.Kill(-g, sig) // a group already gone is ignored (above)
		}
	}
}
