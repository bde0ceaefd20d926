package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// newFake returns a manager on a temp state root whose tmux is a fake.
func newFake(t *testing.T) (*Manager, *tmuxtest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	srv := tmuxtest.New()
	m := New(filepath.Join(dir, "home"), nil)
	m.TmuxFor = func(tmux.Server) Tmux { return srv }
	m.KillGrace = time.Second
	return m, srv, dir
}

// recordingHooks records the hook calls in order (KillAll's kills call
// them from goroutines of their own).
type recordingHooks struct {
	mu     sync.Mutex
	calls  []string
	active map[string]bool
	// held maps a worker to the status of the loop that holds it against
	// clean; resumed names loops resumed between clean's first look and
	// its removal of the record: only RemoveUnlessLoopHolds sees them.
	held    map[string]string
	resumed map[string]bool
}

func (h *recordingHooks) BeforeKill(w *state.Worker) error {
	h.record("before-kill " + w.Name)
	return nil
}
func (h *recordingHooks) record(call string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, call)
}
func (h *recordingHooks) AfterKill(w *state.Worker) { h.record("after-kill " + w.Name) }
func (h *recordingHooks) AfterClean(name string)    { h.record("after-clean " + name) }
func (h *recordingHooks) LoopActive(name string) bool {
	return h.active[name]
}
func (h *recordingHooks) LoopHolds(name string) string { return h.held[name] }
func (h *recordingHooks) RemoveUnlessLoopHolds(name string, remove func() error) error {
	h.record("remove " + name)
	if h.held[name] != "" {
		return &LoopHoldsError{Status: h.held[name]}
	}
	if h.resumed[name] {
		return &LoopHoldsError{Status: string(state.RalphRunning)}
	}
	return remove()
}

func names(t *testing.T, m *Manager) []string {
	t.Helper()
	reg, err := m.Store.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range reg.Workers {
		out = append(out, w.Name)
	}
	return out
}

func TestSpawnTmuxWorkerRecordsWindowAndEnv(t *testing.T) {
	m, srv, dir := newFake(t)
	res, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh", "-c", "x"}, Tmux: true, Cwd: dir, Env: []string{"K=a b=c"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Worker.Tmux == nil || res.Worker.Tmux.Window != "w1" || res.Worker.Env["K"] != "a b=c" {
		t.Fatalf("record: %+v", res.Worker)
	}
	p := srv.Window("w1")
	// The command, under the shell that records how it ends.
	token, _ := res.Worker.Metadata[WindowTokenKey].(string)
	want := strings.Join(windowCommand(m.Store.WindowExitPath("w1"), token, []string{"sh", "-c", "x"}), " ")
	if p == nil || p.Session != m.Session || strings.Join(p.Commands[0], " ") != want {
		t.Fatalf("window:\n%s", srv.Summary())
	}
	l, err := m.Status("w1")
	if err != nil || !l.Running() || l.WindowID != p.ID {
		t.Fatalf("status: %+v %v", l, err)
	}
}

func TestSpawnRollsBackWhenTheWindowFails(t *testing.T) {
	m, srv, dir := newFake(t)
	srv.FailNewWindow = errors.New("no server running")
	_, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir})
	if err == nil || !strings.HasPrefix(err.Error(), "failed to create tmux window: ") {
		t.Fatalf("err = %v", err)
	}
	if n := names(t, m); len(n) != 0 {
		t.Fatalf("records left: %v", n)
	}
}

func TestSpawnRollsBackTheWorktreeItMade(t *testing.T) {
	m, srv, dir := newFake(t)
	repo := filepath.Join(dir, "repo")
	gitInit(t, repo)
	srv.FailNewWindow = errors.New("no server running")
	_, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: repo, Worktree: true})
	if err == nil {
		t.Fatal("spawn succeeded")
	}
	if _, serr := os.Stat(filepath.Join(dir, "repo-worktrees", "w1")); !os.IsNotExist(serr) {
		t.Fatalf("worktree left behind: %v", serr)
	}
	if out, _ := exec.Command("git", "-C", repo, "branch", "--list", "w1").Output(); strings.TrimSpace(string(out)) != "" {
		t.Fatalf("branch left behind: %q", out)
	}
}

// A rollback that cannot undo everything says what it left, after the
// spawn's own error: here the worktree it made holds work by the time the
// window fails, and is kept (never removed with work in it).
func TestSpawnReportsAnUndoThatFails(t *testing.T) {
	m, _, dir := newFake(t)
	repo := filepath.Join(dir, "repo")
	gitInit(t, repo)
	wt := filepath.Join(dir, "repo-worktrees", "w1")
	m.ExecVia = func(string) []string {
		if err := os.WriteFile(filepath.Join(wt, "work.txt"), []byte("work\n"), 0o644); err != nil {
			t.Error(err)
		}
		return nil // no wrapper: the window cannot start
	}
	_, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: repo, Worktree: true})
	if err == nil {
		t.Fatal("spawn succeeded")
	}
	first, rest, _ := strings.Cut(err.Error(), "\n")
	if !strings.HasPrefix(first, "failed to create tmux window: ") {
		t.Errorf("first line %q: the spawn's error comes first", first)
	}
	if !strings.HasPrefix(rest, "and undoing the spawn failed: ") || !strings.Contains(rest, wt) {
		t.Errorf("the failed undo is not reported: %q", err)
	}
	if n := names(t, m); len(n) != 0 {
		t.Fatalf("records left: %v (every other step is undone)", n)
	}
}

func TestSpawnRefusesAnExistingNameAndChangesNothing(t *testing.T) {
	m, srv, dir := newFake(t)
	if _, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"true"}, Tmux: true, Cwd: dir})
	if err == nil || err.Error() != "worker 'w1' already exists" {
		t.Fatalf("err = %v", err)
	}
	if w, _ := m.Get("w1"); w.Cmd[0] != "sh" || srv.Calls["NewWindow"] != 1 {
		t.Fatalf("existing worker changed: %+v, %d windows made", w, srv.Calls["NewWindow"])
	}
}

func TestSpawnRejectsBadInputBeforeCreatingAnything(t *testing.T) {
	m, srv, dir := newFake(t)
	cases := []struct {
		o    SpawnOptions
		want string
	}{
		{SpawnOptions{Name: "../x", Command: []string{"sh"}}, "invalid worker name"},
		{SpawnOptions{Name: "w", Command: nil}, "no command provided"},
		{SpawnOptions{Name: "w", Command: []string{"sh"}, Env: []string{"NOEQUALS"}}, "invalid env format 'NOEQUALS'"},
		{SpawnOptions{Name: "w", Command: []string{"sh"}, Cwd: filepath.Join(dir, "missing")}, "directory not found"},
		{SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Session: "a:b"}, "invalid session name"},
		{SpawnOptions{Name: "w", Command: []string{"no-such-agent-cmd"}, Tmux: true, Cwd: dir}, "failed to create tmux window: command not found: no-such-agent-cmd"},
		{SpawnOptions{Name: "w", Command: []string{"sh"}, Worktree: true, Cwd: dir}, "not in a git repository"},
	}
	for _, c := range cases {
		_, err := m.Spawn(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.o, err, c.want)
		}
	}
	if n := names(t, m); len(n) != 0 || srv.Calls["NewWindow"] != 0 {
		t.Fatalf("made something: records %v, windows %d", n, srv.Calls["NewWindow"])
	}
}

func TestRespawnFailureKeepsTheRecord(t *testing.T) {
	m, srv, dir := newFake(t)
	if _, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir, Tags: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	srv.FailNewWindow = errors.New("no server running")
	if _, err := m.Respawn("w1", RespawnOptions{}); err == nil {
		t.Fatal("respawn succeeded")
	}
	w, err := m.Get("w1")
	if err != nil || w.Status != state.StatusStopped || w.Tags[0] != "t" || w.Cmd[0] != "sh" {
		t.Fatalf("record after failed respawn: %+v %v", w, err)
	}
	srv.FailNewWindow = nil
	if _, err := m.Respawn("w1", RespawnOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, _ := m.Status("w1"); !l.Running() {
		t.Fatal("not running after respawn")
	}
}

func TestKillCallsHooksAroundTheStopAndKeepsTheRecord(t *testing.T) {
	m, srv, dir := newFake(t)
	h := &recordingHooks{}
	m.Hooks = h
	if _, err := m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill("w1", KillOptions{}); err != nil {
		t.Fatal(err)
	}
	if srv.Window("w1") != nil {
		t.Fatal("window still there")
	}
	if strings.Join(h.calls, ",") != "before-kill w1,after-kill w1" {
		t.Fatalf("hooks: %v", h.calls)
	}
	if w, _ := m.Get("w1"); w.Status != state.StatusStopped {
		t.Fatalf("status %s", w.Status)
	}
	if err := m.Kill("nope", KillOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("kill of unknown: %v", err)
	}
}

func TestCleanRefusesRunningAndCallsAfterClean(t *testing.T) {
	m, _, dir := newFake(t)
	h := &recordingHooks{}
	m.Hooks = h
	m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir})
	if _, err := m.Clean("w1", CleanOptions{}); err == nil || err.Error() != "cannot clean running worker 'w1'" {
		t.Fatalf("clean of running: %v", err)
	}
	m.Kill("w1", KillOptions{})
	if _, err := m.Clean("w1", CleanOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := names(t, m); len(n) != 0 || strings.Join(h.calls[len(h.calls)-2:], ",") != "remove w1,after-clean w1" {
		t.Fatalf("records %v, hooks %v", n, h.calls)
	}
}

// A loop between iterations has no live agent but holds its worker all
// the same: clean refuses it (a paused loop with its own words), and
// clean --all leaves it. A loop resumed after clean's first look is
// refused at the removal, with its record, worktree and logs kept.
func TestCleanLeavesWorkersHeldByLoops(t *testing.T) {
	m, _, dir := newFake(t)
	h := &recordingHooks{
		held:    map[string]string{"loop": string(state.RalphRunning), "limit": string(state.RalphWaiting), "paused": string(state.RalphPaused)},
		resumed: map[string]bool{"late": true},
	}
	m.Hooks = h
	for _, n := range []string{"loop", "limit", "paused", "late", "idle"} {
		if _, err := m.Spawn(SpawnOptions{Name: n, Command: []string{"sh"}, Tmux: true, Cwd: dir, NoStart: true}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"loop":   "cannot clean running worker 'loop'",
		"limit":  "cannot clean running worker 'limit'",
		"paused": "cannot clean worker 'paused': its ralph loop is paused",
		"late":   "cannot clean running worker 'late'",
	}
	for n, msg := range want {
		_, err := m.Clean(n, CleanOptions{RmWorktree: true})
		if err == nil || err.Error() != msg || hint.Of(err) != "swarm kill "+n+", then swarm clean "+n {
			t.Errorf("clean %s: %v (hint %q), want %q", n, err, hint.Of(err), msg)
		}
	}
	if strings.Join(h.calls, ",") != "remove late" {
		t.Errorf("hooks %v: only the late one reaches the removal, and nothing is cleaned", h.calls)
	}
	cleaned, _, err := m.CleanAll(CleanOptions{})
	if err != nil || strings.Join(cleaned, ",") != "idle" {
		t.Fatalf("clean --all cleaned %v, %v", cleaned, err)
	}
	n := names(t, m)
	slices.Sort(n)
	if strings.Join(n, ",") != "late,limit,loop,paused" {
		t.Fatalf("records left %v", n)
	}
}

func TestKillAllTakesRunningWorkersAndActiveLoops(t *testing.T) {
	m, _, dir := newFake(t)
	h := &recordingHooks{active: map[string]bool{"loop": true}}
	m.Hooks = h
	m.Spawn(SpawnOptions{Name: "run", Command: []string{"sh"}, Tmux: true, Cwd: dir})
	m.Spawn(SpawnOptions{Name: "loop", Command: []string{"sh"}, Tmux: true, Cwd: dir, NoStart: true})
	m.Spawn(SpawnOptions{Name: "idle", Command: []string{"sh"}, Tmux: true, Cwd: dir, NoStart: true})
	killed, err := m.KillAll(KillOptions{})
	if err != nil || strings.Join(killed, ",") != "run,loop" {
		t.Fatalf("killed %v, %v", killed, err)
	}
}

func TestRefreshUsesOneListingForAllWorkers(t *testing.T) {
	m, srv, dir := newFake(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := m.Spawn(SpawnOptions{Name: n, Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Window("c").Exit(0)
	before := srv.Calls["ListPanes"]
	live, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Calls["ListPanes"] - before; got != 1 {
		t.Fatalf("%d listings for 4 workers", got)
	}
	status := map[string]string{}
	for _, l := range live {
		status[l.Name] = l.Status
	}
	if status["a"] != "running" || status["c"] != "stopped" {
		t.Fatalf("status %v", status)
	}
}

func TestSendClearsPendingInputThenTypesLiterally(t *testing.T) {
	m, srv, dir := newFake(t)
	m.Spawn(SpawnOptions{Name: "w1", Command: []string{"sh"}, Tmux: true, Cwd: dir})
	if err := m.Send("w1", "-n ; #{pane_id}", SendOptions{}); err != nil {
		t.Fatal(err)
	}
	p := srv.Window("w1")
	if strings.Join(p.Keys, ",") != "Escape,C-u" || len(p.Typed) != 1 || p.Typed[0] != "-n ; #{pane_id}" {
		t.Fatalf("keys %v typed %q", p.Keys, p.Typed)
	}
	if err := m.Send("w1", "raw", SendOptions{Raw: true, NoEnter: true}); err != nil {
		t.Fatal(err)
	}
	if len(p.Keys) != 2 {
		t.Fatalf("--raw sent keys: %v", p.Keys)
	}
}

func TestProcessWorkerStartsAndKillStopsItsGroup(t *testing.T) {
	m, _, dir := newFake(t)
	res, err := m.Spawn(SpawnOptions{Name: "p1", Command: []string{"sh", "-c", "sleep 60 & sleep 60"}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	pid := *res.Worker.PID
	if !proc.Alive(pid) {
		t.Fatal("not started")
	}
	if err := m.Kill("p1", KillOptions{}); err != nil {
		t.Fatal(err)
	}
	if proc.GroupAlive(pid) {
		t.Fatal("process group survived kill")
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// A crashed spawn (its record "starting", its spawner gone) is rolled back
// by the next look. When the registry cannot be written, List and Status
// warn and show it stopped instead of trying again and again, and kill
// reports the failure instead of waiting on it.
func TestCrashedSpawnThatCannotBeRolledBack(t *testing.T) {
	m, _, _ := newFake(t)
	var warnings []string
	m.Warn = func(s string) { warnings = append(warnings, s) }
	err := m.Store.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers, state.Worker{Name: "w", Status: state.StatusStarting,
			Tmux: &state.TmuxInfo{Session: m.Session, Window: "w"}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	restore := state.FailWrites(syscall.ENOSPC)
	type result struct {
		live   []Live
		status *Live
		errs   []error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		var err error
		r.live, err = m.List()
		r.errs = append(r.errs, err)
		r.status, err = m.Status("w")
		r.errs = append(r.errs, err)
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		restore()
		t.Fatal("List and Status keep trying to roll back")
	}
	if err := errors.Join(r.errs...); err != nil {
		t.Fatal(err)
	}
	if len(r.live) != 1 || !r.live[0].Crashed || r.live[0].Status != state.StatusStopped {
		t.Fatalf("List = %+v", r.live)
	}
	if r.status == nil || !r.status.Crashed || r.status.Status != state.StatusStopped {
		t.Fatalf("Status = %+v", r.status)
	}
	want := "cannot roll back the interrupted spawn of 'w': "
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], want) || !strings.HasPrefix(warnings[1], want) {
		t.Fatalf("warnings = %q", warnings)
	}
	if err := m.Kill("w", KillOptions{}); err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("kill = %v", err)
	}
	restore()
	warnings = nil
	live, err := m.List()
	if err != nil || len(live) != 0 {
		t.Fatalf("List after the disk has room = %+v, %v", live, err)
	}
	if len(warnings) != 1 || warnings[0] != "rolled back the interrupted spawn of 'w'" {
		t.Fatalf("warnings = %q", warnings)
	}
}

// A process worker's log cap reaches the sink as given: 0 stays 0, which
// logcap reads as its default cap.
func TestLogSinkGetsTheCapAsGiven(t *testing.T) {
	m, _, dir := newFake(t)
	var got []int64
	m.LogSink = func(max int64) []string { got = append(got, max); return nil }
	for i, max := range []int64{0, 4 << 10} {
		name := fmt.Sprintf("p%d", i)
		if _, err := m.Spawn(SpawnOptions{Name: name, Command: []string{"true"}, Cwd: dir, MaxLogSize: max}); err != nil {
			t.Fatal(err)
		}
		m.Kill(name, KillOptions{})
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 4<<10 {
		t.Fatalf("sink got %v", got)
	}
	w, err := logcap.Open(filepath.Join(dir, "log"), got[0])
	if err != nil {
		t.Fatalf("logcap refuses the cap 0: %v", err)
	}
	w.Close()
}

// Send needs a running window; peek a window, running or dead. A process
// worker has neither, and says where its output is.
func TestInteractErrors(t *testing.T) {
	m, srv, dir := newFake(t)
	if _, err := m.Spawn(SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Spawn(SpawnOptions{Name: "p", Command: []string{"true"}, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	defer m.Kill("p", KillOptions{})
	srv.Window("w").Exit(0)
	err := m.Send("w", "hi", SendOptions{})
	if !errors.Is(err, ErrNotRunning) || err.Error() != "worker 'w' is not running" {
		t.Errorf("send to a dead window: %v", err)
	}
	if _, err := m.Peek("w", 5); err != nil {
		t.Errorf("peek of a dead window: %v", err)
	}
	for _, err := range []error{m.Send("p", "hi", SendOptions{}), func() error { _, err := m.Peek("p", 5); return err }()} {
		if err == nil || err.Error() != "worker 'p' is not a tmux worker" {
			t.Errorf("on a process worker: %v", err)
		}
	}
}
