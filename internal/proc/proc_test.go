package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// A process worker that started a child in its own group, and one that
// ignores SIGTERM: Terminate leaves nothing behind.
func TestStartAndTerminateKillsDescendants(t *testing.T) {
	dir := t.TempDir()
	childPid := filepath.Join(dir, "child.pid")
	script := `trap '' TERM; (set -m; sleep 1000 & echo $! > ` + childPid + `; wait) & echo started; wait`
	pid, err := Start(StartSpec{
		Command: []string{"sh", "-c", script},
		Dir:     dir,
		Env:     os.Environ(),
		Stdout:  filepath.Join(dir, "out.log"),
		Stderr:  filepath.Join(dir, "err.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	testenv.Eventually(t, "child pid", 10*time.Second, func() bool {
		b, err := os.ReadFile(childPid)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0
	})
	if !Alive(pid) || !Alive(child) {
		t.Fatal("not alive after start")
	}
	Terminate(pid, 300*time.Millisecond)
	testenv.Eventually(t, "worker and child gone", 10*time.Second, func() bool { return !Alive(pid) && !Alive(child) })
	out, _ := os.ReadFile(filepath.Join(dir, "out.log"))
	if !strings.Contains(string(out), "started") {
		t.Errorf("stdout log = %q", out)
	}
}

func TestStartMissingCommand(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(StartSpec{Command: []string{"definitely-not-a-command-xyz"}, Dir: dir,
		Stdout: filepath.Join(dir, "o"), Stderr: filepath.Join(dir, "e")})
	if err == nil {
		t.Fatal("started a missing command")
	}
}

func TestSameRejectsAReusedPid(t *testing.T) {
	self := os.Getpid()
	start, ok := StartTime(self)
	if !ok || time.Since(start) < 0 || time.Since(start) > time.Hour {
		t.Fatalf("StartTime(self) = %v %v", start, ok)
	}
	if !Same(self, start.Add(2*time.Second)) {
		t.Error("own process not the same")
	}
	if Same(self, start.Add(-48*time.Hour)) {
		t.Error("a process started two days after the record counts as the worker")
	}
	if Same(0, time.Now()) {
		t.Error("pid 0")
	}
}

func TestAliveEdgeCases(t *testing.T) {
	if Alive(0) || Alive(-1) || GroupAlive(0) {
		t.Error("non-positive pid alive")
	}
	if !Alive(os.Getpid()) {
		t.Error("self not alive")
	}
}
