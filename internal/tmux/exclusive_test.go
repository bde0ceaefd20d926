package tmux

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// markerExclusive is an Exclusive that shows it is held by a file, which
// a tmux shim reads: held is the file.
func markerExclusive(t *testing.T) (exclusive func() func(), held string, takes *atomic.Int32) {
	t.Helper()
	held = filepath.Join(t.TempDir(), "held")
	takes = new(atomic.Int32)
	exclusive = func() func() {
		takes.Add(1)
		if err := os.WriteFile(held, nil, 0o600); err != nil {
			t.Error(err)
		}
		return func() {
			if err := os.Remove(held); err != nil {
				t.Error(err)
			}
		}
	}
	return exclusive, held, takes
}

// heldShim makes c run tmux through a shim that logs each run's first
// argument naming a command (kill-window, attach-session, ...) with
// whether the file held exists while it runs.
func heldShim(t *testing.T, c *Client, held string) (log func() []string) {
	t.Helper()
	dir := shimTmux(t, c, func(dir string) string {
		return fmt.Sprintf(`h=free; [ -e '%[1]s' ] && h=held
for a in "$@"; do case "$a" in kill-window|attach-session|list-panes|new-window|display-message) echo "$a $h" >> '%[2]s/calls'; break;; esac; done
`, held, dir)
	})
	return func() []string {
		b, _ := os.ReadFile(filepath.Join(dir, "calls"))
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "="))
	}
}

// KillWindow and a poller's attach of its control client run while
// Exclusive is held, and release it when they return; listings, polls and
// new windows do not take it.
func TestExclusiveHeldAroundKillWindowAndAttach(t *testing.T) {
	c := server(t)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sh", "-c", "echo done; exec sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.NewWindow(WindowSpec{Session: "s", Name: "x", Command: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	exclusive, held, takes := markerExclusive(t)

	ps := &Pollers{Exclusive: exclusive}
	t.Cleanup(ps.Close)
	p := ps.For(c.Server())
	log := heldShim(t, p.Client, held)
	testenv.Eventually(t, "the screen", 10*time.Second, func() bool {
		s, _ := c.Capture(id, CaptureOptions{})
		return strings.Contains(s, "done")
	})
	if _, _, err := p.Poll(id); err != nil {
		t.Fatal(err)
	}
	if p.ctl == nil {
		t.Fatal("the poll went without a control client")
	}
	if _, err := p.ListPanes(); err != nil {
		t.Fatal(err)
	}
	if err := p.KillWindow(other); err != nil {
		t.Fatal(err)
	}
	want := []string{"display-message=free", "attach-session=held", "list-panes=free", "kill-window=held"}
	if got := log(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tmux runs %q, want %q", got, want)
	}
	if n := takes.Load(); n != 2 {
		t.Errorf("Exclusive taken %d times, want 2", n)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("Exclusive not released: %v", err)
	}

	// A client without Exclusive kills all the same.
	ps.Close()
	if err := c.KillWindow(id); err != nil {
		t.Fatal(err)
	}
	if panes, err := c.ListPanes(); err != nil || len(panes) != 0 {
		t.Errorf("after the kills: %+v, %v", panes, err)
	}
}

// The crash Exclusive guards against: tmux 3.3a's server dies when a
// session's current window is killed while a control client attaches.
// Pollers attaching again and again while windows that are their
// session's current one are killed, both through clients holding swarm's
// windows lock (state.Store.LockWindows), leave the server running.
// (Without the lock the server died within 70 rounds on the 2-core
// machine.)
func TestKillWindowDuringAttachKeepsTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("races attaches against kills for seconds")
	}
	c := server(t)
	// swarm's own lock (state.Store.LockWindows), taken by each client
	// through its own descriptor, as two swarm processes take it.
	store := state.NewStore(t.TempDir(), nil)
	exclusive := func() func() {
		release, err := store.LockWindows(10 * time.Second)
		if err != nil {
			t.Errorf("windows lock: %v", err)
			return func() {}
		}
		return release
	}
	// A session that stays, so that the server's end is a crash.
	if _, err := c.NewWindow(WindowSpec{Session: "keep", Name: "k", Command: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, c)
	killer := &Client{Socket: c.Socket, Path: c.Path, Bin: c.Bin, Timeout: c.Timeout, Exclusive: exclusive}
	deadline := time.Now().Add(4 * time.Second)
	rounds := 0
	for ; time.Now().Before(deadline) && rounds < 400; rounds++ {
		// The victim is the session's current window: new-session's.
		session := fmt.Sprintf("v%d", rounds)
		victim, err := c.NewWindow(WindowSpec{Session: session, Name: "cur", Command: []string{"sleep", "600"}})
		if err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		if _, err := c.NewWindow(WindowSpec{Session: session, Name: "poll", Command: []string{"sleep", "600"}}); err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		ps := &Pollers{Exclusive: exclusive}
		p := ps.For(c.Server())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _, _ = p.Poll(victim) // attaches; the window may be gone by then
		}()
		// The kill lands anywhere in the attach: the session lookup
		// before it takes a few milliseconds, the attach as many.
		time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
		if err := killer.KillWindow(victim); err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		<-done
		ps.Close()
		if !proc.Alive(pid) {
			t.Fatalf("the tmux server died in round %d (a kill while a control client attached)", rounds)
		}
		if _, err := c.Run(nil, "kill-session", "-t", session); err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
	}
	if !proc.Alive(pid) {
		t.Fatalf("the tmux server died after %d rounds", rounds)
	}
	t.Logf("%d rounds", rounds)
}

// serverPID is the pid of c's server.
func serverPID(t *testing.T, c *Client) int {
	t.Helper()
	out, err := c.Run(nil, "display-message", "-p", "#{pid}")
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(out), &pid); err != nil || pid <= 1 {
		t.Fatalf("server pid %q: %v", out, err)
	}
	return pid
}
