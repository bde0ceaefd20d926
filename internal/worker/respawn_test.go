package worker

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// claimBy writes a respawn claim by the process t into worker name's record.
func claimBy(t *testing.T, m *Manager, name string, tg proc.Target) {
	t.Helper()
	err := m.SetMetadata(name, map[string]any{respawnerKey: map[string]any{
		"pid": tg.PID, "start_ticks": tg.Ticks, "boot_id": tg.Boot, "token": "theirs"}}, "")
	if err != nil {
		t.Fatal(err)
	}
}

// A worker another live command is respawning is refused at once, with
// that command's pid, and nothing is stopped or started (issue 16, item
// 9). A claim whose command is gone (killed half way, or of another
// boot) is void: the respawn goes ahead and clears it.
func TestRespawnOfAWorkerBeingRespawnedFails(t *testing.T) {
	m, srv, dir := newFake(t)
	if _, err := m.Spawn(SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	self, _ := proc.Identify(os.Getpid())
	claimBy(t, m, "w", self)
	windows, kills := srv.Calls["NewWindow"], srv.Calls["KillWindow"]
	_, err := m.Respawn("w", RespawnOptions{})
	want := "worker 'w' is being respawned by another command (pid " + strconv.Itoa(self.PID) + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("respawn of a worker being respawned: %v, want %q", err, want)
	}
	if srv.Calls["NewWindow"] != windows || srv.Calls["KillWindow"] != kills {
		t.Errorf("the refused respawn made or killed a window:\n%s", srv.Summary())
	}
	if l, _ := m.Status("w"); !l.Running() {
		t.Errorf("the refused respawn stopped the worker")
	}

	gone := self
	gone.Boot = "00000000-0000-0000-0000-000000000000"
	for _, stale := range []proc.Target{gone, {PID: self.PID, Ticks: self.Ticks + 1}} {
		claimBy(t, m, "w", stale)
		if _, err := m.Respawn("w", RespawnOptions{}); err != nil {
			t.Fatalf("respawn over a void claim %+v: %v", stale, err)
		}
		w, _ := m.Get("w")
		if _, ok := w.Metadata[respawnerKey]; ok || w.Status != state.StatusRunning {
			t.Errorf("after the respawn: %+v", w)
		}
	}
}

// A respawn that fails releases its claim: the next one is not refused.
func TestFailedRespawnReleasesItsClaim(t *testing.T) {
	m, srv, dir := newFake(t)
	if _, err := m.Spawn(SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	srv.FailNewWindow = errors.New("no server running")
	if _, err := m.Respawn("w", RespawnOptions{}); err == nil {
		t.Fatal("respawn succeeded")
	}
	w, _ := m.Get("w")
	if _, ok := w.Metadata[respawnerKey]; ok {
		t.Errorf("the failed respawn left its claim: %v", w.Metadata)
	}
	srv.FailNewWindow = nil
	if _, err := m.Respawn("w", RespawnOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A worker removed (clean) or respawned by someone else after the claim
// is not started again by the claiming respawn.
func TestReservationChecksTheClaim(t *testing.T) {
	rec := &state.Worker{Name: "w", Metadata: map[string]any{respawnerKey: map[string]any{"token": "mine"}}}
	other := &state.Worker{Name: "w", Metadata: map[string]any{respawnerKey: map[string]any{"token": "theirs"}}}
	for _, c := range []struct {
		old  *state.Worker
		want string
	}{
		{nil, "was removed while it was being respawned"},
		{other, "was changed by another command"},
		{&state.Worker{Name: "w"}, "was changed by another command"},
		{rec, ""},
	} {
		err := checkClaim(c.old, rec)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkClaim(%+v) = %v, want %q", c.old, err, c.want)
		}
	}
	if err := checkClaim(nil, &state.Worker{Name: "w"}); err != nil {
		t.Errorf("a replace without a claim: %v", err)
	}
}
