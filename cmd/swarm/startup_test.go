package main

// Start-up: every command pays for its package initialisation, so it is
// held to a budget here (docs/development.md, "Start-up").

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Init budgets, in allocations: those are the same from run to run, time
// is not. Package initialisation compiles no regexp, builds no large
// table and queries no terminal: what a command needs is made when it
// runs (sync.OnceValue). In allocations, the whole of it took 3189 before
// that (internal/state's name regexp 890, internal/ready's screen
// patterns 881, internal/agent's 676, Bubble Tea's 216) and about 450
// after; net/http, linked since notifications post to webhooks, adds
// about 50 of its own.
const (
	initAllocBudget   = 650 // every package's init together
	initPackageAllocs = 100 // any one package's
)

// initStat is one package's line of GODEBUG=inittrace=1.
type initStat struct {
	pkg           string
	clock         float64 // ms
	bytes, allocs int
}

// readInitTrace parses "init PKG @T ms, C ms clock, B bytes, A allocs".
func readInitTrace(t *testing.T, stderr []byte) []initStat {
	t.Helper()
	var stats []initStat
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," || f[10] != "allocs" {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		b, err2 := strconv.Atoi(f[7])
		a, err3 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		stats = append(stats, initStat{pkg: f[1], clock: clock, bytes: b, allocs: a})
	}
	if len(stats) == 0 {
		t.Fatalf("no inittrace lines in:\n%s", stderr)
	}
	return stats
}

// TestStartupInitBudget runs swarm --version with GODEBUG=inittrace=1 and
// fails when package initialisation allocates more than its budget, in
// all or in any one package. go test -v prints the totals and the
// heaviest packages.
func TestStartupInitBudget(t *testing.T) {
	t.Parallel()
	swarm, _ := testenv.Binaries(t)
	cmd := exec.Command(swarm, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "swarm ") {
		t.Fatalf("swarm --version: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	stats := readInitTrace(t, stderr.Bytes())
	var total initStat
	for _, s := range stats {
		total.clock += s.clock
		total.bytes += s.bytes
		total.allocs += s.allocs
		if s.allocs > initPackageAllocs {
			t.Errorf("init of %s: %d allocations (%d bytes), over the budget of %d: make what it builds at init on first use", s.pkg, s.allocs, s.bytes, initPackageAllocs)
		}
	}
	t.Logf("init: %d packages, %d allocations, %d bytes, %.2f ms", len(stats), total.allocs, total.bytes, total.clock)
	sort.Slice(stats, func(i, j int) bool { return stats[i].allocs > stats[j].allocs })
	for _, s := range stats[:min(5, len(stats))] {
		t.Logf("  %-50s %4d allocations %7d bytes %.3f ms", s.pkg, s.allocs, s.bytes, s.clock)
	}
	if total.allocs > initAllocBudget {
		t.Errorf("init allocates %d times in all, over the budget of %d", total.allocs, initAllocBudget)
	}
}

// BenchmarkStartup runs a Go hello-world and swarm --version in turn, both
// built here as make build builds swarm (CGO_ENABLED=0, -trimpath, -s -w),
// and reports each one's median wall time and their ratio (the target is
// at most 1.5x):
//
//	go test -run XXX -bench Startup -benchtime 500x ./cmd/swarm
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	hello, swarm := filepath.Join(dir, "hello"), filepath.Join(dir, "swarm")
	for _, c := range [][2]string{{hello, src}, {swarm, "."}} {
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", c[0], c[1])
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", c[1], err, out)
		}
	}
	run := func(path string, args ...string) time.Duration {
		start := time.Now()
		if err := exec.Command(path, args...).Run(); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		return time.Since(start)
	}
	var hellos, swarms []time.Duration
	for b.Loop() {
		hellos = append(hellos, run(hello))
		swarms = append(swarms, run(swarm, "--version"))
	}
	h, s := median(hellos), median(swarms)
	b.ReportMetric(float64(h.Microseconds())/1000, "ms/hello")
	b.ReportMetric(float64(s.Microseconds())/1000, "ms/swarm-version")
	b.ReportMetric(float64(s)/float64(h), "ratio")
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}
