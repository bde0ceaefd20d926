package remote

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/sshtest"
)

// Issue 27 item 26: ssh expands % tokens and ${VAR} in a ControlPath and
// splits an -o value at spaces. A state root holding "%h", "${HOME}" or a
// space puts its sockets in the fallback directory instead, and a client
// given such a directory shares no connection rather than handing ssh the
// path.
func TestControlDirForLeavesOutWhatSshExpands(t *testing.T) {
	fb := "/tmp/swarm-ssh-1"
	for root, want := range map[string]string{
		"/home/u/.swarm":       "/home/u/.swarm/ssh",
		"/home/u/a%hb":         fb,
		"/home/u/a b":          fb,
		"/home/u/${HOME}":      fb,
		"/home/u/x~y":          fb,
		`/home/u/q"x`:          fb,
		"/home/u/new\nline":    fb,
		"/home/u/ok_1.2-x+y@z": "/home/u/ok_1.2-x+y@z/ssh",
	} {
		if got := ControlDirFor(root, fb); got != want {
			t.Errorf("ControlDirFor(%q) = %q, want %q", root, got, want)
		}
	}
	c := &Client{ControlDir: "/tmp/a%h b"}
	if p := c.ControlPath(Host{Target: "x"}); p != "" {
		t.Errorf("ControlPath under %q = %q, want none", c.ControlDir, p)
	}
	if opts := strings.Join(c.options(Host{Target: "x"}), " "); strings.Contains(opts, "Control") {
		t.Errorf("options share a connection through a path ssh would expand: %s", opts)
	}
}

// Against a real sshd: a control directory named with "%h" runs the
// command, and ssh makes no socket anywhere: not in the directory %h
// expands to (the host's address), where ssh had put it.
func TestCallWorksUnderAControlDirSshWouldExpand(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	base := t.TempDir()
	dir := filepath.Join(base, "root%h", "ssh")
	for _, d := range []string{dir, filepath.Join(base, "root"+srv[0].Addr, "ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c := &Client{ConfigFile: k.ConfigFile, ConnectTimeout: 5 * time.Second, ControlDir: dir, Persist: 5 * time.Second}
	var out bytes.Buffer
	res, err := c.Run(context.Background(), Call{Host: Host{Name: "a", Target: srv[0].Alias}, Stdout: &out,
		Command: "echo hi", Timeout: 20 * time.Second})
	if err != nil || res.Code != 0 || out.String() != "hi\n" {
		t.Fatalf("call: code %d err %v out %q", res.Code, err, out.String())
	}
	_ = filepath.Walk(base, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSocket != 0 {
			t.Errorf("a socket was made at %s", p)
		}
		return nil
	})
}
