package tmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// shimTmux makes c run tmux through a shell script: the lines body
// returns, then the real tmux with the same arguments. dir is a directory
// of the test's for the script's files.
func shimTmux(t *testing.T, c *Client, body func(dir string) string) (dir string) {
	t.Helper()
	real, err := exec.LookPath(c.Bin)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	// Cleanups run last first: c has its tmux back before the shim's
	// directory goes, and before server's KillServer needs it.
	orig := c.Bin
	t.Cleanup(func() { c.Bin = orig })
	script := "#!/bin/sh\n" + body(dir) + fmt.Sprintf("exec '%s' \"$@\"\n", real)
	testenv.WriteExecutable(t, filepath.Join(dir, "tmux"), script)
	c.Bin = filepath.Join(dir, "tmux")
	return dir
}

// countingShim makes c run tmux through a shim that counts its runs.
func countingShim(t *testing.T, c *Client) (count func() int) {
	t.Helper()
	dir := shimTmux(t, c, func(dir string) string { return fmt.Sprintf("echo x >> '%s/calls'\n", dir) })
	return func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "calls"))
		return strings.Count(string(b), "\n")
	}
}

// donePoller waits until the window's screen shows "done" and returns a
// poller of its server (closed when the test ends) whose tmux processes
// count counts.
func donePoller(t *testing.T, c *Client, id string) (p *Poller, count func() int) {
	t.Helper()
	testenv.Eventually(t, "the screen", 10*time.Second, func() bool {
		s, _ := c.Capture(id, CaptureOptions{})
		return strings.Contains(s, "done")
	})
	p = NewPoller(c.Server())
	t.Cleanup(p.Close)
	return p, countingShim(t, p.Client)
}

// pollsAgree polls the window n times through p and through Client.Poll:
// the same status and screen each time.
func pollsAgree(t *testing.T, c *Client, p *Poller, id string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		want, wantScreen, err := c.Poll(id)
		if err != nil {
			t.Fatal(err)
		}
		got, gotScreen, err := p.Poll(id)
		if err != nil || got != want || gotScreen != wantScreen {
			t.Fatalf("poll %d: %+v, %v\n%q\nClient.Poll: %+v\n%q", i, got, err, gotScreen, want, wantScreen)
		}
	}
}

// A poller answers as Client.Poll does, from a control client started
// once: no tmux process per poll. What the pane shows is taken as it is,
// a line that looks like the end of tmux's answer included.
func TestPollerPollsWithoutAProcessPerPoll(t *testing.T) {
	c := server(t)
	screen := `printf 'first line\n%%end 1764183523 7 1\n%%error 1 2 3\n\tcaf\303\251 \342\234\273 done\n'; exec sleep 60`
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sh", "-c", screen}, Width: 200, Height: 50})
	if err != nil {
		t.Fatal(err)
	}
	p, count := donePoller(t, c, id)
	pollsAgree(t, c, p, id, 5)
	// The session's id, then the control client.
	if n := count(); n != 2 {
		t.Errorf("5 polls ran %d tmux processes; want 2 (the session lookup and the control client)", n)
	}
	// The client sizes nothing: the session keeps its size.
	if out, err := c.Run(nil, "display-message", "-p", "-t", id, "#{window_width}x#{window_height} #{session_attached}"); err != nil || strings.TrimSpace(out) != "200x50 1" {
		t.Errorf("window size and attached clients: %q, %v", out, err)
	}
	p.Close()
	if out, err := c.Run(nil, "list-clients", "-F", "#{client_name}"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("clients after Close: %q, %v", out, err)
	}
}

// A dead pane (remain-on-exit) reads as Client.Poll reads it; a window
// or a server that is gone fails as Client.Poll fails.
func TestPollerFailsAsClientPollFails(t *testing.T) {
	c := server(t)
	dead, err := c.NewWindow(WindowSpec{Session: "s", Name: "dead", Command: []string{"sh", "-c", "echo bye; exit 3"}, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := c.NewWindow(WindowSpec{Session: "s", Name: "live", Command: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the pane dead", 10*time.Second, func() bool {
		s, _, err := c.Poll(dead)
		return err == nil && s.Dead && s.ExitKnown()
	})
	p := NewPoller(c.Server())
	defer p.Close()
	for _, id := range []string{dead, live} {
		want, wantScreen, _ := c.Poll(id)
		if got, screen, err := p.Poll(id); err != nil || got != want || screen != wantScreen {
			t.Errorf("poll %s: %+v %q %v; Client.Poll: %+v %q", id, got, screen, err, want, wantScreen)
		}
	}
	if err := c.KillWindow(live); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Poll(live); !IsNotFound(err) {
		t.Errorf("poll of a window gone: %v", err)
	}
	if _, _, err := p.Poll(dead); err != nil {
		t.Errorf("poll after a failed one: %v", err)
	}
	c.KillServer()
	if _, _, err := p.Poll(dead); !IsNoServer(err) && !IsServerGone(err) {
		t.Errorf("poll of a server gone: %v", err)
	}
}

// A session with destroy-unattached on (a user's, swarm spawned into from
// inside it) is never attached by a poller: its detach when the monitor
// ends would destroy the session. Its polls go through Client.Poll.
func TestPollerLeavesADestroyUnattachedSessionAlone(t *testing.T) {
	c := server(t)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	// The user's own client keeps the session alive with the option on.
	user := exec.Command(c.Bin, append([]string{"-C"}, c.Args([]string{"attach-session", "-t", "s"})...)...)
	stdin, err := user.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = user.Wait() }()
	testenv.Eventually(t, "the user's client", 10*time.Second, func() bool {
		out, _ := c.Run(nil, "list-clients", "-F", "#{client_name}")
		return strings.TrimSpace(out) != ""
	})
	if _, err := c.Run(nil, "set-option", "-t", "s", "destroy-unattached", "on"); err != nil {
		t.Fatal(err)
	}
	p := NewPoller(c.Server())
	defer p.Close()
	want, wantScreen, err := c.Poll(id)
	if err != nil {
		t.Fatal(err)
	}
	if got, screen, err := p.Poll(id); err != nil || got != want || screen != wantScreen {
		t.Fatalf("poll: %+v %q %v; Client.Poll: %+v %q", got, screen, err, want, wantScreen)
	}
	out, err := c.Run(nil, "list-clients", "-F", "#{client_name}")
	if n := len(strings.Fields(out)); err != nil || n != 1 {
		t.Errorf("clients: %q, %v; want the user's alone", out, err)
	}
}

// A user's hook run after our display-message answers to our client too
// (its guard lines' flags are 0): skipped whole, never read as the
// screen, even with a pane that shows lines like tmux's guards.
func TestPollerSkipsAnswersToHooks(t *testing.T) {
	c := server(t)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sh", "-c", `printf 'a\nb\n%%end fake\n%%begin 1 2 1\ndone\n'; exec sleep 60`}, Width: 80, Height: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, hook := range []string{"after-display-message", "after-capture-pane"} {
		if _, err := c.Run(nil, "set-hook", "-g", hook, "set -g @swarm_test_hook 1"); err != nil {
			t.Fatal(err)
		}
	}
	p, count := donePoller(t, c, id)
	pollsAgree(t, c, p, id, 4)
	if n := count(); n != 2 {
		t.Errorf("4 polls ran %d tmux processes; want 2 (the control client stayed in step)", n)
	}
}

// A control client with no poll for its idle time detaches: tmux queues
// its notifications meanwhile, and a server told to exit would wait for
// them to be read (a paused loop's monitor polls no more).
func TestPollerDetachesWhenIdle(t *testing.T) {
	c := server(t)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPoller(c.Server())
	p.Idle = 300 * time.Millisecond
	defer p.Close()
	clients := func() int {
		out, _ := c.Run(nil, "list-clients", "-F", "#{client_name}")
		return len(strings.Fields(out))
	}
	if _, _, err := p.Poll(id); err != nil || clients() != 1 {
		t.Fatalf("poll: %v, %d clients", err, clients())
	}
	// Notifications nobody reads: more than a pipe holds.
	for i := 0; i < 2000; i++ {
		if _, err := c.Run(nil, "rename-window", "-t", id, fmt.Sprintf("w%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "the idle client to detach", 10*time.Second, func() bool { return clients() == 0 })
	c.KillServer()
	// The server is gone: a new one starts.
	if _, err := c.NewWindow(WindowSpec{Session: "s2", Name: "w", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatalf("a new server after kill-server: %v", err)
	}
}
