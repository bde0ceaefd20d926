package ralph

// Issue 27, items 4 and 5: an iteration whose tmux server went away
// while its monitor watched.

import (
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// The tmux server is killed as the agent takes its prompt, and another
// starts at once whose first window, another worker's, has the loop's
// old window id. The loop never takes that window for its agent's: the
// iteration ends tmux-server-gone (a failure), nothing is typed into,
// piped from or respawned in the stranger's window, and the next
// iteration makes a window of its own.
func TestEngineNeverTakesANewServersWindowForItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &tmuxtest.Agent{}
		l := newFakeLoop(t, a, Options{MaxIterations: 2, InactivityTimeout: state.WholeSeconds{Duration: time.Second}})
		var stranger *tmuxtest.Pane
		old := ""
		a.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			if run == 1 {
				old = p.ID
				l.srv.KillServer()
				id, err := l.srv.NewWindow(tmux.WindowSpec{Session: "other", Name: "other"})
				if err != nil || id != old {
					t.Errorf("the new server's window: %s %v, want the old id %s", id, err, old)
				}
				stranger = l.srv.Window(id)
				stranger.SetScreen("another worker's agent\n")
				return
			}
			p.Exit(0)
		}
		l.expectEnd(0, ReasonMaxIterations, 2)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if !strings.Contains(string(data), "[END] iteration 1 exit=none reason=tmux-server-gone") ||
			!strings.Contains(string(data), "[FAIL] iteration 1 exit=the tmux server went away attempt=1/5") {
			t.Fatalf("log:\n%s\n%s", data, l.out)
		}
		if st := l.state(); st.TotalFailures != 1 {
			t.Fatalf("failures %d", st.TotalFailures)
		}
		if stranger == nil || l.srv.Window(old) != stranger || stranger.Dead() {
			t.Fatalf("the other worker's window went:\n%s", l.srv.Summary())
		}
		if len(stranger.Keys)+len(stranger.Pasted)+len(stranger.Typed) != 0 || len(stranger.Commands) != 1 || stranger.PipePath() != "" {
			t.Fatalf("the loop acted on another worker's window: keys %q pasted %q typed %q commands (its own first) %q pipe %q",
				stranger.Keys, stranger.Pasted, stranger.Typed, stranger.Commands, stranger.PipePath())
		}
	})
}

// The tmux server is killed and another has started (with no window of
// the loop's id) by the time the watch looks: "can't find window" from a
// new server is the server gone too, not a window closed.
func TestEngineWindowMissingFromANewServerIsTheServerGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &tmuxtest.Agent{}
		l := newFakeLoop(t, a, Options{MaxIterations: 2})
		// The loop's window gets an id the new server does not give out:
		// a window before it, and the worker's first one closed.
		if _, err := l.srv.NewWindow(tmux.WindowSpec{Session: "other", Name: "filler"}); err != nil {
			t.Fatal(err)
		}
		l.srv.KillWindow("@1")
		a.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			if run == 1 {
				l.srv.KillServer()
				if id, err := l.srv.NewWindow(tmux.WindowSpec{Session: "other", Name: "new"}); err != nil || id == p.ID {
					t.Errorf("the new server's window: %s %v (the loop's was %s)", id, err, p.ID)
				}
				return
			}
			p.Exit(0)
		}
		l.expectEnd(0, ReasonMaxIterations, 2)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if !strings.Contains(string(data), "[END] iteration 1 exit=none reason=tmux-server-gone") || strings.Contains(string(data), "window-lost") {
			t.Fatalf("log:\n%s\n%s", data, l.out)
		}
		if st := l.state(); st.TotalFailures != 1 {
			t.Fatalf("failures %d", st.TotalFailures)
		}
	})
}
