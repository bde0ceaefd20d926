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
// Ticks count from boot, so after a reboot the same pid and ticks can name
// a new process: Boot, the boot id of the boot the process started in
// (BootID), tells the boots apart. An empty Boot (a record written before
// swarm stored it) compares the ticks alone.
//
// A Target is made by Identify (or Spawn, or SameAs), never by hand, except
// in tests. The zero Ticks means "identity unknown" and matches no process
// on Linux.
type Target struct {
	PID   int       `json:"pid"`
	Ticks int64     `json:"start_ticks"`
	Boot  string    `json:"boot_id,omitempty"`
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
	return targetOf(st), true
}

// targetOf is the identity of a process read from /proc now: in this boot.
func targetOf(st stat) Target {
	return Target{PID: st.pid, Ticks: st.start, Boot: BootID(), Start: ticksTime(st.start)}
}

// matches reports whether st (read now, in this boot) is the process t
// names: same pid, same start ticks, and, when t knows its boot, this
// boot.
func (t Target) matches(st stat) bool {
	return t.PID > 0 && st.pid == t.PID && t.Ticks != 0 && st.start == t.Ticks &&
		(t.Boot == "" || t.Boot == BootID())
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

// SpawnSlack is how much later than a worker record's `started` its
// process may have started for SameAs to take the pid as the worker's.
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

// SpawnEarly is how much earlier than a record's `started` its process may
// have started for SameAs to take it as the worker's. The window is not
// symmetric: a process that existed before the spawn is not the one the
// spawn started. It is small, not zero: a writer may stamp `started` just
// after it forked the process (a loaded machine: a second or more), and
// the start time read back is off by up to a second (btime is whole
// seconds).
const SpawnEarly = 3 * time.Second

// SameAs returns pid's identity if its process (running or a zombie)
// started at most SpawnEarly before approxStart, or at most slack after
// it: for records that stored a time rather than the exact start ticks
// (worker records' `started`). A zero approxStart matches nothing: without
// a time there is no telling a reused pid from the worker. Where /proc is
// missing a live pid matches.
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
	if d < -SpawnEarly || d > slack {
		return Target{}, false
	}
	return t, true
}
