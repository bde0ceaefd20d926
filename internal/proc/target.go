package proc

import (
	"time"
)

// Target names one process for as long as it exists. A pid alone names a
// process only until it is reaped; after that the kernel may hand the same
// number to an unrelated process, and signalling the number would hit a
// stranger. The start time (clock ticks after boot, from /proc/PID/stat)
// tells the two apart: it is compared exactly, never within a window.
//
// A Target is made by Identify (or Spawn, or SameAs), never by hand, except
// in tests. The zero Ticks means "identity unknown" and matches no process
// on Linux.
type Target struct {
	PID   int       `json:"pid"`
	Ticks int64     `json:"start_ticks"`
	Start time.Time `json:"-"` // Ticks as wall-clock time, for people and SameAs
}

// Identify returns the identity of the process pid now. A zombie is still
// identified (its pid cannot be reused until it is reaped, and its group
// may hold live children); Alive tells whether it runs. Where /proc is
// missing (macOS) the identity cannot be read: a live pid is returned with
// Ticks 0, and later checks trust the pid, as swarm always did there.
func Identify(pid int) (Target, bool) {
	if pid <= 0 {
		return Target{}, false
	}
	if !haveProc() {
		return Target{PID: pid}, Alive(pid)
	}
	st, ok := readStat(pid)
	if !ok || st.start == 0 {
		return Target{}, false
	}
	return Target{PID: pid, Ticks: st.start, Start: ticksTime(st.start)}, true
}

// matches reports whether st is the process t names.
func (t Target) matches(st stat) bool {
	return t.PID > 0 && st.pid == t.PID && t.Ticks != 0 && st.start == t.Ticks
}

// Exists reports whether t's process still exists, running or a zombie:
// its pid has not been released for reuse.
func (t Target) Exists() bool {
	if t.PID <= 0 {
		return false
	}
	if !haveProc() {
		return pidExists(t.PID)
	}
	st, ok := readStat(t.PID)
	return ok && t.matches(st)
}

// Alive reports whether t's process is still running: present, not a
// zombie, and started at exactly t's start time.
func (t Target) Alive() bool {
	if t.PID <= 0 {
		return false
	}
	if !haveProc() {
		return Alive(t.PID)
	}
	st, ok := readStat(t.PID)
	return ok && t.matches(st) && !st.dead()
}

// SpawnSlack is how far a worker record's `started` may be from its
// process's start time for SameAs to take the pid as the worker's.
//
// `started` is stamped when spawn begins, before the worktree is created
// and the process forked, so the process starts later by however long that
// takes (a large checkout: seconds). The start time read back is also off
// by up to a second (btime is whole seconds) plus any clock step since
// boot. A record written by swarm.py has the same error. Too small and
// kill refuses to stop its own worker; too large and a stranger that got
// the pid soon after the worker died matches. 30 s is the window swarm
// has always used; it only admits a stranger if the pid space wrapped
// within 30 s of the spawn. Records that store the exact Target avoid the
// guess altogether.
const SpawnSlack = 30 * time.Second

// SameAs returns pid's identity if its process (running or a zombie)
// started within slack of approxStart: for records that stored a time
// rather than the exact start ticks (worker records' `started`). A zero
// approxStart matches nothing: without a time there is no telling a
// reused pid from the worker. Where /proc is missing a live pid matches.
func SameAs(pid int, approxStart time.Time, slack time.Duration) (Target, bool) {
	t, ok := Identify(pid)
	if !ok {
		return Target{}, false
	}
	if !haveProc() {
		return t, true
	}
	if approxStart.IsZero() || t.Start.IsZero() {
		return Target{}, false
	}
	d := t.Start.Sub(approxStart)
	if d < -slack || d > slack {
		return Target{}, false
	}
	return t, true
}
