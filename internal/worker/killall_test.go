package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// barrier holds each caller until `want` callers are in it at once, or
// until a deadline shared by all: calls one after another never meet.
type barrier struct {
	want     int
	deadline time.Time

	mu           sync.Mutex
	inside, most int
}

func (b *barrier) pass() {
	if b.want == 0 {
		return
	}
	b.mu.Lock()
	b.inside++
	b.most = max(b.most, b.inside)
	b.mu.Unlock()
	clock.Wait(context.Background(), clock.Real, time.Millisecond, time.Until(b.deadline), func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.most >= b.want
	})
	b.mu.Lock()
	b.inside--
	b.mu.Unlock()
}

func (b *barrier) seen() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most
}

// barrierHooks hold the kills in BeforeKill (the work a kill does, in
// its slot) and in AfterKill (where a loop's kill waits for its monitor).
type barrierHooks struct {
	recordingHooks
	before, after barrier
	failOn        string // BeforeKill fails for this worker at once
}

func (h *barrierHooks) BeforeKill(w *state.Worker) error {
	if w.Name == h.failOn {
		return errors.New("cannot mark the loop of " + w.Name)
	}
	h.before.pass()
	return h.recordingHooks.BeforeKill(w)
}

func (h *barrierHooks) AfterKill(w *state.Worker) {
	h.after.pass()
	h.recordingHooks.AfterKill(w)
}

func spawnMany(t *testing.T, m *Manager, dir string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("w%02d", i)
		if _, err := m.Spawn(SpawnOptions{Name: name, Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// kill --all stops its workers concurrently (issue 27, item 6: 60 loops
// took 57 s one after another, each kill waiting for its monitor's next
// poll), never more than killAllAtOnce at a time, each with Kill's steps
// in order, and names them in the order of the listing.
func TestKillAllKillsConcurrentlyAndBounded(t *testing.T) {
	m, srv, dir := newFake(t)
	names := spawnMany(t, m, dir, 2*killAllAtOnce+3)
	deadline := time.Now().Add(3 * time.Second)
	h := &barrierHooks{
		before: barrier{want: killAllAtOnce, deadline: deadline},
		// The waits for the monitors overlap beyond the bound: all of
		// them at once.
		after: barrier{want: len(names), deadline: deadline},
	}
	m.Hooks = h
	killed, err := m.KillAll(KillOptions{})
	if err != nil || !slices.Equal(killed, names) {
		t.Fatalf("killed %v, %v", killed, err)
	}
	if got := h.before.seen(); got != killAllAtOnce {
		t.Errorf("at most %d kills at work at once, want %d", got, killAllAtOnce)
	}
	if got := h.after.seen(); got != len(names) {
		t.Errorf("at most %d kills waiting for their monitor at once, want all %d", got, len(names))
	}
	for _, n := range names {
		before := slices.Index(h.calls, "before-kill "+n)
		after := slices.Index(h.calls, "after-kill "+n)
		if before < 0 || after < before {
			t.Errorf("%s: hooks out of order: %v", n, h.calls)
		}
		if srv.Window(n) != nil {
			t.Errorf("%s: window still there", n)
		}
		if w, _ := m.Get(n); w.Status != state.StatusStopped {
			t.Errorf("%s: status %s", n, w.Status)
		}
	}
}

// After a kill fails no further kill starts; those under way finish and
// are named, and the error is returned.
func TestKillAllStopsStartingKillsAfterAnError(t *testing.T) {
	m, _, dir := newFake(t)
	names := spawnMany(t, m, dir, 2*killAllAtOnce)
	// The kills before it are held at their work (for a meeting that
	// cannot happen: the failing one never joins) until the deadline,
	// holding every slot but the failing one's, which is freed only once
	// its failure is known: no kill starts after it.
	failing := names[killAllAtOnce-1]
	h := &barrierHooks{before: barrier{want: killAllAtOnce, deadline: time.Now().Add(time.Second)}, failOn: failing}
	m.Hooks = h
	killed, err := m.KillAll(KillOptions{})
	if err == nil || err.Error() != "cannot mark the loop of "+failing {
		t.Fatalf("error %v", err)
	}
	if want := names[:killAllAtOnce-1]; !slices.Equal(killed, want) {
		t.Errorf("killed %v, want %v (the kills under way with the failed one)", killed, want)
	}
	if n := strings.Count(strings.Join(h.calls, ","), "before-kill"); n != killAllAtOnce-1 {
		t.Errorf("%d kills started besides the failed one, want %d: %v", n, killAllAtOnce-1, h.calls)
	}
	for _, n := range names[killAllAtOnce:] {
		if w, _ := m.Get(n); w.Status != state.StatusRunning {
			t.Errorf("%s, listed after the failure, was killed: %s", n, w.Status)
		}
	}
}

// batchingTmux is a tmux that kills many windows in one call: each call's
// targets are recorded, and the first call waits for leave.
type batchingTmux struct {
	Tmux
	mu    sync.Mutex
	calls [][]string
	leave chan struct{}
	fail  string // the window whose kill fails
}

func (b *batchingTmux) KillWindows(targets []string) []error {
	b.mu.Lock()
	b.calls = append(b.calls, slices.Clone(targets))
	first := len(b.calls) == 1
	b.mu.Unlock()
	if first {
		<-b.leave
	}
	errs := make([]error, len(targets))
	for i, t := range targets {
		if t == b.fail {
			errs[i] = errors.New("cannot kill " + t)
		}
	}
	return errs
}

// The window kills that come while one runs go together in the next
// call, and each gets its own window's error.
func TestWindowKillerGathersTheKillsUnderWay(t *testing.T) {
	k := newWindowKiller()
	tc := &batchingTmux{leave: make(chan struct{}), fail: "@3"}
	var server tmux.Server
	errs := make([]error, 5)
	var wg sync.WaitGroup
	kill := func(i int) {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = k.kill(server, tc, fmt.Sprintf("@%d", i)) }()
	}
	kill(0)
	waitCalls := func(n int) bool {
		return clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
			tc.mu.Lock()
			defer tc.mu.Unlock()
			return len(tc.calls) == n
		})
	}
	if !waitCalls(1) {
		t.Fatal("the first kill made no call")
	}
	for i := 1; i < 5; i++ {
		kill(i)
	}
	if !clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.queued[server] != nil && len(k.queued[server].ids) == 4
	}) {
		t.Fatal("the kills that came meanwhile were not queued")
	}
	close(tc.leave)
	wg.Wait()
	if len(tc.calls) == 2 {
		slices.Sort(tc.calls[1]) // in the order the kills came
	}
	if want := [][]string{{"@0"}, {"@1", "@2", "@3", "@4"}}; !slices.EqualFunc(tc.calls, want, slices.Equal) {
		t.Errorf("calls %v, want %v", tc.calls, want)
	}
	for i, err := range errs {
		if (i == 3) != (err != nil) {
			t.Errorf("kill of @%d: %v", i, err)
		}
	}
}

// blockingTmux is a fake server whose first listing (of all windows or
// one's) waits for leave.
type blockingTmux struct {
	Tmux
	mu       sync.Mutex
	listings int
	leave    chan struct{}
}

func (b *blockingTmux) listing() {
	b.mu.Lock()
	b.listings++
	first := b.listings == 1
	b.mu.Unlock()
	if first {
		<-b.leave
	}
}

func (b *blockingTmux) ListPanes() ([]tmux.Pane, error) {
	b.listing()
	return b.Tmux.ListPanes()
}

func (b *blockingTmux) WindowPanes(target string) ([]tmux.Pane, error) {
	b.listing()
	return b.Tmux.WindowPanes(target)
}

// The refreshes asked for while one runs are answered together by the
// next listing (which starts after they were asked), each with its own
// worker's window.
func TestRefresherGathersTheLooksUnderWay(t *testing.T) {
	m, srv, dir := newFake(t)
	names := spawnMany(t, m, dir, 5)
	bt := &blockingTmux{Tmux: srv, leave: make(chan struct{})}
	m.TmuxFor = func(tmux.Server) Tmux { return bt }
	r := newRefresher(m)
	got := make([]Live, len(names))
	var wg sync.WaitGroup
	look := func(i int) {
		w, err := m.Get(names[i])
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = r.refresh(w)
		}()
	}
	look(0)
	if !clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
		bt.mu.Lock()
		defer bt.mu.Unlock()
		return bt.listings == 1
	}) {
		t.Fatal("the first look made no listing")
	}
	for i := 1; i < len(names); i++ {
		look(i)
	}
	if !clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.queued != nil && len(r.queued.workers) == len(names)-1
	}) {
		t.Fatal("the looks asked for meanwhile were not gathered")
	}
	close(bt.leave)
	wg.Wait()
	if bt.listings != 2 {
		t.Errorf("%d listings, want 2", bt.listings)
	}
	for i, l := range got {
		if l.Name != names[i] || l.WindowID == "" || l.WindowID != srv.Window(names[i]).ID || l.Panes != 1 {
			t.Errorf("look %d: %s window %q (%d panes)", i, l.Name, l.WindowID, l.Panes)
		}
	}
}

// failingHooks fail BeforeKill for the workers named, once all of them
// are under way (so their failures meet in one KillAll).
type failingHooks struct {
	recordingHooks
	fail map[string]bool
	meet barrier
}

func (h *failingHooks) BeforeKill(w *state.Worker) error {
	if h.fail[w.Name] {
		h.meet.pass()
		return errors.New("cannot mark the loop of " + w.Name)
	}
	return h.recordingHooks.BeforeKill(w)
}

// Every kill that fails is reported: the first (in the listing's order)
// as the error, the others as warnings, not dropped unsaid (the kills run
// at once, so several may fail before any stops the rest).
func TestKillAllReportsEveryFailedKill(t *testing.T) {
	m, _, dir := newFake(t)
	names := spawnMany(t, m, dir, 4)
	var mu sync.Mutex
	var warned []string
	m.Warn = func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	m.Hooks = &failingHooks{fail: map[string]bool{names[1]: true, names[2]: true},
		meet: barrier{want: 2, deadline: time.Now().Add(3 * time.Second)}}
	killed, err := m.KillAll(KillOptions{})
	if err == nil || err.Error() != "cannot mark the loop of "+names[1] {
		t.Fatalf("error %v", err)
	}
	if !slices.Contains(killed, names[0]) || slices.Contains(killed, names[1]) || slices.Contains(killed, names[2]) {
		t.Errorf("killed %v", killed)
	}
	if !slices.ContainsFunc(warned, func(s string) bool { return strings.Contains(s, "cannot mark the loop of "+names[2]) }) {
		t.Errorf("the second failed kill is not reported: warnings %q", warned)
	}
}

// failingServer is a tmux server whose listings fail (one that times out).
type failingServer struct{ Tmux }

func (failingServer) ListPanes() ([]tmux.Pane, error) { return nil, errors.New("tmux timed out") }
func (failingServer) WindowPanes(string) ([]tmux.Pane, error) {
	return nil, errors.New("tmux timed out")
}

// A shared look that fails for one server (a hung tmux) fails only the
// kills of that server's workers: the others gathered with it are looked
// at on their own, as each kill looked at its worker before kill --all
// shared the looks.
func TestRefresherFailsOnlyTheFailingServersLooks(t *testing.T) {
	m, srvs, _, _, dir := newFakeServers(t, "/s/a", "/s/b")
	for _, w := range []struct{ name, path string }{{"a0", "/s/a"}, {"a1", "/s/a"}, {"b", "/s/b"}} {
		if _, err := m.Spawn(SpawnOptions{Name: w.name, Command: []string{"sh"}, Tmux: true, Cwd: dir, SocketPath: w.path}); err != nil {
			t.Fatal(err)
		}
	}
	bt := &blockingTmux{Tmux: srvs["/s/a"], leave: make(chan struct{})}
	m.TmuxFor = func(s tmux.Server) Tmux {
		if s.Path == "/s/b" {
			return failingServer{srvs["/s/b"]}
		}
		return bt
	}
	r := newRefresher(m)
	type answer struct {
		l   Live
		err error
	}
	got := map[string]answer{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	look := func(name string) {
		w, err := m.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := r.refresh(w)
			mu.Lock()
			got[name] = answer{l, err}
			mu.Unlock()
		}()
	}
	look("a0")
	if !clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
		bt.mu.Lock()
		defer bt.mu.Unlock()
		return bt.listings == 1
	}) {
		t.Fatal("the first look made no listing")
	}
	look("a1")
	look("b")
	if !clock.Wait(context.Background(), clock.Real, time.Millisecond, 5*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.queued != nil && len(r.queued.workers) == 2
	}) {
		t.Fatal("the looks asked for meanwhile were not gathered")
	}
	close(bt.leave)
	wg.Wait()
	if a := got["a1"]; a.err != nil || a.l.WindowID == "" {
		t.Errorf("a1, on a server that answers, failed with b's: %+v", a)
	}
	if b := got["b"]; b.err == nil {
		t.Errorf("b, on the hung server, did not fail: %+v", b)
	}
}
