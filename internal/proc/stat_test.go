package proc

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	st, ok := parseStat("123 (my (odd) cmd) S 1 120 110 0 -1")
	if !ok || st.pid != 123 || st.state != "S" || st.ppid != 1 || st.pgrp != 120 || st.session != 110 || st.start != 0 {
		t.Fatalf("parseStat = %+v %v", st, ok)
	}
	for _, bad := range []string{"garbage", "", "(x) S 1 2 3", "1 (x) S", "1 (x) S a 2 3", ") 1 (x S 1 2 3", "-4 (x) S 1 2 3"} {
		if st, ok := parseStat(bad); ok {
			t.Errorf("parseStat(%q) = %+v", bad, st)
		}
	}
}

// statLine formats a /proc/PID/stat line as the kernel does, with the
// start time in field 22.
func statLine(pid int, comm, state string, ppid, pgrp, session int, start int64) string {
	return fmt.Sprintf("%d (%s) %s %d %d %d 34816 %d 4194560 100 0 0 0 3 1 0 0 20 0 1 0 %d 5558272 207 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, comm, state, ppid, pgrp, session, pgrp, start)
}

// The command name is the process's to choose (prctl, or the file name):
// spaces, parentheses, newlines and fake fields must not shift the fields.
func FuzzParseStat(f *testing.F) {
	for _, comm := range []string{"sleep", "my (odd) cmd", ") S 1 2 3 4", "a)b)c", "((", "tmux: server", "x\ny) Z 9 9 9", "", " "} {
		f.Add(comm, 4242, 1, 4242, 4242, int64(123456), "garbage")
	}
	f.Add("", 1, 0, 0, 0, int64(1), "1 (x) S 1 2 3")
	f.Fuzz(func(t *testing.T, comm string, pid, ppid, pgrp, session int, start int64, junk string) {
		parseStat(junk) // must not panic
		if st, ok := parseStat(junk); ok && st.pid <= 0 {
			t.Fatalf("parseStat(%q) ok with pid %d", junk, st.pid)
		}
		if pid <= 0 || ppid < 0 || pgrp < 0 || session < 0 || start <= 0 || strings.ContainsRune(comm, 0) {
			return
		}
		line := statLine(pid, comm, "S", ppid, pgrp, session, start)
		st, ok := parseStat(line)
		want := stat{pid: pid, ppid: ppid, pgrp: pgrp, session: session, state: "S", start: start}
		if !ok || st != want {
			t.Fatalf("parseStat(%q) = %+v %v, want %+v", line, st, ok, want)
		}
	})
}
