package stresstest

import (
	"strings"
	"testing"
)

// When the last window of the last session goes, tmux destroys the
// session, and until the server exits (at once with the default
// exit-empty on, never with exit-empty off in a user's tmux.conf) it has
// no session at all. In that state tmux answers "no current target" to
// list-panes -a and to kill-window -t @N, and display-message -p -t @N
// prints nothing and succeeds. The stress runs hit it when a loop's
// monitor removed its window, the server's last, while swarm kill removed
// it too: kill failed with "cannot remove tmux window of 'rl': no current
// target". exit-empty off holds the server in that state, so these tests
// are exact.

// noSessionServer spawns a tmux worker, sets exit-empty off on the server
// (as a user's tmux.conf may) and kills the worker, which removes the
// server's last window: the server stays up with no session.
func noSessionServer(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	w.must(append([]string{"spawn", "--name", "a", "--tmux", "--"}, w.agent()...)...)
	if out, err := w.e.Tmux("set-option", "-g", "exit-empty", "off"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	w.must("kill", "a")
	if out, err := w.e.Tmux("list-panes", "-a"); err == nil || !strings.Contains(out, "no current target") {
		t.Fatalf("the server is not up without sessions: %v %s", err, out)
	}
	return w
}

// TestCommandsWorkOnAServerWithoutSessions: ls, status, clean, spawn and
// kill work while the server is up but has no session: it has no panes,
// which is not an error.
func TestCommandsWorkOnAServerWithoutSessions(t *testing.T) {
	t.Parallel()
	w := noSessionServer(t)
	for _, args := range [][]string{{"ls"}, {"status", "a"}, {"clean", "a"}} {
		r := w.run(args...)
		want := 0
		if args[0] == "status" {
			want = 1 // stopped
		}
		if r.code != want || strings.Contains(r.stderr, "swarm: error:") {
			t.Errorf("on a server without sessions: %s", r)
		}
	}
	w.must(append([]string{"spawn", "--name", "b", "--tmux", "--"}, w.agent()...)...)
	w.must("kill", "b")
}

// TestKillWhenItsWindowGoesMeanwhile: kill succeeds when the worker's
// window, the server's last, is removed by someone else (a ralph monitor
// ending its loop) between kill finding it and removing it. A tmux shim
// removes the window just before kill's own kill-window runs.
func TestKillWhenItsWindowGoesMeanwhile(t *testing.T) {
	t.Parallel()
	w := noSessionServer(t)
	w.must(append([]string{"spawn", "--name", "b", "--tmux", "--"}, w.agent()...)...)
	// The shim runs kill's kill-window once more just before it.
	shim := tmuxShim(t, t.TempDir(), "tmux", `	"$real" "$@"`, "kill-window")
	cmd, out, errb := w.startWith([]string{"SWARM_TMUX=" + shim}, "kill", "b")
	err := cmd.Wait()
	if err != nil || out.String() != "killed b\n" {
		t.Errorf("kill b: %v\n%s%s", err, out, errb)
	}
	for _, rec := range w.e.Workers() {
		if rec["name"] == "b" && rec["status"] != "stopped" {
			t.Errorf("b is %v after kill", rec["status"])
		}
	}
}
