package proc

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A pid reused by a stranger is simulated by the right pid with the wrong
// start time: Terminate must not signal it. The helper reports every
// SIGTERM; our own SIGWINCH afterwards is the first thing it may report
// (a pending SIGTERM, lower-numbered, would be delivered before it).
func TestTerminateTargetRefusesAWrongStartTime(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "trap")
	if got := h.line(); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	tg, ok := Identify(h.pid())
	if !ok || !tg.Alive() || !tg.Exists() {
		t.Fatalf("Identify(%d) = %+v %v", h.pid(), tg, ok)
	}
	for _, wrong := range []Target{
		{PID: tg.PID, Ticks: tg.Ticks + 1},
		{PID: tg.PID, Ticks: tg.Ticks - 1},
		{PID: tg.PID}, // identity unknown
	} {
		if wrong.Alive() || wrong.Exists() {
			t.Errorf("%+v taken for the live process %+v", wrong, tg)
		}
		if TerminateTarget(wrong, time.Minute) {
			t.Errorf("TerminateTarget(%+v) signalled a process with another start time", wrong)
		}
	}
	syscall.Kill(h.pid(), syscall.SIGWINCH)
	if got := h.line(); got != "WINCH" {
		t.Fatalf("the stranger received %q before our probe", got)
	}
	if !tg.Alive() {
		t.Fatal("the stranger died")
	}
}

// The worker ignores SIGTERM and, when it gets it, starts a child in a
// session of its own that ignores SIGTERM too: after the grace period both
// are killed, the child found as a descendant of the snapshot.
func TestTerminateTargetKillsWhatWasBornDuringGrace(t *testing.T) {
	t.Parallel()
	pidFile := t.TempDir() + "/child.pid"
	h := startHelper(t, "spawner", pidFileEnv+"="+pidFile)
	if got := h.line(); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	tg, _ := Identify(h.pid())
	done := make(chan bool)
	go func() { done <- TerminateTarget(tg, 3*time.Second) }()
	if got := h.line(); got != "TERM" {
		t.Fatalf("helper said %q, want TERM", got)
	}
	child := readPidFile(t, pidFile)
	ct, ok := Identify(child)
	if !ok {
		t.Fatal("child gone before the grace period ended")
	}
	if !<-done {
		t.Fatal("TerminateTarget signalled nothing")
	}
	if err := h.cmd.Wait(); err == nil || h.cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("worker ended with %v, want SIGKILL", err)
	}
	waitState(t, child, "child in its own session gone", func(st stat, found bool) bool {
		return !found || st.start != ct.Ticks || st.dead()
	})
}

// A child that started its own session before the kill is found through
// the process tree and stopped with SIGTERM.
func TestTerminateTargetKillsDescendantsInNewSessions(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "parent", "PROC_TEST_SETSID=1", "PROC_TEST_STAY=1")
	child, _ := strconv.Atoi(h.line())
	if got := h.line(); got != "ready" || child <= 0 {
		t.Fatalf("helper said child %d, %q", child, got)
	}
	if st, ok := readStat(child); !ok || st.dead() || st.session != child || st.pgrp == h.pid() {
		t.Fatalf("child not in a session of its own: %+v", st)
	}
	tg, _ := Identify(h.pid())
	if !TerminateTarget(tg, 0) {
		t.Fatal("nothing signalled")
	}
	h.cmd.Wait()
	waitState(t, child, "child gone", func(st stat, found bool) bool { return !found || st.dead() })
}

// A worker that exited but has not been reaped is a zombie: it still
// identifies its group (its pid is taken), its child in that group is
// stopped, and the zombie itself does not count as alive, so Terminate
// returns without waiting out the grace period.
func TestTerminateTargetZombieRoot(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "parent")
	child, _ := strconv.Atoi(h.line())
	if child <= 0 {
		t.Fatal("no child pid")
	}
	waitState(t, h.pid(), "worker a zombie", func(st stat, found bool) bool { return found && st.dead() })
	if !Alive(child) {
		t.Fatal("child not running")
	}
	tg, ok := Identify(h.pid())
	if !ok || tg.Alive() || !tg.Exists() {
		t.Fatalf("zombie: Identify %v, Alive %v, Exists %v", ok, tg.Alive(), tg.Exists())
	}
	if Alive(h.pid()) {
		t.Error("Alive(zombie)")
	}
	const grace = time.Minute
	start := time.Now()
	if !TerminateTarget(tg, grace) {
		t.Fatal("nothing signalled")
	}
	if d := time.Since(start); d > grace/2 {
		t.Errorf("TerminateTarget waited %s on a zombie", d)
	}
	waitState(t, child, "child gone", func(st stat, found bool) bool { return !found || st.dead() })
}

// A worker that exited and was reaped, leaving a child in its group: the
// group keeps the number, OrphansOf finds the child, and the deprecated
// Terminate(pid) still stops it as it always did.
func TestOrphansOfAReapedWorker(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "parent")
	child, _ := strconv.Atoi(h.line())
	if child <= 0 {
		t.Fatal("no child pid")
	}
	h.cmd.Wait()
	if !Alive(child) {
		t.Fatal("child not running")
	}
	orphans := OrphansOf(h.pid())
	if len(orphans) != 1 || orphans[0].PID != child || !orphans[0].Alive() {
		t.Fatalf("OrphansOf = %+v, want child %d", orphans, child)
	}
	if OrphansOf(child) != nil {
		t.Error("OrphansOf a pid that exists must be nil: it names that process's group")
	}
	Terminate(h.pid(), time.Minute)
	waitState(t, child, "orphan gone", func(st stat, found bool) bool { return !found || st.dead() })
	if len(OrphansOf(h.pid())) != 0 {
		t.Error("orphans left")
	}
}

// The grace-period re-check, with /proc played by hand: pids reused by
// strangers, a child born during the grace period, our own group.
func TestTreeFollowsOnlyItsOwnProcesses(t *testing.T) {
	const self = 42
	root := Target{PID: 100, Ticks: 500}
	start := []stat{
		{pid: 100, ppid: 1, pgrp: 100, session: 100, state: "S", start: 500},
		{pid: 101, ppid: 100, pgrp: 100, session: 100, state: "S", start: 510},
		{pid: 102, ppid: 101, pgrp: 102, session: 102, state: "S", start: 520}, // own session
		{pid: 103, ppid: 1, pgrp: 103, session: 100, state: "S", start: 505},   // orphaned job
		{pid: 200, ppid: 1, pgrp: 200, session: 200, state: "S", start: 50},    // stranger
		{pid: 300, ppid: 100, pgrp: self, session: self, state: "S", start: 600},
	}
	tr := newTree(start, []Target{root}, self)
	assertGroups(t, "snapshot", tr, start, []int{100, 102, 103}, true)

	// Pid 100 and 102 were reused by a stranger and its child; 103 and its
	// group are gone: nothing of ours is left.
	reused := []stat{
		{pid: 100, ppid: 1, pgrp: 100, session: 100, state: "S", start: 900},
		{pid: 102, ppid: 100, pgrp: 102, session: 100, state: "S", start: 901},
		{pid: 104, ppid: 102, pgrp: 103, session: 100, state: "S", start: 902},
		{pid: 200, ppid: 1, pgrp: 200, session: 200, state: "S", start: 50},
	}
	assertGroups(t, "after reuse", newTreeAfter(start, root, self), reused, nil, false)

	// The root, a zombie now, started a child in a new group during the
	// grace period; the child outlives it and is reparented to init.
	born := append(start[:1:1], stat{pid: 150, ppid: 100, pgrp: 150, session: 150, state: "S", start: 700})
	born[0].state = "Z"
	tr = newTreeAfter(start, root, self)
	assertGroups(t, "born during grace", tr, born, []int{100, 150}, true)
	orphaned := []stat{{pid: 150, ppid: 1, pgrp: 150, session: 150, state: "S", start: 700}}
	assertGroups(t, "reparented", tr, orphaned, []int{150}, true)
	orphaned[0].state = "Z"
	assertGroups(t, "zombie only", tr, orphaned, []int{150}, false)

	// A root with another start time takes nothing.
	assertGroups(t, "wrong root", newTree(start, []Target{{PID: 100, Ticks: 501}}, self), start, nil, false)
}

func newTreeAfter(start []stat, root Target, self int) *tree {
	tr := newTree(start, []Target{root}, self)
	tr.groups(start)
	return tr
}

func assertGroups(t *testing.T, when string, tr *tree, all []stat, want []int, wantLive bool) {
	t.Helper()
	got, live := tr.groups(all)
	if len(got) != len(want) || live != wantLive {
		t.Fatalf("%s: groups %v live %v, want %v %v", when, got, live, want, wantLive)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: groups %v, want %v", when, got, want)
		}
	}
}

// A parent chain that looks circular (a torn read of /proc) ends.
func TestTreeSurvivesAParentCycle(t *testing.T) {
	all := []stat{
		{pid: 5, ppid: 6, pgrp: 5, start: 1},
		{pid: 6, ppid: 5, pgrp: 6, start: 1},
	}
	assertGroups(t, "cycle", newTree(all, nil, 0), all, nil, false)
}
