package ralph

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/testenv"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// The background monitor is started as the CLI says (the manager's
// MonitorCommand: swarm ralph run NAME, from cmd/swarm), with the
// environment entries it gives, never a command line ralph makes up.
// Without one no monitor starts.
func TestStartMonitorRunsTheInjectedCommand(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	seen := filepath.Join(t.TempDir(), "seen")
	var asked []string
	l.m.MonitorCommand = func(name string) ([]string, []string) {
		asked = append(asked, name)
		// A monitor that records how it was started and exits at once.
		return []string{"/bin/sh", "-c", `printf '%s %s %s\n' "$1" "$MARK" "$SWARM_HOME" > "$0"; exit 3`, seen, name}, []string{"MARK=1"}
	}
	_, err := StartMonitor(l.m, "w")
	if err == nil || !strings.Contains(err.Error(), "the ralph monitor exited at start") {
		t.Fatalf("StartMonitor of a monitor that exits at once: %v", err)
	}
	got, _ := os.ReadFile(seen)
	if len(asked) != 1 || asked[0] != "w" || string(got) != "w 1 "+l.m.Store.Root+"\n" {
		t.Fatalf("asked for %q; the monitor saw %q", asked, got)
	}
	l.m.MonitorCommand = nil
	if _, err := StartMonitor(l.m, "w"); err == nil || !strings.Contains(err.Error(), "no program to run") {
		t.Fatalf("StartMonitor without a monitor command: %v", err)
	}
}

// A monitor killed while a child it was forking still holds a copy of
// its lock's descriptor leaves the lock held and its pid in the file;
// until its parent reaps it, that pid is a zombie's. The settle waits for
// the lock to be freed (the child's exec), never takes the zombie for a
// live monitor: resume would otherwise start none (seen as "after resume:
// 0 monitors" in TestCrashRalphMonitor under load).
func TestSettleMonitorLockTakesNoZombieForTheMonitor(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	rs := l.m.Store.Ralph("w")
	held, err := daemon.Lock(rs.MonitorLockPath())
	if err != nil {
		t.Fatal(err)
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zombie.Wait() }() // reaped at the end
	testenv.Eventually(t, "the child to be a zombie", 10*time.Second, func() bool {
		tg, ok := proc.Identify(zombie.Process.Pid)
		return ok && tg.Exists() && !tg.Alive()
	})
	if err := os.WriteFile(rs.MonitorLockPath(), []byte(strconv.Itoa(zombie.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type settled struct {
		holder int
		free   bool
	}
	done := make(chan settled, 1)
	go func() {
		holder, free := settleMonitorLock(rs)
		done <- settled{holder, free}
	}()
	holdsFor(t, "the settle waiting while no live monitor holds the lock", 300*time.Millisecond, func() bool { return len(done) == 0 })
	if err := held.Release(); err != nil { // the forking child's exec
		t.Fatal(err)
	}
	if got := <-done; got.holder != 0 || !got.free {
		t.Errorf("settled with holder %d (the zombie is %d), free %v; want no holder and a free lock", got.holder, zombie.Process.Pid, got.free)
	}
}
