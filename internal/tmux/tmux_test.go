package tmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/testenv"
)

func TestParsePane(t *testing.T) {
	p, ok := parsePane("1\t3\t\t1764183523\t42\t@7\tswarm-ab\tT1\tmy\tname")
	if !ok || !p.Dead || !p.HasExit || p.Exit != 3 || p.HasSignal || p.PID != 42 || p.WindowID != "@7" || p.Session != "swarm-ab" || p.Tag != "T1" || p.WindowName != "my\tname" ||
		!p.DeadAt.Equal(time.Unix(1764183523, 0)) {
		t.Fatalf("%+v %v", p, ok)
	}
	if p.ExitCode() != 3 || !p.ExitKnown() {
		t.Error("exit code")
	}
	p, _ = parsePane("1\t\t15\t\t42\t@7\ts\t\tw")
	if !p.HasSignal || p.ExitCode() != 143 {
		t.Errorf("signal: %+v", p)
	}
	p, _ = parsePane("0\t\t\t\t42\t@7\ts\t\tw")
	if p.Dead || p.ExitKnown() || !p.DeadAt.IsZero() {
		t.Errorf("alive: %+v", p)
	}
	if _, ok := parsePane("garbage"); ok {
		t.Error("garbage parsed")
	}
	if _, ok := parsePane("0\t\t\t\t42\t@7\ts\t"); ok {
		t.Error("a line of eight fields parsed")
	}
}

func TestWindows(t *testing.T) {
	ws := Windows([]Pane{
		{Session: "s", WindowName: "foobar", WindowID: "@1"},
		{Session: "s", WindowName: "foo", WindowID: "@2", Liveness: Liveness{Dead: true}},
		{Session: "s", WindowName: "foo", WindowID: "@2"},
	})
	if len(ws) != 2 || ws[1].Panes != 2 || ws[1].AllDead {
		t.Fatalf("Windows = %+v", ws)
	}
	if w, ok := FindWindow(ws, "s", "foo"); !ok || w.WindowID != "@2" {
		t.Errorf("FindWindow foo = %+v", w)
	}
	if _, ok := FindWindow(ws, "s", "fo"); ok {
		t.Error("prefix matched")
	}
}

var sockets atomic.Int64

func server(t *testing.T) *Client {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	t.Parallel()
	c := New(fmt.Sprintf("swarm-tmux-test-%d-%d", os.Getpid(), sockets.Add(1)))
	t.Cleanup(func() { c.KillServer() })
	return c
}

// KillServer stops the server and removes its socket; when tmux cannot
// even be run the server keeps its socket, so it can be stopped later.
func TestKillServerKeepsTheSocketOfAServerItCouldNotStop(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, c)
	sock := c.Server().SocketPath()
	bin := c.Bin
	c.Bin = filepath.Join(t.TempDir(), "no-such-tmux")
	if err := c.KillServer(); err == nil {
		t.Fatal("KillServer without a tmux to run succeeded")
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the socket of the server that still runs went: %v", err)
	}
	c.Bin = bin
	if err := c.KillServer(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the server to exit", 10*time.Second, func() bool { return !proc.Alive(pid) })
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket after KillServer: %v", err)
	}
}

func TestNoServerMeansNoPanes(t *testing.T) {
	c := server(t)
	panes, err := c.ListPanes()
	if err != nil || panes != nil {
		t.Fatalf("%v %v", panes, err)
	}
	if panes, err := c.StartListPanes().Wait(); err != nil || panes != nil {
		t.Fatalf("started: %v %v", panes, err)
	}
	if _, ok, err := c.Lookup("s", "w"); ok || err != nil {
		t.Fatalf("lookup: %v %v", ok, err)
	}
}

// A server closing down answers "server exited unexpectedly" for a moment
// (kill-server returns before it has closed its panes): ListPanes asks
// again instead of failing, and lists the server that follows.
func TestListPanesOutlastsAServerClosingDown(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	dir := shimTmux(t, c, func(dir string) string {
		return fmt.Sprintf("if [ ! -e '%[1]s/failed' ]; then : > '%[1]s/failed'; echo 'server exited unexpectedly' >&2; exit 1; fi\n", dir)
	})
	panes, err := c.ListPanes()
	if err != nil || len(panes) != 1 || panes[0].WindowName != "w" {
		t.Fatalf("panes %+v, error %v", panes, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "failed")); err != nil {
		t.Fatal("the shim never answered as a server closing down")
	}
	// A listing started ahead of its use asks again too.
	if err := os.Remove(filepath.Join(dir, "failed")); err != nil {
		t.Fatal(err)
	}
	panes, err = c.StartListPanes().Wait()
	if err != nil || len(panes) != 1 || panes[0].WindowName != "w" {
		t.Fatalf("started: panes %+v, error %v", panes, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "failed")); err != nil {
		t.Fatal("started: the shim never answered as a server closing down")
	}
}

// A server may have no session only for the listing ("no current
// target"), and one when it is asked (a session made meanwhile): the
// listing is asked again, not failed, and not taken for an empty server.
// A server that has no session indeed lists no panes.
func TestListPanesOutlastsASessionComingBack(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	real := c.Bin
	// The first list-panes (its arguments are escaped, so the name is
	// matched anywhere in them) answers as a server without sessions.
	dir := shimTmux(t, c, func(dir string) string {
		return fmt.Sprintf("case \"$*\" in *list-panes*) if [ ! -e '%[1]s/failed' ]; then : > '%[1]s/failed'; echo 'no current target' >&2; exit 1; fi;; esac\n", dir)
	})
	for _, tc := range []struct {
		name string
		list func() ([]Pane, error)
	}{
		{"ListPanes", c.ListPanes},
		{"StartListPanes", func() ([]Pane, error) { return c.StartListPanes().Wait() }},
	} {
		_ = os.Remove(filepath.Join(dir, "failed"))
		panes, err := tc.list()
		if err != nil || len(panes) != 1 || panes[0].WindowName != "w" {
			t.Fatalf("%s: panes %+v, error %v", tc.name, panes, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "failed")); err != nil {
			t.Fatalf("%s: the shim never answered as a server without sessions", tc.name)
		}
	}

	// No session indeed (exit-empty off keeps the server): no panes.
	c.Bin = real
	if _, err := c.Run(nil, "set-option", "-s", "exit-empty", "off"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(nil, "kill-session", "-t", "s"); err != nil {
		t.Fatal(err)
	}
	panes, err := c.ListPanes()
	if err != nil || len(panes) != 0 {
		t.Fatalf("server without sessions: panes %+v, error %v", panes, err)
	}
	// Nor after a server closing down ("server exited unexpectedly"),
	// asked again, answers so: a new server before its first session.
	dir = shimTmux(t, c, func(dir string) string {
		return fmt.Sprintf("if [ ! -e '%[1]s/gone' ]; then : > '%[1]s/gone'; echo 'server exited unexpectedly' >&2; exit 1; fi\n", dir)
	})
	panes, err = c.ListPanes()
	if err != nil || len(panes) != 0 {
		t.Fatalf("a server gone, then one without sessions: panes %+v, error %v", panes, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); err != nil {
		t.Fatal("the shim never answered as a server closing down")
	}
}

// A listing started ahead of its use (StartListPanes) has its process
// running when the call returns, and Wait answers as ListPanes; a tmux
// that is not installed, or a server that may not be connected to, is
// Wait's error.
func TestStartListPanes(t *testing.T) {
	c := server(t)
	for _, name := range []string{"a", "b"} {
		if _, err := c.NewWindow(WindowSpec{Session: "s", Name: name, Command: []string{"sleep", "60"}, Tag: "tag-" + name}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := c.ListPanes()
	if err != nil || len(want) != 2 {
		t.Fatalf("ListPanes: %+v, %v", want, err)
	}
	l := c.StartListPanes()
	if l.running.cmd == nil || l.running.cmd.Process == nil {
		t.Fatalf("no process once StartListPanes returned: %+v", l.running.err)
	}
	got, err := l.Wait()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Wait = %+v, %v; ListPanes = %+v", got, err, want)
	}
	missing := *c
	missing.Bin = "swarm-test-no-such-tmux"
	if _, err := missing.StartListPanes().Wait(); err == nil || err.Error() != "tmux not found (install tmux 3.x)" {
		t.Errorf("no tmux: %v", err)
	}
	refused := *c
	refused.Socket = "a/b"
	if _, err := refused.StartListPanes().Wait(); err == nil || err.Error() != "invalid tmux socket name 'a/b' (no '/')" {
		t.Errorf("a server that may not be connected to: %v", err)
	}
}

// WindowPanes lists one window's panes as ListPanes lists them; a window
// or a server that does not exist has none.
func TestWindowPanes(t *testing.T) {
	c := server(t)
	if panes, err := c.WindowPanes("@0"); err != nil || panes != nil {
		t.Fatalf("no server: %+v, %v", panes, err)
	}
	var ids []string
	for _, name := range []string{"a", "b"} {
		id, err := c.NewWindow(WindowSpec{Session: "s", Name: name, Command: []string{"sleep", "60"}, Tag: "tag-" + name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	all, err := c.ListPanes()
	if err != nil || len(all) != 2 {
		t.Fatalf("ListPanes: %+v, %v", all, err)
	}
	for i, id := range ids {
		panes, err := c.WindowPanes(id)
		if err != nil || len(panes) != 1 || panes[0] != all[i] {
			t.Errorf("WindowPanes(%s) = %+v, %v; ListPanes has %+v", id, panes, err, all[i])
		}
	}
	if panes, err := c.WindowPanes("@999"); err != nil || panes != nil {
		t.Errorf("a window that does not exist: %+v, %v", panes, err)
	}
}

func TestNewWindowNoStrayWindowAndExactTargets(t *testing.T) {
	c := server(t)
	dir := t.TempDir()
	id1, err := c.NewWindow(WindowSpec{Session: "s", Name: "foobar", Dir: dir, Env: []string{"K=a b"}, Command: []string{"sh", "-c", `echo "K=$K in $(pwd)"; exec sleep 300`}})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := c.NewWindow(WindowSpec{Session: "s", Name: "foo", Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	panes, _ := c.ListPanes()
	if len(panes) != 2 {
		t.Fatalf("want exactly the two windows, got %+v", panes)
	}
	testenv.Eventually(t, "env and dir", 10*time.Second, func() bool {
		s, _ := c.Capture(id1, CaptureOptions{})
		return strings.Contains(s, "K=a b in "+dir)
	})
	if err := c.KillWindow(id2); err != nil {
		t.Fatal(err)
	}
	if w, ok, _ := c.Lookup("s", "foobar"); !ok || w.WindowID != id1 {
		t.Fatal("killing foo touched foobar")
	}
}

// With a Launch, every try to make the window gets a command of its own,
// and a failed try's is undone: on a server not yet running, new-window
// fails, and new-session makes the window with the second command.
func TestNewWindowLaunchesEveryTry(t *testing.T) {
	c := server(t)
	var launched, undone []int
	launch := func() ([]string, func(), error) {
		n := len(launched) + 1
		launched = append(launched, n)
		return []string{"sh", "-c", fmt.Sprintf("echo try %d; exec sleep 300", n)}, func() { undone = append(undone, n) }, nil
	}
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Launch: launch})
	if err != nil {
		t.Fatal(err)
	}
	if len(launched) != 2 || len(undone) != 1 || undone[0] != 1 {
		t.Fatalf("launched %v, undone %v; want two tries, the first undone", launched, undone)
	}
	testenv.Eventually(t, "the second try's command", 10*time.Second, func() bool {
		s, _ := c.Capture(id, CaptureOptions{})
		return strings.Contains(s, "try 2")
	})
}

func TestTypeTextAndPaste(t *testing.T) {
	c := server(t)
	out := filepath.Join(t.TempDir(), "out")
	// cat in cooked mode writes each line it gets; the terminal echo is
	// on screen only.
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "cat", Command: []string{"sh", "-c", "cat > " + ShellQuote(out)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(id, "-n x", true); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(id, "Enter C-c", true); err != nil {
		t.Fatal(err)
	}
	if err := c.Paste(id, "l1\nl2"); err != nil {
		t.Fatal(err)
	}
	c.SendKeys(id, "Enter")
	testenv.Eventually(t, "typed lines", 10*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return string(b) == "-n x\nEnter C-c\nl1\nl2\n"
	})
	if bufs, _ := c.Run(nil, "list-buffers"); strings.TrimSpace(bufs) != "" {
		t.Errorf("paste buffer left behind: %q", bufs)
	}
}

func TestRespawnClearsPipesAndReportsExit(t *testing.T) {
	c := server(t)
	dir := t.TempDir()
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "loop", Command: []string{"sh", "-c", "echo old output; exec sleep 300"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "old output", 10*time.Second, func() bool { s, _ := c.Capture(id, CaptureOptions{}); return strings.Contains(s, "old output") })
	pipe := filepath.Join(dir, "pipe.log")
	err = c.Respawn(id, RespawnSpec{Dir: dir, Command: []string{"sh", "-c", "echo first; sleep 0.3; echo second; exit 3"}, PipeTo: pipe, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "dead pane", 10*time.Second, func() bool { st, _, err := c.Poll(id); return err == nil && st.Dead })
	st, screen, _ := c.Poll(id)
	if strings.Contains(screen, "old output") || !strings.Contains(screen, "second") {
		t.Errorf("screen after respawn:\n%s", screen)
	}
	// tmux 3.3 may never set the status; when it does, it is right.
	if st.ExitKnown() && st.ExitCode() != 3 {
		t.Errorf("exit = %d", st.ExitCode())
	}
	testenv.Eventually(t, "piped output", 10*time.Second, func() bool {
		b, _ := os.ReadFile(pipe)
		return strings.Contains(string(b), "first") && strings.Contains(string(b), "second")
	})
	// The window, and its id, survive the agent's exit.
	if w, ok, _ := c.Lookup("s", "loop"); !ok || w.WindowID != id || !w.AllDead {
		t.Errorf("window after exit: %+v %v", w, ok)
	}
	if _, _, err := c.Poll("@999"); !IsNotFound(err) {
		t.Errorf("poll of a missing window: %v", err)
	}
}

func TestConcurrentNewWindowsShareOneSession(t *testing.T) {
	c := server(t)
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		go func(i int) {
			_, err := c.NewWindow(WindowSpec{Session: "s", Name: fmt.Sprintf("w%d", i), Command: []string{"sleep", "300"}})
			errs <- err
		}(i)
	}
	for i := 0; i < 10; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	panes, _ := c.ListPanes()
	if len(panes) != 10 {
		t.Errorf("%d panes, want 10", len(panes))
	}
}

// A window made with RemainOnExit keeps its pane after a command that
// exits at once, with its exit status, under its own name; a stale window
// of the same name is not touched.
func TestNewWindowRemainOnExit(t *testing.T) {
	c := server(t)
	stale, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sh", "-c", "echo bye; sleep 0.2; exit 3"}, RemainOnExit: true})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps, _, err := c.Poll(id)
		if err == nil && ps.Dead {
			// tmux 3.3 scrolls a dead pane's screen into its history,
			// and does not always record the exit status.
			screen, _ := c.Capture(id, CaptureOptions{Start: "-"})
			if (ps.ExitKnown() && ps.ExitCode() != 3) || !strings.Contains(screen, "bye") {
				t.Fatalf("exit %d screen %q", ps.ExitCode(), screen)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pane not kept dead: %v %+v", err, ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	panes, _ := c.ListPanes()
	names := map[string]string{}
	for _, p := range panes {
		names[p.WindowID] = p.WindowName
		// The dead pane's fields come from a conditional of the format
		// (livenessFormat): its exit and end, and nothing for the live one.
		switch {
		case p.WindowID == id && (!p.Dead || p.PID <= 0 || p.ExitKnown() && p.ExitCode() != 3 ||
			!p.DeadAt.IsZero() && time.Since(p.DeadAt) > time.Minute):
			t.Errorf("dead pane listed as %+v", p)
		case p.WindowID == stale && (p.Dead || p.PID <= 0 || p.ExitKnown() || !p.DeadAt.IsZero()):
			t.Errorf("live pane listed as %+v", p)
		}
	}
	if names[id] != "w" || names[stale] != "w" {
		t.Fatalf("names %v", names)
	}
	if out, _ := c.Run(nil, "show-options", "-w", "-v", "-t", stale, "remain-on-exit"); strings.TrimSpace(out) == "on" {
		t.Fatal("the stale window got remain-on-exit")
	}
}

// A create chain that fails after its window was made removes the window:
// NewWindow's retries must never pile up windows.
func TestRunCreateRemovesTheWindowOfAFailedChain(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "keep", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.runCreate([][]string{
		{"new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=s:", "-n", "doomed", "--", "sleep", "60"},
		{"set-option", "-w", "-t", "=s:=no-such-window", "remain-on-exit", "on"},
	})
	if err == nil {
		t.Fatal("the chain did not fail")
	}
	panes, err := c.ListPanes()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range panes {
		if p.WindowName == "doomed" {
			t.Fatalf("the failed chain's window is left: %+v", p)
		}
	}
	if len(panes) != 1 {
		t.Fatalf("panes: %+v", panes)
	}
}

// A session swarm creates has its windows' size while no client is
// attached (default-size), so agents' screens do not wrap at 80 columns.
func TestNewSessionIsSizedForAgents(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "a", Command: []string{"sleep", "60"}, Width: 200, Height: 50}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "b", Command: []string{"sleep", "60"}, Width: 200, Height: 50}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Run(nil, "list-windows", "-t", "=s:", "-F", "#{window_name} #{window_width}x#{window_height}")
	if err != nil {
		t.Fatal(err)
	}
	if out != "a 200x50\nb 200x50\n" {
		t.Fatalf("windows: %q", out)
	}
}

// Issue 16, item 17: a server stopped with SIGSTOP accepts connections
// and never answers. Every call fails after the client's deadline with an
// error that says so, instead of hanging the command.
func TestStoppedTmuxServerCallsHaveADeadline(t *testing.T) {
	c := server(t)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Run(nil, "display-message", "-p", "-t", id, "#{pid}")
	pid, perr := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || perr != nil || pid <= 1 {
		t.Fatalf("server pid: %q %v", out, err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the server goes on before it is killed.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })

	c.Timeout = 300 * time.Millisecond
	calls := []struct {
		name string
		call func() error
	}{
		{"list-panes", func() error { _, err := c.ListPanes(); return err }},
		{"list-panes started", func() error { _, err := c.StartListPanes().Wait(); return err }},
		{"poll", func() error { _, _, err := c.Poll(id); return err }},
		{"type", func() error { return c.TypeText(id, "hi", true) }},
		{"paste", func() error { return c.Paste(id, "a\nb") }},
		{"kill-window", func() error { return c.KillWindow(id) }},
		{"new-window", func() error {
			_, err := c.NewWindow(WindowSpec{Session: "s", Name: "x", Tag: "t", RemainOnExit: true, Command: []string{"sleep", "1"}})
			return err
		}},
	}
	for _, tc := range calls {
		start := time.Now()
		err := tc.call()
		took := time.Since(start)
		if !IsNoAnswer(err) || took > 5*time.Second {
			t.Errorf("%s on a stopped server: %v after %s, want no answer within the deadline", tc.name, err, took)
			continue
		}
		if !strings.Contains(err.Error(), "tmux did not answer within 300ms") || !strings.Contains(err.Error(), "is the server stopped?") || hint.Of(err) == "" {
			t.Errorf("%s: message %q, hint %q", tc.name, err, hint.Of(err))
		}
	}
	// Going on, the server answers again (and carries out what it had
	// read before the clients were killed: the window may be gone).
	syscall.Kill(pid, syscall.SIGCONT)
	c.Timeout = DefaultTimeout
	if _, err := c.ListPanes(); err != nil {
		t.Errorf("after SIGCONT: %v", err)
	}
}

// Poll says whether the pane is piped; PipeTo pipes it (appending), and
// again replaces the pipe: never two, never none.
func TestPipeToAndPolledPipe(t *testing.T) {
	c := server(t)
	out := filepath.Join(t.TempDir(), "out")
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sh", "-c", `i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.05; done`}})
	if err != nil {
		t.Fatal(err)
	}
	if ps, _, err := c.Poll(id); err != nil || ps.Piped {
		t.Fatalf("piped before PipeTo: %+v %v", ps, err)
	}
	for range 2 {
		if err := c.PipeTo(id, out, nil); err != nil {
			t.Fatal(err)
		}
	}
	if ps, _, err := c.Poll(id); err != nil || !ps.Piped {
		t.Fatalf("not piped after PipeTo: %+v %v", ps, err)
	}
	testenv.Eventually(t, "output in the file", 10*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		return strings.Count(string(data), "line ") >= 3
	})
	data, _ := os.ReadFile(out)
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(strings.ReplaceAll(string(data), "\r", "")), "\n") {
		if seen[l] {
			t.Fatalf("%q twice: two pipes\n%s", l, data)
		}
		seen[l] = true
	}
}

// A tmux that answers a window's creation with no window id (tmux 3.3
// that cannot make its socket prints an error and exits 0) is a failed
// creation, never a window recorded with an empty id.
func TestNewWindowWithoutAnIdFails(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tmux")
	testenv.WriteExecutable(t, bin, "#!/bin/sh\necho 'error creating /x/tmux-0/s (No such file or directory)' >&2\nexit 0\n")
	c := &Client{Bin: bin, Timeout: 5 * time.Second}
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "1"}})
	if err == nil || id != "" || !strings.Contains(err.Error(), "tmux made no window") {
		t.Fatalf("NewWindow = %q, %v", id, err)
	}
}

// A client in a locale without UTF-8 (a command run over ssh, where LANG
// is often not set) still reads tmux's formats: tmux writes a tab to such
// a client as '_', which would leave every window unrecognised and every
// worker shown stopped.
func TestListPanesWithoutUTF8Locale(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	shimTmux(t, c, func(string) string { return "export LC_ALL=C LC_CTYPE=C LANG=C\n" })
	panes, err := c.ListPanes()
	if err != nil || len(panes) != 1 || panes[0].WindowName != "w" || panes[0].Session != "s" {
		t.Fatalf("panes %+v, error %v", panes, err)
	}
}

// A poll names the server that answered and the window's tag, through a
// tmux process and through the control client alike: after kill-server
// the next server gives its first window the old one's id, and only the
// server and the tag tell the two apart.
func TestPollNamesTheServerAndTheTag(t *testing.T) {
	c := server(t)
	p := &Poller{Client: c}
	defer p.Close()
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}, Tag: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.ServerID()
	if err != nil || !strings.Contains(first, ".") {
		t.Fatalf("ServerID: %q %v", first, err)
	}
	for _, poll := range []func(string) (PaneStatus, string, error){c.Poll, p.Poll} {
		if st, _, err := poll(id); err != nil || st.Server != first || st.Tag != "tok-1" {
			t.Fatalf("poll: %+v %v (server %q)", st, err, first)
		}
	}
	p.Close()
	if err := c.KillServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerID(); !IsNoServer(err) {
		t.Fatalf("ServerID without a server: %v", err)
	}
	again, err := c.NewWindow(WindowSpec{Session: "s", Name: "other", Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	if again != id {
		t.Skipf("the new server gave its window %s, not %s", again, id)
	}
	st, _, err := c.Poll(id)
	second, _ := c.ServerID()
	if err != nil || st.Tag != "" || st.Server == first || st.Server != second {
		t.Fatalf("poll of the new server's window %s: %+v %v (servers %q, %q)", id, st, err, first, second)
	}
}
