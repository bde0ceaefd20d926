package main

// Black-box tests of workers living in a tmux server other than the one a
// later command would reach with plain tmux: spawned inside a server
// ($TMUX), or outside tmux on the default server, and then listed, sent
// to, peeked at and killed from outside any tmux and from inside yet
// another server (issue 15, item 3).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// svServer is a tmux server of a test, apart from the env's own.
type svServer struct {
	t *testing.T
	// args select it (-S PATH or -L NAME; none for the default server
	// of env's TMUX_TMPDIR), env is what tmux runs with.
	args []string
	env  []string
	// path is its socket path, tmuxEnv the $TMUX of a pane in it.
	path, tmuxEnv string
}

// svStart starts a tmux server with one session, which keeps it alive,
// and removes it when the test ends.
func svStart(t *testing.T, env []string, args ...string) *svServer {
	t.Helper()
	s := &svServer{t: t, args: args, env: append([]string{"TMUX="}, env...)}
	s.tmux("-f", "/dev/null", "new-session", "-d", "-s", "outer", "sleep 600")
	t.Cleanup(func() {
		s.run("kill-server")
		os.Remove(s.path)
	})
	out := strings.Fields(s.tmux("display-message", "-p", "-t", "outer:", "#{socket_path} #{pid}"))
	if len(out) != 2 || !filepath.IsAbs(out[0]) {
		t.Fatalf("server's socket path and pid: %q", out)
	}
	s.path, s.tmuxEnv = out[0], out[0]+","+out[1]+",0"
	return s
}

func (s *svServer) run(args ...string) (string, error) {
	cmd := exec.Command("tmux", append(append([]string(nil), s.args...), args...)...)
	cmd.Env = append(os.Environ(), s.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *svServer) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.run(args...)
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return out
}

// window returns the id and pane pid of the window named name ("" if
// there is none).
func (s *svServer) window(name string) (id, pid string) {
	out, _ := s.run("list-windows", "-a", "-F", "#{window_name} #{window_id} #{pane_pid}")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == name {
			return f[1], f[2]
		}
	}
	return "", ""
}

// svRun runs swarm with env's environment changed by extra (a later
// KEY=VAL wins).
func svRun(t *testing.T, e *testenv.Env, extra []string, args ...string) testenv.Result {
	t.Helper()
	cmd := exec.Command(e.Swarm, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(e.Env(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := testenv.Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("swarm %q: %v", args, err)
	}
	return r
}

// svLsStatus is the worker's status as ls --format json prints it.
func svLsStatus(t *testing.T, e *testenv.Env, env []string, name string) string {
	t.Helper()
	r := svRun(t, e, env, "ls", "--format", "json")
	var ws []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &ws); r.Code != 0 || err != nil {
		t.Fatalf("ls --format json: %v\n%s", err, r)
	}
	for _, w := range ws {
		if w["name"] == name {
			s, _ := w["status"].(string)
			return s
		}
	}
	return ""
}

// svTopStatus is the worker's status in top --once.
func svTopStatus(t *testing.T, e *testenv.Env, env []string, name string) string {
	t.Helper()
	r := svRun(t, e, env, "top", "--once")
	if r.Code != 0 {
		t.Fatalf("top --once: %s", r)
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(l); len(f) == len(topColumns) && f[0] == name {
			return f[2]
		}
	}
	t.Fatalf("no row for %s in top --once:\n%s", name, r.Stdout)
	return ""
}

// A worker spawned in a tmux server that plain tmux does not reach from
// where later commands run is reached all the same: ls, status, send,
// peek, kill from outside tmux, ls and top from inside a third server,
// which is never taken for the worker's (window ids repeat across
// servers).
func TestWorkerOtherTmuxServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// start starts the worker's server and says what spawn runs
		// with, the record's socket name, and what "outside tmux" is
		// for the later commands.
		start func(t *testing.T, e *testenv.Env) (srv *svServer, spawnEnv []string, socket any, outside []string)
	}{
		{"inside tmux -S PATH", func(t *testing.T, e *testenv.Env) (*svServer, []string, any, []string) {
			srv := svStart(t, nil, "-S", filepath.Join(svShortDir(t), "s"))
			return srv, []string{"TMUX=" + srv.tmuxEnv}, nil, []string{"TMUX="}
		}},
		{"inside tmux -L NAME", func(t *testing.T, e *testenv.Env) (*svServer, []string, any, []string) {
			name := e.Socket + "-in"
			srv := svStart(t, nil, "-L", name)
			// tmux -L NAME is swarm.py's socket NAME too.
			return srv, []string{"TMUX=" + srv.tmuxEnv}, name, []string{"TMUX="}
		}},
		{"outside tmux on the default server", func(t *testing.T, e *testenv.Env) (*svServer, []string, any, []string) {
			tmpdir := []string{"TMUX_TMPDIR=" + svShortDir(t)}
			srv := svStart(t, tmpdir)
			// Later commands run where the default server is another.
			return srv, tmpdir, nil, []string{"TMUX=", "TMUX_TMPDIR=" + svShortDir(t)}
		}},
		{"--tmux-socket NAME, later another TMUX_TMPDIR", func(t *testing.T, e *testenv.Env) (*svServer, []string, any, []string) {
			name := e.Socket + "-l"
			srv := svStart(t, nil, "-L", name)
			return srv, []string{"SWARM_TMUX_SOCKET=" + name}, name, []string{"TMUX=", "TMUX_TMPDIR=" + svShortDir(t)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testenv.New(t)
			srv, spawnEnv, socket, outside := tc.start(t, e)
			// No --tmux-socket, no $SWARM_TMUX_SOCKET.
			spawnEnv = append([]string{"SWARM_TMUX_SOCKET="}, spawnEnv...)
			// Never the user's default server, whatever happens.
			outside = svPrivateDefault(t, append([]string{"SWARM_TMUX_SOCKET="}, outside...))
			third := svStart(t, nil, "-S", filepath.Join(svShortDir(t), "t"))
			inThird := []string{"SWARM_TMUX_SOCKET=", "TMUX=" + third.tmuxEnv}

			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			r := svRun(t, e, spawnEnv, "spawn", "--name", "w", "--tmux", "--ready-wait", "--ready-timeout", "15",
				"--", e.Agent, "--record", rec, "--script", "wait;wait;wait;wait;quiet")
			wkExpect(t, "spawn", r, 0, wkSpawnedTmux(e, "w"), "")
			id, pid := srv.window("w")
			if id == "" {
				t.Fatalf("no window w on the server spawn ran in:\n%s", srv.tmux("list-windows", "-a"))
			}
			ws := e.Workers()
			if len(ws) != 1 {
				t.Fatalf("records: %v", ws)
			}
			tm, _ := ws[0]["tmux"].(map[string]any)
			meta, _ := ws[0]["metadata"].(map[string]any)
			if tm["socket"] != socket || meta["tmux_socket_path"] != srv.path {
				t.Errorf("recorded tmux %v, metadata %v; want socket %v and tmux_socket_path %s", tm, meta, socket, srv.path)
			}

			if got := svLsStatus(t, e, outside, "w"); got != "running" {
				t.Errorf("ls outside tmux: w is %q, want running", got)
			}
			if r := svRun(t, e, outside, "status", "w"); r.Code != 0 {
				t.Errorf("status outside tmux: %s", r)
			}
			wkExpect(t, "send outside tmux", svRun(t, e, outside, "send", "w", "hello"), 0, "sent to w\n", "")
			if got := wkWaitRecords(t, rec, 1); got[0].Message != "hello" {
				t.Errorf("the agent got %+v", got)
			}
			if r := svRun(t, e, outside, "peek", "w"); r.Code != 0 || !strings.Contains(r.Stdout, "Fake Agent v1.0") {
				t.Errorf("peek outside tmux: %s", r)
			}
			// The heartbeat process runs where it was started: outside.
			if r := svRun(t, e, outside, "heartbeat", "start", "w", "--interval", "1s"); r.Code != 0 {
				t.Errorf("heartbeat start outside tmux: %s", r)
			}
			if got := wkWaitRecords(t, rec, 2); got[1].Message != "continue" {
				t.Errorf("the agent got %+v, want a heartbeat's continue", got)
			}
			if r := svRun(t, e, outside, "heartbeat", "stop", "w"); r.Code != 0 {
				t.Errorf("heartbeat stop: %s", r)
			}
			if got := svLsStatus(t, e, inThird, "w"); got != "running" {
				t.Errorf("ls inside a third server: w is %q, want running", got)
			}
			if got := svTopStatus(t, e, inThird, "w"); got != "running" {
				t.Errorf("top --once inside a third server: w is %q, want running", got)
			}

			wkExpect(t, "kill outside tmux", svRun(t, e, outside, "kill", "w"), 0, "killed w\n", "")
			var agent int
			fmt.Sscan(pid, &agent)
			e.Eventually("the agent to be gone", wkTimeout, func() bool { return agent > 1 && !wkAlive(agent) })
			if id, _ := srv.window("w"); id != "" {
				t.Errorf("window %s of w is still there", id)
			}

			// The third server gets a window with the id the worker had:
			// it is not the worker's.
			for i := 0; i < 20 && !strings.Contains(third.tmux("list-windows", "-a", "-F", "#{window_id}"), id+"\n"); i++ {
				third.tmux("new-window", "-d", "-t", "outer:", "sleep 600")
			}
			if got := svTopStatus(t, e, inThird, "w"); got != "stopped" {
				t.Errorf("top --once inside a third server with a window %s: w is %q, want stopped", id, got)
			}

			// respawn starts it on its server again, whatever the default
			// server is where it runs.
			r = svRun(t, e, outside, "respawn", "w")
			wkExpect(t, "respawn outside tmux", r, 0, fmt.Sprintf("respawned w (tmux: %s:w)\n", wkSession(e)), "")
			if id, _ := srv.window("w"); id == "" {
				t.Errorf("respawn did not start w on its server")
			}
			if got := svLsStatus(t, e, outside, "w"); got != "running" {
				t.Errorf("ls outside tmux after respawn: w is %q, want running", got)
			}
		})
	}
}

// svShortDir is a new temporary directory with a short path: a unix
// socket's path is limited to about 100 bytes.
func svShortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return dir
}

// svPrivateDefault returns env with a TMUX_TMPDIR of its own (unless env
// has one), so that a command reaching for the default server finds one
// of the test's, never the user's; that server is killed at the end.
func svPrivateDefault(t *testing.T, env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMUX_TMPDIR=") {
			return env
		}
	}
	tmpdir := "TMUX_TMPDIR=" + svShortDir(t)
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "kill-server")
		cmd.Env = append(os.Environ(), "TMUX=", tmpdir)
		cmd.Run()
	})
	return append(append([]string(nil), env...), tmpdir)
}

// A ralph loop made inside a tmux server runs its agent there, though its
// monitor is started outside tmux, and is listed, shown by top and killed
// from anywhere.
func TestRalphOtherTmuxServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	srv := svStart(t, nil, "-S", filepath.Join(svShortDir(t), "s"))
	third := svStart(t, nil, "-S", filepath.Join(svShortDir(t), "t"))
	outside := svPrivateDefault(t, []string{"SWARM_TMUX_SOCKET=", "TMUX="})
	inThird := []string{"SWARM_TMUX_SOCKET=", "TMUX=" + third.tmuxEnv}
	e.WriteFile("PROMPT.md", "work")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	r := svRun(t, e, []string{"SWARM_TMUX_SOCKET=", "TMUX=" + srv.tmuxEnv}, "ralph", "spawn", "--name", "r",
		"--prompt-file", "PROMPT.md", "--max-iterations", "2", "--no-worktree", "--no-run",
		"--", e.Agent, "--record", rec, "--script", "quiet")
	if r.Code != 0 {
		t.Fatalf("ralph spawn: %s", r)
	}

	run := exec.Command(e.Swarm, "ralph", "run", "r")
	run.Dir, run.Env = e.Dir, append(e.Env(), outside...)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- run.Wait() }()
	t.Cleanup(func() { run.Process.Kill() })

	if got := wkWaitRecords(t, rec, 1); got[0].Message != "work" {
		t.Errorf("the agent got %+v", got)
	}
	_, pid := srv.window("r")
	if pid == "" {
		t.Fatalf("no window r on the server ralph spawn ran in:\n%s", srv.tmux("list-windows", "-a"))
	}
	if got := svLsStatus(t, e, outside, "r"); got != "running" {
		t.Errorf("ls outside tmux: r is %q, want running", got)
	}
	if got := svTopStatus(t, e, inThird, "r"); got != "running" {
		t.Errorf("top --once inside a third server: r is %q, want running", got)
	}
	wkExpect(t, "kill outside tmux", svRun(t, e, outside, "kill", "r"), 0, "killed r\n", "")
	var agent int
	fmt.Sscan(pid, &agent)
	e.Eventually("the agent to be gone", wkTimeout, func() bool { return agent > 1 && !wkAlive(agent) })
	select {
	case <-ended:
	case <-time.After(wkTimeout):
		run.Process.Kill()
		<-ended
		t.Errorf("ralph run did not end after kill; its output:\n%s", out.String())
	}
}

// swarm.py's own test runs with a TMUX_TMPDIR that has no tmux-UID
// directory yet and --tmux-socket NAME: tmux -L makes that directory, tmux
// -S PATH does not, so spawning through the recorded path started no
// server (the worker was recorded with no window and listed stopped).
func TestSpawnIntoAFreshTmuxTmpdir(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	tmpdir := svShortDir(t)
	e.Extra = append(e.Extra, "TMUX=", "TMUX_TMPDIR="+tmpdir)
	name := fmt.Sprintf("fresh-%d", os.Getpid())
	t.Cleanup(func() {
		c := exec.Command("tmux", "-L", name, "kill-server")
		c.Env = append(os.Environ(), "TMUX_TMPDIR="+tmpdir)
		_ = c.Run() // the server may be gone already
	})
	e.MustRun("spawn", "--name", "w", "--tmux", "--tmux-socket", name, "--", e.Agent, "--input", "none", "--script", "quiet")
	if r := e.Run("status", "w"); r.Code != 0 {
		t.Fatalf("status: %s", r)
	}
	if _, err := os.Stat(filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()), name)); err != nil {
		t.Errorf("the server's socket is not where tmux -L puts it: %v", err)
	}
}
