package memtrim

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// smapsSample has the mappings of a position-independent build: its
// relocated read-only data (GNU_RELRO) holds private copies.
const smapsSample = `00400000-0099d000 r-xp 00000000 00:27 1234 /work/bin/swarm
Size:               5748 kB
Rss:                5040 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
0099d000-01007000 r--p 0059d000 00:27 1234 /work/bin/swarm
Rss:                4720 kB
Anonymous:             0 kB
01007000-01008000 r--p 00c07000 00:27 1234 /work/bin/swarm
Rss:                   4 kB
Anonymous:             4 kB
01008000-010d4000 rw-p 00c08000 00:27 1234 /work/bin/swarm
Anonymous:           308 kB
010d4000-0333b000 rw-p 00000000 00:00 0
Anonymous:           124 kB
7f0000000000-7f0000001000 r--p 00000000 00:27 99 /usr/lib/other.so
Anonymous:             0 kB
7f0000002000-7f0000003000 r--p 00000000 00:28 1234 /other/fs/same-inode
Anonymous:             0 kB
7f0000004000-7f0000005000 r--s 00000000 00:27 1234 /work/bin/swarm
Anonymous:             0 kB
7f0000006000-7f0000007000 r--p 00000000 00:27 1234 /work/bin/swarm (no Anonymous line)
garbage
`

func TestCleanExecutableMappings(t *testing.T) {
	got, err := cleanExecutableMappings([]byte(smapsSample), 0x401234)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].start != 0x400000 || got[0].end != 0x99d000 || got[1].start != 0x99d000 || got[1].end != 0x1007000 {
		t.Fatalf("got %+v", got)
	}
	if _, err := cleanExecutableMappings([]byte(smapsSample), 0x10); err == nil {
		t.Fatal("a program counter in no mapping: no error")
	}
}

// value is written before a Trim and read after: were a writable mapping
// dropped, it would read back as the file's bytes (1), not 42.
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

// executableRss sums the Rss of the executable's read-only mappings, in
// kB, found as Trim finds them.
func executableRss(t *testing.T) int {
	t.Helper()
	pc, _, _, _ := runtime.Caller(0)
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	file := ""
	for _, m := range parseSmaps(smaps) {
		if m.start <= uint64(pc) && uint64(pc) < m.end {
			file = m.file
		}
	}
	total, ours := 0, false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && !strings.HasSuffix(f[0], ":"):
			ours = f[3]+" "+f[4] == file && (f[1] == "r-xp" || f[1] == "r--p")
		case ours && len(f) >= 2 && f[0] == "Rss:":
			var n int
			for _, c := range f[1] {
				n = 10*n + int(c-'0')
			}
			total += n
		}
	}
	return total
}

// A position-independent build (what distributions build with
// GOFLAGS=-buildmode=pie) has read-only data the dynamic loader
// relocated: Trim must leave it, or the program crashes at its next
// allocation (found by a review: SIGSEGV right after Trim).
func TestTrimInAPIEBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "trimpie")
	build := exec.Command(goBin, "build", "-buildmode=pie", "-o", bin, "./testdata/trimpie")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildmode=pie: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok 1000 w0") {
		t.Fatalf("the PIE program after Trim: %v\n%s", err, out)
	}
}
