package memtrim

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func TestExecutableMappings(t *testing.T) {
	maps := []byte(`00400000-0099d000 r-xp 00000000 fd:01 1234 /work/bin/swarm
0099d000-01007000 r--p 0059d000 fd:01 1234 /work/bin/swarm
01007000-010d4000 rw-p 00c07000 fd:01 1234 /work/bin/swarm
010d4000-0333b000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fd:01 99 /usr/lib/other.so
7f0000002000-7f0000003000 r--p 00000000 fd:02 1234 /other/fs/same-inode
7f0000004000-7f0000005000 r--s 00000000 fd:01 1234 /work/bin/swarm
garbage
`)
	got := executableMappings(maps, 0xfd, 0x01, 1234)
	want := []mapping{{0x400000, 0x99d000}, {0x99d000, 0x1007000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// value is written before a Trim and read after: a writable mapping
// dropped would read back as the file's bytes (zero), not the value.
var value = []int{1}

func TestTrimDropsTheExecutablesPagesAndKeepsItsVariables(t *testing.T) {
	value[0] = 42
	before := executableRss(t)
	if err := Trim(); err != nil {
		t.Fatal(err)
	}
	after := executableRss(t)
	if value[0] != 42 {
		t.Fatalf("a variable changed across Trim: %d", value[0])
	}
	// The test binary's start-up mapped much of it; after Trim only what
	// ran since (the collection, this test's reads of /proc) is mapped
	// again. Without Trim, after is before or more.
	if before == 0 || after > before-droppedAtLeast {
		t.Fatalf("resident pages of the executable: %d kB before Trim, %d kB after", before, after)
	}
	t.Logf("resident pages of the executable: %d kB before Trim, %d kB after", before, after)
}

// droppedAtLeast is the least Trim must drop here, in kB: 64 pages (in
// this test binary it drops about 1 MB of 2.7).
const droppedAtLeast = 256

// executableRss sums the Rss of the executable's read-only mappings in
// /proc/self/smaps, in kB.
func executableRss(t *testing.T) int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	ours := false
	total := 0
	for line := range bytes.SplitSeq(smaps, []byte("\n")) {
		f := bytes.Fields(line)
		switch {
		case len(f) >= 5 && bytes.Contains(f[0], []byte("-")) && !bytes.HasSuffix(f[0], []byte(":")):
			ino, _ := strconv.ParseUint(string(f[4]), 10, 64)
			ours = ino == st.Ino && (string(f[1]) == "r-xp" || string(f[1]) == "r--p")
		case ours && len(f) >= 2 && string(f[0]) == "Rss:":
			n, _ := strconv.Atoi(string(f[1]))
			total += n
		}
	}
	return total
}
