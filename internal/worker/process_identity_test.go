package worker

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// otherBoot is a boot id no machine has now.
const otherBoot = "00000000-0000-0000-0000-000000000000"

// stranger starts a process in a group of its own, as a process the user
// runs would be, and returns its identity.
func stranger(t *testing.T) proc.Target {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	tg, ok := proc.Identify(cmd.Process.Pid)
	if !ok {
		t.Fatal("cannot identify the process")
	}
	return tg
}

// addRecord writes w into the registry as it is.
func addRecord(t *testing.T, m *Manager, w state.Worker) {
	t.Helper()
	err := m.Store.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers, w)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A process worker's pid and start ticks recorded in another boot name no
// process of this one, even the same numbers: it is stopped, and kill
// signals nothing (issue 16, item 19). Ticks recorded in this boot (or
// with no boot id, an older record) still identify it.
func TestProcessRecordFromAnotherBootIsNotTheWorker(t *testing.T) {
	if proc.BootID() == "" {
		t.Skip("no boot id on this system")
	}
	for _, c := range []struct {
		boot    any
		running bool
	}{
		{otherBoot, false},
		{proc.BootID(), true},
		{nil, true},
	} {
		m, _, dir := newFake(t)
		tg := stranger(t)
		pid := tg.PID
		md := map[string]any{StartTicksKey: tg.Ticks}
		if c.boot != nil {
			md[BootIDKey] = c.boot
		}
		addRecord(t, m, state.Worker{Name: "p", Status: state.StatusRunning, Cmd: []string{"sleep", "60"},
			Started: state.Timestamp{Time: tg.Start}, Cwd: dir, PID: &pid, Metadata: md})
		l, err := m.Status("p")
		if err != nil {
			t.Fatal(err)
		}
		if l.Running() != c.running {
			t.Errorf("boot id %v: running %v, want %v", c.boot, l.Running(), c.running)
		}
		if c.running {
			continue
		}
		if err := m.Kill("p", KillOptions{}); err != nil {
			t.Fatal(err)
		}
		if !tg.Alive() {
			t.Errorf("kill of a record from another boot killed process %d", pid)
		}
	}
}

// A spawner recorded in another boot is not this process, even with the
// same pid and start ticks: its "starting" record is a crashed spawn,
// rolled back (issue 16, item 19).
func TestSpawnerFromAnotherBootIsGone(t *testing.T) {
	if proc.BootID() == "" {
		t.Skip("no boot id on this system")
	}
	m, _, _ := newFake(t)
	self, _ := proc.Identify(os.Getpid())
	addRecord(t, m, state.Worker{Name: "w", Status: state.StatusStarting, Started: state.Now(),
		Tmux:     &state.TmuxInfo{Session: m.Session, Window: "w"},
		Metadata: map[string]any{SpawnerKey: map[string]any{"pid": self.PID, "start_ticks": self.Ticks, "boot_id": otherBoot}}})
	live, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 0 {
		t.Errorf("a spawn whose spawner is of another boot was not rolled back: %+v", live)
	}
}

// A record without start ticks (swarm.py's) is matched by its `started`:
// a process that started well before it existed before the spawn and is
// not the worker; one that started a little after it is (issue 16, item
// 19).
func TestSwarmPyRecordMatchesOnlyAProcessStartedAfterTheSpawn(t *testing.T) {
	for _, c := range []struct {
		startedAfter time.Duration // the record's started, after the process's start
		running      bool
	}{
		{10 * time.Second, false},
		{25 * time.Second, false},
		{time.Second, true},
		{-10 * time.Second, true},
	} {
		m, _, dir := newFake(t)
		tg := stranger(t)
		pid := tg.PID
		addRecord(t, m, state.Worker{Name: "p", Status: state.StatusRunning, Cmd: []string{"sleep", "60"},
			Started: state.Timestamp{Time: tg.Start.Add(c.startedAfter)}, Cwd: dir, PID: &pid})
		l, err := m.Status("p")
		if err != nil {
			t.Fatal(err)
		}
		if l.Running() != c.running {
			t.Errorf("process started %v before the record: running %v, want %v", c.startedAfter, l.Running(), c.running)
		}
	}
}
