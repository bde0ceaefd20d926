package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stat is the part of /proc/PID/stat that swarm needs.
type stat struct {
	pid, ppid, pgrp, session int
	state                    string
	start                    int64 // clock ticks after boot (field 22)
}

// dead reports a process that has exited: a zombie waiting for its parent
// (Z) or one being torn down (X). Its pid stays taken until it is reaped,
// so it still identifies the process, but it runs nothing.
func (st stat) dead() bool { return st.state == "Z" || st.state == "X" }

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// statStartField is the index of starttime (field 22 of proc(5)) among the
// fields after the command name, which begin with field 3 (state).
const statStartField = 22 - 3

// haveProc reports whether /proc is there to check identities with
// (Linux). Elsewhere a live pid is all there is to go on.
var haveProc = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
})

// bootTime is read once: ls refreshes every process worker with it.
var bootTime = sync.OnceValue(func() time.Time {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			if boot, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return time.Unix(boot, 0)
			}
		}
	}
	return time.Time{}
})

// bootIDPath holds the kernel's random id of the current boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// bootID is read once: it cannot change while this process runs.
var bootID = sync.OnceValue(func() string {
	data, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
})

// BootID is the id of the current boot ("" where the kernel has none to
// read, as outside Linux). Start ticks count from boot: a pid and ticks
// recorded in an earlier boot can name a new process in this one, so
// identities are stored with it (Target.Boot).
func BootID() string { return bootID() }

// ticksTime converts a start time in clock ticks after boot to wall-clock
// time. It is only as exact as btime (whole seconds) and as the clock has
// stayed since boot, which is why identities compare ticks, not times.
func ticksTime(ticks int64) time.Time {
	boot := bootTime()
	if ticks <= 0 || boot.IsZero() {
		return time.Time{}
	}
	return boot.Add(time.Duration(ticks) * time.Second / clockTicks)
}

func readStat(pid int) (stat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	return parseStat(string(data))
}

// parseStat reads /proc/PID/stat. The command name is in parentheses and
// may itself contain spaces, parentheses and newlines, so the fields are
// taken after the last ')'. A line too short to hold a start time parses
// with start 0 (unknown), which never matches an identity.
func parseStat(s string) (stat, bool) {
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil || pid <= 0 {
		return stat{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 4 {
		return stat{}, false
	}
	st := stat{pid: pid, state: f[0]}
	var errs [3]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.pgrp, errs[1] = strconv.Atoi(f[2])
	st.session, errs[2] = strconv.Atoi(f[3])
	for _, err := range errs {
		if err != nil {
			return stat{}, false
		}
	}
	if len(f) > statStartField {
		if start, err := strconv.ParseInt(f[statStartField], 10, 64); err == nil && start > 0 {
			st.start = start
		}
	}
	return st, true
}

// scan reads every process's stat; ok is false where /proc is missing.
func scan() ([]stat, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	var out []stat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out, true
}
