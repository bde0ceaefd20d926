package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/sshtest"
)

// client returns a client for the test servers of k, sharing connections
// under a temp dir.
func client(t *testing.T, k *sshtest.Keys) *Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "swarm-ssh-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{ConfigFile: k.ConfigFile, ConnectTimeout: 5 * time.Second, ControlDir: filepath.Join(dir, "ssh"), Persist: 5 * time.Second}
	t.Cleanup(func() {
		// Close the shared connections the test left.
		for _, e := range readDir(c.ControlDir) {
			execOutput([]string{"ssh", "-o", "ControlPath=" + filepath.Join(c.ControlDir, e), "-O", "exit", "x"})
		}
		os.RemoveAll(dir)
	})
	return c
}

func readDir(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestRunPassesExitCodeAndOutput(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	c := client(t, k)
	h := Host{Name: "a", Target: srv[0].Alias}
	var out, errb bytes.Buffer
	res, err := c.Run(context.Background(), Call{Host: h, Stdout: &out, Stderr: &errb, Timeout: 20 * time.Second,
		Command: Command([]string{"sh", "-c", `printf 'out\n\033[31mred'; printf 'err\n' >&2; exit 7`})})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != 7 || out.String() != "out\n\033[31mred" || errb.String() != "err\n" {
		t.Errorf("code %d stdout %q stderr %q; want 7, the bytes as written", res.Code, out.String(), errb.String())
	}
}

func TestHostileArgumentsArriveIntact(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	c := client(t, k)
	h := Host{Name: "a", Target: srv[0].Alias}
	args := []string{"a b", "it's", "$HOME", "$(touch /tmp/swarm-pwned)", "x; echo injected", "`id`", "back\\slash", "new\nline", "", "-n", "*"}
	var out bytes.Buffer
	res, err := c.Run(context.Background(), Call{Host: h, Stdout: &out, Timeout: 20 * time.Second,
		Command: Command(append([]string{"printf", `%s\0`}, args...))})
	if err != nil || res.Code != 0 {
		t.Fatalf("code %d, %v", res.Code, err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00")
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", args) {
		t.Errorf("remote argv %q, want %q", got, args)
	}
}

func TestTimeoutStopsACall(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	c := client(t, k)
	start := time.Now()
	_, err := c.Run(context.Background(), Call{Host: Host{Name: "a", Target: srv[0].Alias}, Timeout: 2 * time.Second,
		Command: Command([]string{"sleep", "30"})})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the call took %s with a 2s timeout", d)
	}
}

var masterPID = regexp.MustCompile(`pid=(\d+)`)

// TestDeadMasterSocketIsRemoved: a shared connection's master killed
// (SIGKILL leaves its socket behind) is found dead, its socket removed,
// and the next call connects anew and shares again.
func TestDeadMasterSocketIsRemoved(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	c := client(t, k)
	h := Host{Name: "a", Target: srv[0].Alias}
	ctx := context.Background()
	if res, err := c.Run(ctx, Call{Host: h, Command: "true", Timeout: 20 * time.Second}); err != nil || res.Code != 0 {
		t.Fatalf("first call: %d %v", res.Code, err)
	}
	if !c.CheckMaster(ctx, h) {
		t.Fatal("no live master after the first call")
	}
	var errb bytes.Buffer
	cmd := append([]string{}, c.options(h)...)
	pid := checkPID(t, c, h, &errb, cmd)
	if err := killWait(pid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(c.ControlPath(h)); err != nil {
		t.Fatalf("the killed master's socket should be left behind: %v", err)
	}
	if c.CheckMaster(ctx, h) {
		t.Fatal("a killed master was taken for a live one")
	}
	if _, err := os.Lstat(c.ControlPath(h)); err == nil {
		t.Fatal("the dead master's socket was not removed")
	}
	if res, err := c.Run(ctx, Call{Host: h, Command: "true", Timeout: 20 * time.Second}); err != nil || res.Code != 0 {
		t.Fatalf("call after the master died: %d %v", res.Code, err)
	}
	if !c.CheckMaster(ctx, h) {
		t.Fatal("the call after the dead master made no new one")
	}
}

// checkPID asks the master of h for its pid (ssh -O check).
func checkPID(t *testing.T, c *Client, h Host, errb *bytes.Buffer, opts []string) int {
	t.Helper()
	out, err := execOutput(append([]string{"ssh"}, append(opts, "-O", "check", h.Target)...))
	m := masterPID.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("ssh -O check: %v %s", err, out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestUnreachableHostFailsWithinTheConnectTimeout(t *testing.T) {
	t.Parallel()
	k, _ := sshtest.New(t)
	// One address refuses connections; the other accepts them and never
	// says a word, as a stuck or firewalled host does.
	refused, err := net.Listen("tcp", "127.0.0.5:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedPort := refused.Addr().(*net.TCPAddr).Port
	refused.Close()
	silentPort := sshtest.Silent(t, "127.0.0.6")
	c := client(t, k)
	c.ConnectTimeout = 2 * time.Second
	for _, tc := range []struct {
		name string
		host Host
	}{
		{"refused", Host{Name: "r", Target: "127.0.0.5", Options: []string{"Port=" + strconv.Itoa(refusedPort)}}},
		{"silent", Host{Name: "s", Target: "127.0.0.6", Options: []string{"Port=" + strconv.Itoa(silentPort)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := make([]Call, 5)
			bufs := make([]bytes.Buffer, 5)
			for i := range calls {
				calls[i] = Call{Host: tc.host, Command: "true", Timeout: c.ConnectTimeout + time.Second, Stderr: &bufs[i]}
			}
			start := time.Now()
			outs := c.Fanout(context.Background(), calls, 2)
			if d := time.Since(start); d > c.ConnectTimeout+3*time.Second {
				t.Errorf("5 calls to an unreachable host took %s, connect timeout %s", d, c.ConnectTimeout)
			}
			for i, o := range outs {
				if msg := Failure(o.Result, o.Err, bufs[i].Bytes()); !failedToConnect(o) || msg == "" {
					t.Errorf("call %d: %+v %q; want a failure with its reason", i, o, msg)
				}
			}
			if msg := outs[4].Err; msg == nil {
				t.Errorf("the calls after the first should share its error, got %+v", outs[4])
			}
		})
	}
}

// TestFanoutStaysUnderMaxSessions: 30 calls to hosts that share one
// target run at most perConnection at a time over one connection, so an
// sshd allowing 4 sessions a connection serves them all.
func TestFanoutStaysUnderMaxSessions(t *testing.T) {
	t.Parallel()
	sshtest.Require(t)
	k, err := sshtest.NewKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := k.Start("a", "127.0.0.2", "MaxSessions 4", "MaxStartups 3:100:3")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c := client(t, k)
	dir := t.TempDir()
	// Each call counts itself in while it runs, under a lock.
	script := fmt.Sprintf(`exec 9>>%[1]s/lock; flock 9; n=$(( $(cat %[1]s/n 2>/dev/null || echo 0) + 1 )); echo $n > %[1]s/n; echo $n >> %[1]s/seen; flock -u 9
sleep 0.2
flock 9; n=$(( $(cat %[1]s/n) - 1 )); echo $n > %[1]s/n`, dir)
	calls := make([]Call, 30)
	bufs := make([]bytes.Buffer, len(calls))
	for i := range calls {
		calls[i] = Call{Host: Host{Name: fmt.Sprintf("h%d", i), Target: "a"}, Command: Command([]string{"sh", "-c", script}),
			Timeout: 30 * time.Second, Stderr: &bufs[i]}
	}
	for i, o := range c.Fanout(context.Background(), calls, DefaultPerConnection) {
		if o.Err != nil || o.Code != 0 {
			t.Errorf("call %d: %+v %s", i, o, bufs[i].String())
		}
	}
	seen, _ := os.ReadFile(filepath.Join(dir, "seen"))
	most := 0
	for _, f := range strings.Fields(string(seen)) {
		n, _ := strconv.Atoi(f)
		most = max(most, n)
	}
	if len(strings.Fields(string(seen))) != len(calls) || most > DefaultPerConnection {
		t.Errorf("%d calls counted, at most %d at once; want %d, at most %d", len(strings.Fields(string(seen))), most, len(calls), DefaultPerConnection)
	}
}

// A master that is stuck (stopped) is not waited on: its socket is
// removed after the check's few seconds and the call connects anew.
func TestStuckMasterIsNotWaitedOn(t *testing.T) {
	t.Parallel()
	k, srv := sshtest.New(t, "a")
	c := client(t, k)
	h := Host{Name: "a", Target: srv[0].Alias}
	ctx := context.Background()
	if res, err := c.Run(ctx, Call{Host: h, Command: "true", Timeout: 20 * time.Second}); err != nil || res.Code != 0 {
		t.Fatalf("first call: %d %v", res.Code, err)
	}
	pid := checkPID(t, c, h, nil, c.options(h))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	start := time.Now()
	res, err := c.Run(ctx, Call{Host: h, Command: "true", Timeout: 30 * time.Second})
	if err != nil || res.Code != 0 {
		t.Fatalf("call with the master stopped: %d %v", res.Code, err)
	}
	if d := time.Since(start); d > checkTimeout+5*time.Second {
		t.Errorf("the call took %s with the master stopped", d)
	}
}
