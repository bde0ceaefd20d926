package tmux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerCheck(t *testing.T) {
	for _, ok := range []Server{{}, {Name: "swarm"}, {Path: "/tmp/tmux-0/default"}, {Name: "x", Path: "/a b/ü;#{x}"}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v refused: %v", ok, err)
		}
	}
	for _, bad := range []struct {
		s    Server
		what string
	}{
		{Server{Name: "../x"}, "invalid tmux socket name '../x' (no '/')"},
		{Server{Name: "/abs", Path: "/tmp/s"}, "invalid tmux socket name"},
		{Server{Path: "rel/s"}, `invalid tmux socket path "rel/s" (it must be absolute and clean)`},
		{Server{Path: "s"}, "invalid tmux socket path"},
		{Server{Path: "/tmp/../s"}, "invalid tmux socket path"},
		{Server{Path: "/tmp//s"}, "invalid tmux socket path"},
		{Server{Path: "/tmp/s/"}, "invalid tmux socket path"},
		{Server{Path: "/tmp/s\n-L x"}, `invalid tmux socket path "/tmp/s\n-L x"`},
		{Server{Path: "/tmp/s\x00"}, "invalid tmux socket path"},
		{Server{Path: "/tmp/\x1b[2Js"}, "invalid tmux socket path"},
		{Server{Path: "/tmp/s\x7f"}, "invalid tmux socket path"},
	} {
		if err := bad.s.Check(); err == nil || !strings.HasPrefix(err.Error(), bad.what) {
			t.Errorf("%+v: %v, want %s", bad.s, err, bad.what)
		}
	}
}

// A client refuses a bad path before it runs tmux.
func TestClientRefusesBadPath(t *testing.T) {
	c := &Client{Path: "relative/sock", Bin: "/nonexistent/tmux"}
	if _, err := c.Run(nil, "list-sessions"); err == nil || !strings.Contains(err.Error(), "invalid tmux socket path") {
		t.Errorf("err = %v", err)
	}
}

func TestArgsPathWinsOverName(t *testing.T) {
	c := NewFor(Server{Name: "sock", Path: "/run/t s"})
	if args := c.Args([]string{"kill-window", "-t", "@1"}); strings.Join(args, "|") != "-S|/run/t s|kill-window|-t|@1" {
		t.Errorf("Args = %q", args)
	}
	if args := New("").Args([]string{"list-sessions"}); strings.Join(args, "|") != "list-sessions" {
		t.Errorf("no server: %q", args)
	}
}

// SocketDir and LabelPath find the socket tmux -L makes, as the server
// itself reports it, with TMUX_TMPDIR unset, empty, missing, and a
// symbolic link.
func TestLabelPathIsTmuxs(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for i, tmpdir := range []*string{nil, ptr(""), ptr(filepath.Join(real, "missing")), &link, &real} {
		env := map[string]string{}
		if tmpdir != nil {
			env["TMUX_TMPDIR"] = *tmpdir
		}
		name := fmt.Sprintf("swarm-label-%d-%d", os.Getpid(), i)
		want, err := LabelPath(name, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) string {
			cmd := exec.Command("tmux", append([]string{"-L", name, "-f", "/dev/null"}, args...)...)
			cmd.Env = append(os.Environ(), "TMUX=", "TMUX_TMPDIR=")
			if tmpdir != nil {
				cmd.Env = append(cmd.Env, "TMUX_TMPDIR="+*tmpdir)
			} else {
				cmd.Env = withoutEnv(cmd.Env, "TMUX_TMPDIR")
			}
			out, _ := cmd.CombinedOutput()
			return strings.TrimSpace(string(out))
		}
		run("new-session", "-d", "sleep 60")
		got := run("display-message", "-p", "#{socket_path}")
		run("kill-server")
		os.Remove(got)
		if got != want {
			t.Errorf("TMUX_TMPDIR %v: tmux -L uses %q, LabelPath says %q", env, got, want)
		}
	}
}

func ptr(s string) *string { return &s }

func TestServerFor(t *testing.T) {
	dir, err := SocketDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(dir, "default")
	for _, tc := range []struct {
		name, tmux string
		want       Server
	}{
		{"", "", Server{Path: def}},
		// tmux itself ignores a $TMUX without a path.
		{"", ",1,0", Server{Path: def}},
		{"x", "", Server{Name: "x", Path: filepath.Join(dir, "x")}},
		// --tmux-socket wins over $TMUX.
		{"x", "/run/s,1,0", Server{Name: "x", Path: filepath.Join(dir, "x")}},
		{"", "/run/s,1,0", Server{Path: "/run/s"}},
		{"", "/run/s", Server{Path: "/run/s"}},
		// This user's tmux -L name keeps its name, for swarm.py.
		{"", filepath.Join(dir, "mine") + ",1,0", Server{Name: "mine", Path: filepath.Join(dir, "mine")}},
		{"", def + ",1,0", Server{Path: def}},
		// An unusable $TMUX: plain tmux, as before.
		{"", "rel/s,1,0", Server{}},
		{"", "/run/../s,1,0", Server{}},
	} {
		t.Run(tc.name+" "+tc.tmux, func(t *testing.T) {
			t.Setenv("TMUX", tc.tmux)
			got, err := ServerFor(tc.name)
			if err != nil || got != tc.want {
				t.Errorf("ServerFor(%q) with TMUX=%q = %+v, %v; want %+v", tc.name, tc.tmux, got, err, tc.want)
			}
		})
	}
	if _, err := ServerFor("a/b"); err == nil || !strings.Contains(err.Error(), "invalid tmux socket name") {
		t.Errorf("a name with '/': %v", err)
	}
}

// Attach switches the client of the server it is inside, and attaches
// (TMUX unset) to any other.
func TestInside(t *testing.T) {
	dir, err := SocketDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c      *Client
		tmux   string
		inside bool
	}{
		{New(""), "", false},
		{New(""), "/run/s,1,0", true},
		{New("x"), "", false},
		{New("x"), "/run/s,1,0", false},
		{New("x"), filepath.Join(dir, "x") + ",1,0", true},
		{NewFor(Server{Path: "/run/s"}), "/run/s,1,0", true},
		{NewFor(Server{Path: "/run/s"}), "/run/t,1,0", false},
		{NewFor(Server{Path: "/run/s"}), "", false},
		{NewFor(Server{Name: "x", Path: "/run/s"}), filepath.Join(dir, "x") + ",1,0", false},
	} {
		if got := tc.c.inside(tc.tmux); got != tc.inside {
			t.Errorf("client %+v with TMUX=%q: inside %v, want %v", tc.c.Server(), tc.tmux, got, tc.inside)
		}
	}
}
