package tmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
)

// pathServer is a client for a server on a -S socket in a private
// directory of its own (not tmux's -L directory), stopped at cleanup.
func pathServer(t *testing.T) (*Client, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := filepath.Join(t.TempDir(), "socks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := NewFor(Server{Path: filepath.Join(dir, "s")})
	t.Cleanup(func() {
		_ = os.Chmod(dir, 0o700)
		_ = os.Lchown(c.Path, os.Geteuid(), os.Getegid())
		_ = c.KillServer()
	})
	return c, dir
}

// Issue 27 item 22: a recorded -S socket path is connected to only while
// the socket is this user's and its directory is the user's and not
// writable by others. A server of another user listening at the path
// (its directory /tmp, the user's own server gone) gets no client.
func TestClientRefusesASocketAnotherUserMayListenOn(t *testing.T) {
	t.Parallel()
	c, dir := pathServer(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListPanes(); err != nil {
		t.Fatalf("the user's own socket: %v", err)
	}

	refused := func(what, want string) {
		t.Helper()
		_, err := c.ListPanes()
		if err == nil || !strings.Contains(err.Error(), want) || hint.Of(err) == "" {
			t.Errorf("%s: err = %v (hint %q), want %q with a hint", what, err, hint.Of(err), want)
		}
		if p := NewPoller(c.Server()); p != nil {
			if ctl, err := p.attach("=s:"); err == nil {
				ctl.close()
				t.Errorf("%s: a control client attached", what)
			}
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	refused("a directory others can write", "tmux socket directory "+dir+" is writable by others (mode 0777)")
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListPanes(); err != nil {
		t.Fatalf("the directory made private again: %v", err)
	}

	if os.Geteuid() != 0 {
		t.Log("not root: the sockets and directories of other users are not tried")
		return
	}
	other := 65534
	if err := os.Lchown(c.Path, other, other); err != nil {
		t.Fatal(err)
	}
	refused("another user's socket", fmt.Sprintf("tmux socket %s is owned by another user (uid %d)", c.Path, other))
	if err := os.Lchown(c.Path, os.Geteuid(), os.Getegid()); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, other, other); err != nil {
		t.Fatal(err)
	}
	refused("another user's directory", fmt.Sprintf("tmux socket directory %s is owned by another user (uid %d)", dir, other))
	if err := os.Lchown(dir, os.Geteuid(), os.Getegid()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListPanes(); err != nil {
		t.Fatalf("the user's own again: %v", err)
	}
}

// A path whose directory or socket is not there yet is fine (no server
// listens; tmux makes the socket as the user), and a file that is not a
// socket is refused.
func TestCheckOwnerOfMissingAndOddPaths(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "missing", "s"), filepath.Join(dir, "s")} {
		if err := (Server{Path: p}).CheckOwner(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (Server{Path: file}).CheckOwner(); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("a regular file: %v", err)
	}
	if err := (Server{Name: "x"}).CheckOwner(); err != nil {
		t.Errorf("a -L name: %v", err)
	}
}

// Issue 27 item 22: a tmux client runs with a minimal environment. The
// client that starts a server makes its environment the server's global
// one (every window's, readable with show-environment -g), and every
// client sends its environment to the server it connects to: a secret in
// the environment of the command that runs tmux reaches neither, while
// what tmux needs (HOME, the locale, PATH for its shells) does.
func TestClientSendsTheServerNoSecret(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	secret := fmt.Sprintf("sk-client-%d", os.Getpid())
	t.Setenv("SWARM_TEST_CLIENT_SECRET", secret)
	t.Setenv("LC_TIME", "C")
	dir := filepath.Join(t.TempDir(), "socks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := NewFor(Server{Path: filepath.Join(dir, "s")})
	t.Cleanup(func() { _ = c.KillServer() })
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewWindow(WindowSpec{Session: "s2", Name: "w", Command: []string{"sleep", "300"}}); err != nil {
		t.Fatal(err)
	}
	global, err := c.Run(nil, "show-environment", "-g")
	if err != nil {
		t.Fatal(err)
	}
	for _, session := range []string{"s", "s2"} {
		out, err := c.Run(nil, "show-environment", "-t", "="+session+":")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, secret) {
			t.Errorf("session %s's environment holds the client's secret:\n%s", session, out)
		}
	}
	if strings.Contains(global, secret) {
		t.Errorf("the server's global environment holds the client's secret:\n%s", global)
	}
	for _, want := range []string{"HOME=" + os.Getenv("HOME") + "\n", "PATH=" + os.Getenv("PATH") + "\n", "LC_TIME=C\n"} {
		if !strings.Contains(global, want) {
			t.Errorf("the server's global environment lacks %q:\n%s", want, global)
		}
	}
}

func TestClientEnv(t *testing.T) {
	got := clientEnv([]string{"HOME=/h", "ANTHROPIC_API_KEY=k", "LC_ALL=C.UTF-8", "TMUX_TMPDIR=/t", "PATH=/bin", "LCX=1", "TERM=xterm", "GITHUB_TOKEN=g", "SSH_AUTH_SOCK=/s", "bad"})
	want := "HOME=/h LC_ALL=C.UTF-8 TMUX_TMPDIR=/t PATH=/bin TERM=xterm SSH_AUTH_SOCK=/s"
	if strings.Join(got, " ") != want {
		t.Errorf("clientEnv = %q, want %q", got, want)
	}
}

// The minimal environment keeps what tmux reads to set a server up as the
// user's shell has it: VISUAL and EDITOR choose vi keys for copy mode and
// the command prompt (mode-keys, status-keys) when they name vi, on the
// server a swarm command starts and the user attaches to.
func TestClientEnvKeepsTheEditorTmuxReads(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	t.Setenv("VISUAL", "") // restored after the test
	os.Unsetenv("VISUAL")
	t.Setenv("EDITOR", "vim")
	dir := filepath.Join(t.TempDir(), "socks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := NewFor(Server{Path: filepath.Join(dir, "s")})
	t.Cleanup(func() { _ = c.KillServer() })
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "300"}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Run(nil, "show-options", "-gw", "mode-keys")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "mode-keys vi" {
		t.Errorf("with EDITOR=vim the server swarm started has %q, as plain tmux has mode-keys vi", strings.TrimSpace(out))
	}
}
