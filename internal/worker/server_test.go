package worker

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// newFakeServers returns a manager whose tmux servers are fakes chosen
// by socket path ("" for a record without one); every client asked for
// is noted in asked.
func newFakeServers(t *testing.T, paths ...string) (*Manager, map[string]*tmuxtest.Server, *[]tmux.Server, *[]string, string) {
	t.Helper()
	dir := t.TempDir()
	srvs := map[string]*tmuxtest.Server{}
	for _, p := range paths {
		srvs[p] = tmuxtest.New()
	}
	var asked []tmux.Server
	var warned []string
	m := New(filepath.Join(dir, "home"), func(s string) { warned = append(warned, s) })
	m.TmuxFor = func(s tmux.Server) Tmux {
		asked = append(asked, s)
		srv, ok := srvs[s.Path]
		if !ok {
			t.Fatalf("a client for a server the test has not: %+v", s)
		}
		return srv
	}
	m.KillGrace = time.Second
	return m, srvs, &asked, &warned, dir
}

// Each worker is looked for on its own server only: two servers have
// windows of the same ids. A record whose socket path is bad is set aside
// as stopped, with a warning, and the others are listed; kill refuses it.
func TestWorkersAreFoundOnTheirOwnServer(t *testing.T) {
	m, srvs, asked, warned, dir := newFakeServers(t, "/s/a", "/s/b", "")
	for _, w := range []struct{ name, path string }{{"a", "/s/a"}, {"b", "/s/b"}, {"bad", "/s/a"}, {"legacy", ""}} {
		o := SpawnOptions{Name: w.name, Command: []string{"sh"}, Tmux: true, Cwd: dir, SocketPath: w.path}
		if w.path == "" {
			o.SocketPath = "/s/a"
		}
		if _, err := m.Spawn(o); err != nil {
			t.Fatal(err)
		}
	}
	// b's window (@1 on its server) goes; server a has a window @1.
	if err := srvs["/s/b"].KillWindow(srvs["/s/b"].Window("b").ID); err != nil {
		t.Fatal(err)
	}
	// legacy: a record without a path (nor a window token), its window on
	// plain tmux's server.
	id, _ := srvs[""].NewWindow(tmux.WindowSpec{Session: m.Session, Name: "legacy", Command: []string{"sh"}})
	err := m.Store.Update(func(r *state.Registry) error {
		delete(r.Find("legacy").Metadata, SocketPathKey)
		delete(r.Find("legacy").Metadata, WindowTokenKey)
		r.Find("legacy").Metadata[WindowIDKey] = id
		r.Find("bad").Metadata[SocketPathKey] = "relative/s"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := m.Get("b"); b.Metadata[WindowIDKey] != srvs["/s/a"].Window("a").ID {
		t.Fatalf("b's window id %v is not one server a has:\n%s", b.Metadata[WindowIDKey], srvs["/s/a"].Summary())
	}

	*asked = nil
	live, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, l := range live {
		status[l.Name] = l.Status
	}
	if want := map[string]string{"a": "running", "b": "stopped", "bad": "stopped", "legacy": "running"}; !equalMaps(status, want) {
		t.Errorf("status %v, want %v", status, want)
	}
	if len(*asked) != 3 {
		t.Errorf("clients asked for: %+v, want one per good server", *asked)
	}
	if len(*warned) != 1 || !strings.Contains((*warned)[0], `worker 'bad' cannot be reached: invalid tmux socket path "relative/s"`) {
		t.Errorf("warnings: %q", *warned)
	}

	err = m.Kill("bad", KillOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot stop 'bad': invalid tmux socket path") || hint.Of(err) == "" {
		t.Errorf("kill of an unreachable worker: %v (hint %q)", err, hint.Of(err))
	}
}

// respawn starts the worker on the server recorded, and records it again.
func TestRespawnKeepsTheServer(t *testing.T) {
	m, srvs, _, _, dir := newFakeServers(t, "/s/a")
	if _, err := m.Spawn(SpawnOptions{Name: "w", Command: []string{"sh"}, Tmux: true, Cwd: dir, SocketPath: "/s/a"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill("w", KillOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Respawn("w", RespawnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if Server(res.Worker) != (tmux.Server{Path: "/s/a"}) || srvs["/s/a"].Window("w") == nil {
		t.Errorf("respawned on %+v:\n%s", Server(res.Worker), srvs["/s/a"].Summary())
	}
}

func TestServerOfRecord(t *testing.T) {
	info := &state.TmuxInfo{Session: "s", Window: "w", Socket: "x"}
	for _, tc := range []struct {
		w     state.Worker
		want  tmux.Server
		valid bool
	}{
		{state.Worker{}, tmux.Server{}, true},
		{state.Worker{Tmux: &state.TmuxInfo{}}, tmux.Server{}, true},
		{state.Worker{Tmux: info}, tmux.Server{Name: "x"}, true},
		{state.Worker{Tmux: info, Metadata: map[string]any{SocketPathKey: "/p/s"}}, tmux.Server{Name: "x", Path: "/p/s"}, true},
		{state.Worker{Tmux: info, Metadata: map[string]any{SocketPathKey: nil}}, tmux.Server{Name: "x"}, true},
		{state.Worker{Tmux: info, Metadata: map[string]any{SocketPathKey: 5.0}}, tmux.Server{Name: "x", Path: "5"}, false},
		{state.Worker{Tmux: info, Metadata: map[string]any{SocketPathKey: []any{"/p/s"}}}, tmux.Server{Name: "x", Path: "[/p/s]"}, false},
	} {
		got := Server(&tc.w)
		if got != tc.want || (got.Check() == nil) != tc.valid {
			t.Errorf("Server(%+v) = %+v (check %v), want %+v valid %v", tc.w, got, got.Check(), tc.want, tc.valid)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
