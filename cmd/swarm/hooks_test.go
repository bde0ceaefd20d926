package main

// The worker hooks every manager gets (hooks.go).

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/state"
)

// The manager's hooks end a worker's heartbeat on kill and clean, and
// leave everything else to ralph's hooks.
func TestWorkerHooksStopHeartbeat(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := newFactory(&IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, root)
	m, err := f.Manager()
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.Hooks.(*workerHooks)
	if !ok {
		t.Fatalf("manager hooks are %T, want *workerHooks", m.Hooks)
	}
	store := heartbeat.NewStore(root, nil)
	status := func(name string) string {
		st, err := store.Load(name)
		if err != nil || st == nil {
			t.Fatalf("heartbeat of %s: %v, %v", name, st, err)
		}
		return st.Status
	}
	hbPut(t, root, "k", heartbeat.StatusActive)
	if err := h.BeforeKill(&state.Worker{Name: "k"}); err != nil || status("k") != heartbeat.StatusStopped {
		t.Errorf("BeforeKill: %v, heartbeat %s", err, status("k"))
	}
	hbPut(t, root, "c", heartbeat.StatusPaused)
	h.AfterClean("c")
	if status("c") != heartbeat.StatusStopped {
		t.Errorf("AfterClean: heartbeat %s", status("c"))
	}
	// No heartbeat, no loop: nothing to do, no error.
	if err := h.BeforeKill(&state.Worker{Name: "plain"}); err != nil || h.LoopActive("plain") {
		t.Errorf("BeforeKill of a plain worker: %v, loop active %v", err, h.LoopActive("plain"))
	}
	if st, _ := store.Load("plain"); st != nil {
		t.Errorf("BeforeKill created a heartbeat: %+v", st)
	}
}

// The hooks' warnings (a heartbeat that will not stop) go to the
// manager's Warn as it is when they are given, not as it was when the
// hooks were made: kill --all puts in its place one that lets its
// concurrent kills' warnings through one at a time.
func TestWorkerHooksWarnThroughTheManagersWarnOfNow(t *testing.T) {
	t.Parallel()
	var first, now []string
	m := newManager(t.TempDir(), func(s string) { first = append(first, s) })
	m.Warn = func(s string) { now = append(now, s) }
	m.Hooks.(*workerHooks).warn("cannot stop the heartbeat")
	if len(first) != 0 || len(now) != 1 {
		t.Errorf("warned through the Warn the hooks were made with: %q, the manager's: %q", first, now)
	}
}
