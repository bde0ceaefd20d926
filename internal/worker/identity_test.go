package worker

import (
	"testing"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// Issue 16, item 1: a window id alone never makes a window the worker's,
// since the next tmux server hands the same ids out again. Each kind of
// record is matched by what it has: the token swarm stored in the
// window, else (an older swarm's record) the id with swarm's session and
// window name, else (swarm.py's) the names alone.
func TestWindowOfNeedsMoreThanTheId(t *testing.T) {
	win := func(id, session, name, tag string) tmux.Window {
		return tmux.Window{Pane: tmux.Pane{WindowID: id, Session: session, WindowName: name, Tag: tag}}
	}
	rec := func(meta map[string]any) *state.Worker {
		return &state.Worker{Name: "w", Tmux: &state.TmuxInfo{Session: "swarm-s", Window: "w"}, Metadata: meta}
	}
	withToken := map[string]any{WindowIDKey: "@0", WindowTokenKey: "T"}
	for _, tc := range []struct {
		name    string
		meta    map[string]any
		windows []tmux.Window
		want    string // the window id found, "" for none
	}{
		{"token and id", withToken, []tmux.Window{win("@1", "x", "y", "U"), win("@0", "swarm-s", "w", "T")}, "@0"},
		{"the user's window with the id", withToken, []tmux.Window{win("@0", "mywork", "bash", "")}, ""},
		{"a swarm window with the id and the names, another token", withToken, []tmux.Window{win("@0", "swarm-s", "w", "U")}, ""},
		{"the token under another id", withToken, []tmux.Window{win("@3", "swarm-s", "w", "T")}, ""},
		{"token recorded before the window's id", map[string]any{WindowIDKey: "", WindowTokenKey: "T"},
			[]tmux.Window{win("@2", "swarm-s", "w", "U"), win("@5", "swarm-s", "w", "T")}, "@5"},
		{"older swarm: id and names", map[string]any{WindowIDKey: "@0"}, []tmux.Window{win("@0", "swarm-s", "w", "")}, "@0"},
		{"older swarm: the user's window with the id", map[string]any{WindowIDKey: "@0"},
			[]tmux.Window{win("@0", "mywork", "w", ""), win("@0", "swarm-s", "bash", "")}, ""},
		{"swarm.py: the names", nil, []tmux.Window{win("@4", "swarm-s", "wx", ""), win("@7", "swarm-s", "w", "")}, "@7"},
		{"swarm.py: no window of the names", nil, []tmux.Window{win("@0", "mywork", "w", "")}, ""},
		{"a token that is not a string", map[string]any{WindowIDKey: "@0", WindowTokenKey: 5.0},
			[]tmux.Window{win("@0", "mywork", "bash", "")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := WindowOf(tc.windows, rec(tc.meta))
			if ok != (tc.want != "") || got.WindowID != tc.want {
				t.Errorf("WindowOf = %q %v, want %q", got.WindowID, ok, tc.want)
			}
		})
	}
}

// Issue 16, item 1: a spawn that crashed after recording its window's id
// is rolled back after its tmux server has gone and another started (a
// reboot): the window now holding that id is the user's, and stays; the
// one carrying the spawn's token is removed.
func TestCrashedSpawnOfAnotherServerLifetime(t *testing.T) {
	m, srv, _ := newFake(t)
	users, err := srv.NewWindow(tmux.WindowSpec{Session: "mywork", Name: "bash", Command: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := srv.NewWindow(tmux.WindowSpec{Session: m.Session, Name: "w", Tag: "T", Command: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Store.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers, state.Worker{Name: "w", Status: state.StatusStarting,
			Tmux:     &state.TmuxInfo{Session: m.Session, Window: "w"},
			Metadata: map[string]any{spawnTokenKey: "T", WindowIDKey: users}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if live, err := m.List(); err != nil || len(live) != 0 {
		t.Fatalf("List = %+v, %v; want the spawn rolled back", live, err)
	}
	if srv.Window(users) == nil {
		t.Errorf("the user's window %s was removed:\n%s", users, srv.Summary())
	}
	if srv.Window(tagged) != nil {
		t.Errorf("the spawn's window %s is still there:\n%s", tagged, srv.Summary())
	}
}
