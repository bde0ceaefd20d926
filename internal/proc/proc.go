// Package proc starts and stops worker processes and their descendants.
//
// Agents start children (shells, test runners, language servers). Signalling
// only the top process leaves them running, so swarm signals whole process
// groups: the worker's own group, and on Linux every group of the session
// the worker leads (a shell with job control puts jobs in groups of their
// own).
package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// StartSpec describes a detached process worker.
type StartSpec struct {
	Command []string
	Dir     string
	Env     []string // full environment
	Stdout  string   // log file paths
	Stderr  string
}

// Start runs the command in a new session (and so a new process group)
// with stdio going to the log files, and returns its pid. The process is
// not waited for: it outlives swarm.
func Start(spec StartSpec) (int, error) {
	if len(spec.Command) == 0 {
		return 0, errors.New("no command")
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return 0, err
	}
	open := func(p string) (*os.File, error) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		return os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	stdout, err := open(spec.Stdout)
	if err != nil {
		return 0, err
	}
	defer stdout.Close()
	stderr, err := open(spec.Stderr)
	if err != nil {
		return 0, err
	}
	defer stderr.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	attr := &os.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: []*os.File{devnull, stdout, stderr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	p, err := os.StartProcess(path, spec.Command, attr)
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	// Reap it in the background for as long as we live, so a short-lived
	// worker does not linger as a zombie that looks alive.
	go p.Wait()
	return pid, nil
}

// Alive reports whether pid is a live process (not a zombie).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	st, ok := readStat(pid)
	return !ok || !st.dead()
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
// must never be mistaken for the worker (or signalled). Where start times
// cannot be read, a live pid counts.
func Same(pid int, when time.Time) bool {
	if !Alive(pid) {
		return false
	}
	start, ok := StartTime(pid)
	if !ok || when.IsZero() {
		return true
	}
	d := start.Sub(when)
	return d > -30*time.Second && d < 30*time.Second
}

// Groups returns the process groups to signal for a worker whose top
// process is pid: its own group plus, on Linux, every group in the session
// it leads and every group of its descendants.
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
			syscall.Kill(-g, sig)
		}
	}
}

// PollInterval is how often Terminate checks whether the groups are gone.
var PollInterval = 50 * time.Millisecond

// Terminate stops the worker whose top process is pid: SIGTERM to all its
// process groups, then SIGKILL to whatever is left after grace. It returns
// once every group is gone or the SIGKILL has been sent.
func Terminate(pid int, grace time.Duration) {
	if pid <= 1 {
		return
	}
	groups := Groups(pid)
	Signal(groups, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !anyAlive(groups) {
			return
		}
		time.Sleep(PollInterval)
	}
	// Descendants may have formed new groups during the grace period.
	for _, g := range Groups(pid) {
		if !contains(groups, g) {
			groups = append(groups, g)
		}
	}
	Signal(groups, syscall.SIGKILL)
	end := time.Now().Add(2 * time.Second)
	for anyAlive(groups) && time.Now().Before(end) {
		time.Sleep(PollInterval)
	}
}

// anyAlive reports whether any process of the groups lives, with one scan
// of /proc for all of them (Terminate checks this every 50 ms).
func anyAlive(groups []int) bool {
	all, ok := scan()
	if !ok {
		for _, g := range groups {
			if GroupAlive(g) {
				return true
			}
		}
		return false
	}
	for _, st := range all {
		if !st.dead() && contains(groups, st.pgrp) {
			return true
		}
	}
	return false
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
