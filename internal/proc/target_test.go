package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

func TestIdentifySelf(t *testing.T) {
	t.Parallel()
	tg, ok := Identify(os.Getpid())
	if !ok || tg.Ticks <= 0 || !tg.Alive() || !tg.Exists() {
		t.Fatalf("Identify(self) = %+v %v", tg, ok)
	}
	if d := time.Since(tg.Start); d < 0 || d > time.Hour {
		t.Errorf("start %v is %v ago", tg.Start, d)
	}
	again, _ := Identify(os.Getpid())
	if again != tg {
		t.Errorf("identity changed: %+v then %+v", tg, again)
	}
	for _, pid := range []int{0, -1} {
		if _, ok := Identify(pid); ok {
			t.Errorf("Identify(%d) ok", pid)
		}
	}
	if (Target{}).Alive() || (Target{}).Exists() {
		t.Error("zero Target alive")
	}
}

// SameAs takes a recorded spawn time, which is near but not at the start.
func TestSameAsAllowsSlackOnly(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	tg, _ := Identify(self)
	for _, c := range []struct {
		approx time.Time
		want   bool
	}{
		{tg.Start, true},
		{tg.Start.Add(-2 * time.Second), true}, // spawn stamped before the fork
		{tg.Start.Add(2 * time.Second), true},  // btime is whole seconds
		{tg.Start.Add(-SpawnSlack - time.Second), false},
		{tg.Start.Add(-48 * time.Hour), false}, // a pid reused two days later
		{time.Time{}, false},
	} {
		got, ok := SameAs(self, c.approx, SpawnSlack)
		if ok != c.want || (ok && got != tg) {
			t.Errorf("SameAs(self, start%+v) = %+v %v, want %v", c.approx.Sub(tg.Start), got, ok, c.want)
		}
	}
	if _, ok := SameAs(0, time.Now(), SpawnSlack); ok {
		t.Error("pid 0")
	}
}

// A process that started before a record's `started` (beyond SpawnEarly,
// 3 s) existed before the spawn, so it is not the worker; the slack
// applies after it only (issue 16, item 19).
func TestSameAsRefusesAProcessOlderThanTheSpawn(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	tg, _ := Identify(self)
	for _, c := range []struct {
		started time.Duration // the record's started, from the start
		want    bool
	}{
		{4 * time.Second, false},
		{10 * time.Second, false},
		{29 * time.Second, false},
		{2 * time.Second, true},
		{-29 * time.Second, true},
	} {
		if _, ok := SameAs(self, tg.Start.Add(c.started), SpawnSlack); ok != c.want {
			t.Errorf("a process started %v before the record: SameAs %v, want %v", c.started, ok, c.want)
		}
	}
}

// Start ticks count from boot: a pid and ticks recorded in another boot
// name no process of this one, even when both are the same numbers
// (issue 16, item 19). A record without a boot id compares the ticks.
func TestTargetFromAnotherBootNeverMatches(t *testing.T) {
	t.Parallel()
	if BootID() == "" {
		t.Skip("no boot id on this system")
	}
	tg, ok := Identify(os.Getpid())
	if !ok || tg.Boot != BootID() {
		t.Fatalf("Identify(self) = %+v, want boot %s", tg, BootID())
	}
	other := tg
	other.Boot = "00000000-0000-0000-0000-000000000000"
	if other.Alive() || other.Exists() {
		t.Errorf("a target of another boot matches this process: %+v", other)
	}
	legacy := tg
	legacy.Boot = ""
	if !legacy.Alive() || !legacy.Exists() {
		t.Errorf("a target without a boot id does not match by ticks: %+v", legacy)
	}
}

// Spawn returns the exact identity, and with a log sink (here the test
// binary running logcap.Pipe) a chatty worker's logs stay capped and keep
// their last lines.
func TestSpawnWithLogSink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errLog := filepath.Join(dir, "logs", "w.stdout.log"), filepath.Join(dir, "logs", "w.stderr.log")
	const max = 2048
	tg, err := Spawn(StartSpec{
		Command: []string{os.Args[0]},
		Dir:     dir,
		Env:     append(os.Environ(), helperEnv+"=chatty"),
		Stdout:  out, Stderr: errLog,
		LogSink: []string{"env", helperEnv + "=logpipe", maxEnv + "=2048", os.Args[0]},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tg.PID <= 0 || tg.Ticks <= 0 {
		t.Fatalf("Spawn = %+v", tg)
	}
	for path, end := range map[string]string{out: "END-OUT\n", errLog: "END-ERR\n"} {
		testenv.Eventually(t, filepath.Base(path)+" complete", 20*time.Second, func() bool {
			b, _ := os.ReadFile(path)
			return strings.HasSuffix(string(b), end)
		})
		b, _ := os.ReadFile(path)
		if len(b) > max || strings.Count(string(b), "[swarm: ") != 1 {
			t.Errorf("%s: %d bytes, marker count %d", path, len(b), strings.Count(string(b), "[swarm: "))
		}
	}
}
