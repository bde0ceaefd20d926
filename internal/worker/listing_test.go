package worker

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// status NAME asks tmux for the worker's window alone, not for every
// pane of its server, and reads it as a listing would.
func TestStatusAsksForOneWindow(t *testing.T) {
	t.Parallel()
	m, srv, dir := newFake(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := m.Spawn(SpawnOptions{Name: n, Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Window("c").Exit(3)
	if err := srv.KillWindow(srv.Window("b").ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, status string
		exit         int
	}{{"a", state.StatusRunning, 0}, {"b", state.StatusStopped, 0}, {"c", state.StatusStopped, 3}} {
		lists, windows := srv.Calls["ListPanes"], srv.Calls["WindowPanes"]
		l, err := m.Status(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Status != c.status || l.ExitCode != c.exit {
			t.Errorf("status %s: %s (exit %d), want %s (exit %d)", c.name, l.Status, l.ExitCode, c.status, c.exit)
		}
		if got, one := srv.Calls["ListPanes"]-lists, srv.Calls["WindowPanes"]-windows; got != 0 || one != 1 {
			t.Errorf("status %s: %d listings of the server, %d of one window; want 0 and 1", c.name, got, one)
		}
	}
	// The window of the id recorded is another's (the id was handed out
	// again): not the worker's.
	err := m.Store.Update(func(r *state.Registry) error {
		r.Find("b").Metadata[WindowIDKey] = srv.Window("a").ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := m.Status("b"); err != nil || l.Status != state.StatusStopped {
		t.Errorf("status b on a's window: %+v, %v", l, err)
	}
}

// The listing of the workers' server starts before the registry is
// decoded, and the listing of the workers is that one: its tmux process
// and the decoding of 500 records take about as long, and run at once.
func TestListAsksTmuxWhileTheRegistryIsDecoded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := &enteredServer{Server: tmuxtest.New()}
	listed := make(chan struct{})
	var decoding atomic.Bool
	m := New(filepath.Join(dir, "home"), func(msg string) {
		// Warned while decoding (the last record is invalid): the
		// listing must have started by now.
		if !decoding.Load() {
			return
		}
		select {
		case <-listed:
		case <-time.After(10 * time.Second):
			t.Errorf("the registry was decoded before tmux was asked (%s)", msg)
		}
	})
	m.TmuxFor = func(tmux.Server) Tmux { return srv }
	for _, n := range []string{"a", "b"} {
		if _, err := m.Spawn(SpawnOptions{Name: n, Command: []string{"sh"}, Tmux: true, Cwd: dir}); err != nil {
			t.Fatal(err)
		}
	}
	err := m.Store.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers, state.Worker{Name: "p", PID: new(int)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(m.Store.Root, "state.json")
	data, err := os.ReadFile(path)
	if err != nil || strings.Count(string(data), `"pid": 0`) != 1 {
		t.Fatalf("state file %v:\n%s", err, data)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"pid": 0`, `"pid": "not a number"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.onList = func() { close(listed) }
	decoding.Store(true)
	live, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 || live[0].Status != state.StatusRunning || srv.lists.Load() != 1 {
		t.Fatalf("listed %+v with %d tmux listings", live, srv.lists.Load())
	}
}

// enteredServer is a fake server that says when ListPanes is first
// called once onList is set.
type enteredServer struct {
	*tmuxtest.Server
	lists  atomic.Int32
	onList func()
}

func (s *enteredServer) ListPanes() ([]tmux.Pane, error) {
	if s.onList != nil && s.lists.Add(1) == 1 {
		s.onList()
	}
	return s.Server.ListPanes()
}

// The window index finds the window WindowOf finds, for records with and
// without a token or an id, among windows that share tags, ids and names.
func TestWindowIndexFindsWhatWindowOfFinds(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(n int, prefix string) string {
		if k := r.IntN(n + 1); k < n {
			return fmt.Sprintf("%s%d", prefix, k)
		}
		return ""
	}
	for round := 0; round < 2000; round++ {
		var panes []tmux.Pane
		for i := 0; i < r.IntN(8); i++ {
			panes = append(panes, tmux.Pane{WindowID: fmt.Sprintf("@%d", r.IntN(5)), Session: pick(2, "s"),
				WindowName: pick(3, "w"), Tag: pick(3, "t")})
		}
		windows := tmux.Windows(panes)
		x := newWindowIndex(windows)
		for k := 0; k < 10; k++ {
			w := &state.Worker{Name: "x", Tmux: &state.TmuxInfo{Session: pick(2, "s"), Window: pick(3, "w")}, Metadata: map[string]any{}}
			if id := pick(5, "@"); id != "" {
				w.Metadata[WindowIDKey] = id
			}
			if tag := pick(3, "t"); tag != "" {
				w.Metadata[WindowTokenKey] = tag
			}
			want, wok := WindowOf(windows, w)
			got, gok := x.find(w)
			if gok != wok || got.WindowID != want.WindowID || got.Tag != want.Tag || got.WindowName != want.WindowName {
				t.Fatalf("windows %+v, worker %+v: index found %+v (%v), WindowOf %+v (%v)", windows, w, got, gok, want, wok)
			}
		}
	}
}
