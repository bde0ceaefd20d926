package proc

import (
	"context"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
)

// PollInterval is how often Terminate checks whether the groups are gone.
var PollInterval = 50 * time.Millisecond

// killWait bounds the wait for the groups to vanish after SIGKILL: a
// process in uninterruptible sleep (D) dies only when its I/O ends, and
// the caller must not hang on it.
const killWait = 2 * time.Second

// Terminate stops the process pid and everything it started. It is
// TerminateTarget for the process that has pid now, or, when pid is gone
// but its process group lives on, for that group's members (OrphansOf).
//
// Deprecated: a pid read earlier may belong to a stranger by now. Callers
// that hold a pid from a record or an earlier poll identify it when they
// learn it (Identify, SameAs, Spawn) and call TerminateTarget.
func Terminate(pid int, grace time.Duration) {
	if pid <= 1 {
		return
	}
	if t, ok := Identify(pid); ok {
		TerminateTarget(t, grace)
		return
	}
	TerminateTargets(OrphansOf(pid), grace)
}

// TerminateTarget stops t's process and everything it started: SIGTERM to
// every process group of its tree, SIGKILL after grace to what is left,
// then a short wait for the groups to vanish. It signals nothing unless
// t's process still exists with t's start time (a zombie counts: its pid
// is still taken, and its group may hold live children). It reports
// whether anything was signalled.
func TerminateTarget(t Target, grace time.Duration) bool {
	return TerminateTargets([]Target{t}, grace)
}

// TerminateTargets is TerminateTarget for several roots at once (the
// members of an orphaned group, say), with one grace period for all.
//
// The tree is taken once, at the start, as pid and start time of every
// member of the roots' own groups, of the groups of the sessions they
// lead, and of their descendants' groups. A group is signalled only while
// it holds a process of that tree (same pid and start time) or a
// descendant of one, so a group whose number was handed out again during
// the grace period is left alone. Each poll adds the members of the groups
// it found to the tree (a group keeps its number while it has members, so
// they are the same group's), which keeps track of children the agent
// starts during the grace period.
func TerminateTargets(roots []Target, grace time.Duration) bool {
	all, ok := scan()
	if !ok {
		return terminateBlind(roots, grace)
	}
	tr := newTree(all, roots, syscall.Getpgrp())
	groups, _ := tr.groups(all)
	if len(groups) == 0 {
		return false
	}
	Signal(groups, syscall.SIGTERM)
	if !tr.waitGone(grace) {
		all, _ = scan()
		groups, _ = tr.groups(all)
		Signal(groups, syscall.SIGKILL)
		tr.waitGone(killWait)
	}
	return true
}

// waitGone polls until no process of the tree's groups runs (true) or
// timeout passes (false). Zombies do not count: they run nothing.
func (tr *tree) waitGone(timeout time.Duration) bool {
	gone := false
	clock.Wait(context.Background(), clock.Real, PollInterval, timeout, func() bool {
		all, ok := scan()
		if !ok {
			return true // /proc unreadable: nothing more can be known
		}
		_, live := tr.groups(all)
		gone = !live
		return gone
	})
	return gone
}

// terminateBlind is Terminate where /proc is missing (macOS): nothing can
// be checked but that the pid is live, so each root's own group is
// signalled, as swarm always did there.
func terminateBlind(roots []Target, grace time.Duration) bool {
	var groups []int
	for _, t := range roots {
		if t.PID > 1 && (Alive(t.PID) || GroupAlive(t.PID)) {
			groups = append(groups, t.PID)
		}
	}
	if len(groups) == 0 {
		return false
	}
	Signal(groups, syscall.SIGTERM)
	alive := func() bool {
		for _, g := range groups {
			if GroupAlive(g) {
				return true
			}
		}
		return false
	}
	if !clock.Wait(context.Background(), clock.Real, PollInterval, grace, func() bool { return !alive() }) {
		Signal(groups, syscall.SIGKILL)
	}
	return true
}

// OrphansOf returns the members of process group pgid, and of the session
// pgid, when pgid's own process is gone: a worker that exited and left
// children behind in its group. They are taken as the worker's because a
// group keeps its number while it has members, so no new process can have
// been given it meanwhile. Only if the worker's whole group died, the pid
// space wrapped around, and the new holder of the number led a group and
// died leaving members could they be a stranger's; nothing in /proc tells
// that apart. If a process with pid pgid exists, it is that process's
// group, so the caller must Identify it instead, and nil is returned.
func OrphansOf(pgid int) []Target {
	if pgid <= 1 || !haveProc() {
		if pgid > 1 && GroupAlive(pgid) {
			return []Target{{PID: pgid}}
		}
		return nil
	}
	all, ok := scan()
	if !ok {
		return nil
	}
	var out []Target
	for _, st := range all {
		if st.pid == pgid {
			return nil
		}
		if (st.pgrp == pgid || st.session == pgid) && !st.dead() && st.start != 0 {
			out = append(out, targetOf(st))
		}
	}
	return out
}
