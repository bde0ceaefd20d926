// Package testenv runs the real swarm binary against real tmux and git in
// tests. Each Env has its own state root (SWARM_HOME in a temp dir) and its
// own tmux server (a private -L socket, killed at cleanup), so tests run in
// parallel and never touch the user's tmux or ~/.swarm.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	counter   atomic.Int64
)

// moduleRoot finds the directory holding go.mod above the test's package.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found")
		}
		dir = parent
	}
}

// Binaries builds swarm and the fake agent once per test process and
// returns their paths.
func Binaries(t testing.TB) (swarm, agent string) {
	t.Helper()
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "swarm-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{"swarm", "./cmd/swarm"}, {"fakeagent", "./internal/fakeagent"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, b.out), b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "swarm"), filepath.Join(buildDir, "fakeagent")
}

// RequireTmux skips the test when tmux is not installed.
func RequireTmux(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
}

// Env is one isolated swarm installation.
type Env struct {
	T      testing.TB
	Home   string // SWARM_HOME
	Socket string // private tmux socket name
	Dir    string // working directory for commands
	Swarm  string // swarm binary
	Agent  string // fake agent binary
	// Extra environment for every command (KEY=VAL).
	Extra []string
}

// New creates an Env; its tmux server, workers and monitors are stopped
// when the test ends.
func New(t testing.TB) *Env {
	t.Helper()
	RequireTmux(t)
	swarm, agent := Binaries(t)
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	e := &Env{
		T:      t,
		Home:   filepath.Join(base, "home"),
		Socket: fmt.Sprintf("swt-%d-%d", os.Getpid(), counter.Add(1)),
		Dir:    filepath.Join(base, "work"),
		Swarm:  swarm,
		Agent:  agent,
	}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.cleanup)
	return e
}

// Env returns the environment commands run with.
func (e *Env) Env() []string {
	env := append(os.Environ(),
		"SWARM_HOME="+e.Home,
		"SWARM_DIR=",
		"SWARM_TMUX_SOCKET="+e.Socket,
		"SWARM_POLL_INTERVAL=100ms",
		"TMUX=",
	)
	return append(env, e.Extra...)
}

// Result of running swarm.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Run runs swarm with args in e.Dir and waits for it.
func (e *Env) Run(args ...string) Result {
	e.T.Helper()
	return e.RunIn(e.Dir, args...)
}

// RunIn runs swarm in dir.
func (e *Env) RunIn(dir string, args ...string) Result {
	e.T.Helper()
	cmd := exec.Command(e.Swarm, args...)
	cmd.Dir = dir
	cmd.Env = e.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.T.Fatalf("swarm %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Start runs swarm in the background; the caller waits on the command.
func (e *Env) Start(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.T.Helper()
	cmd := exec.Command(e.Swarm, args...)
	cmd.Dir = e.Dir
	cmd.Env = e.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &syncWriter{w: &out}, &syncWriter{w: &errb}
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	return cmd, &out, &errb
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// MustRun runs swarm and fails the test unless it exits 0.
func (e *Env) MustRun(args ...string) Result {
	e.T.Helper()
	r := e.Run(args...)
	if r.Code != 0 {
		e.T.Fatalf("swarm %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// Tmux runs tmux on the env's socket.
func (e *Env) Tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", e.Socket}, args...)...).CombinedOutput()
	return string(out), err
}

// Screen returns the visible text of a worker's window ("" if none).
func (e *Env) Screen(name string) string {
	out, _ := e.Tmux("capture-pane", "-p", "-J", "-S", "-", "-t", e.WindowID(name))
	return out
}

// WindowID returns the id of the window named name, or "".
func (e *Env) WindowID(name string) string {
	out, err := e.Tmux("list-windows", "-a", "-F", "#{window_name}\t#{window_id}")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		n, id, ok := strings.Cut(line, "\t")
		if ok && n == name {
			return id
		}
	}
	return ""
}

// Eventually polls cond until it holds or timeout passes.
func (e *Env) Eventually(what string, timeout time.Duration, cond func() bool) {
	e.T.Helper()
	Eventually(e.T, what, timeout, cond)
}

// Eventually polls cond every 50 ms until it holds, failing the test after
// timeout. Tests wait for conditions, never for fixed times.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	EventuallyEvery(t, what, 50*time.Millisecond, timeout, cond)
}

// EventuallyEvery is Eventually looking every poll: tests of code that
// runs on a fast clock (a synctest bubble, a poll of milliseconds) look
// as often.
func EventuallyEvery(t testing.TB, what string, poll, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !clock.Wait(context.Background(), clock.Real, poll, timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Workers reads state.json.
func (e *Env) Workers() []map[string]any {
	data, err := os.ReadFile(filepath.Join(e.Home, "state.json"))
	if err != nil {
		return nil
	}
	var reg struct {
		Workers []map[string]any `json:"workers"`
	}
	_ = json.Unmarshal(data, &reg) // an unreadable file has no workers to read, as a missing one
	return reg.Workers
}

// RalphState reads ralph/NAME/state.json (nil if missing or unreadable).
func (e *Env) RalphState(name string) map[string]any {
	data, err := os.ReadFile(filepath.Join(e.Home, "ralph", name, "state.json"))
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// RalphLog reads ralph/NAME/iterations.log.
func (e *Env) RalphLog(name string) string {
	data, _ := os.ReadFile(filepath.Join(e.Home, "ralph", name, "iterations.log"))
	return string(data)
}

// WriteFile writes a file relative to e.Dir.
func (e *Env) WriteFile(rel, content string) string {
	e.T.Helper()
	p := filepath.Join(e.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// WriteExecutable writes an executable file relative to e.Dir (see the
// package function WriteExecutable).
func (e *Env) WriteExecutable(rel, content string) string {
	e.T.Helper()
	p := filepath.Join(e.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.T.Fatal(err)
	}
	WriteExecutable(e.T, p, content)
	return p
}

// WriteExecutable writes a script (mode 0755) that a test then runs. A
// child process writes it, not this one: a file this process holds open
// for writing is inherited, for the moment between fork and exec, by every
// process a parallel test starts meanwhile, and running it in that moment
// fails with ETXTBSY ("text file busy"; golang.org/issue/22315). The child
// forks nothing while it holds the file open.
func WriteExecutable(t testing.TB, path, content string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v: %s", path, err, out)
	}
}

// Git runs git in dir, failing the test on error.
func (e *Env) Git(dir string, args ...string) string {
	e.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.T.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// InitRepo makes e.Dir a git repository with one commit.
func (e *Env) InitRepo() {
	e.T.Helper()
	e.Git(e.Dir, "init", "-q", "-b", "main")
	e.WriteFile("README", "test repo\n")
	e.Git(e.Dir, "add", "README")
	e.Git(e.Dir, "commit", "-q", "-m", "init")
}

// cleanup stops every monitor and process worker of the env, then its tmux
// server.
func (e *Env) cleanup() {
	entries, _ := os.ReadDir(filepath.Join(e.Home, "ralph"))
	for _, ent := range entries {
		if st := e.RalphState(ent.Name()); st != nil {
			if pid, ok := st["monitor_pid"].(float64); ok && pid > 1 {
				if isOurs(int(pid), e.Swarm) {
					_ = syscall.Kill(int(pid), syscall.SIGKILL) // one gone already is what is wanted
				}
			}
		}
	}
	// Process workers' supervisors first: one that outlived its worker
	// would record the worker's end under Home while the test's temp dir
	// is being removed.
	sups := e.supervisors()
	for _, pid := range sups {
		_ = syscall.Kill(pid, syscall.SIGKILL) // one gone already is what is wanted; the wait below checks
	}
	Eventually(e.T, "the supervisors to die", 10*time.Second, func() bool {
		return !slices.ContainsFunc(sups, running)
	})
	for _, w := range e.Workers() {
		if pid, ok := w["pid"].(float64); ok && pid > 1 {
			_ = syscall.Kill(-int(pid), syscall.SIGKILL) // a group gone already is what is wanted
		}
	}
	_ = exec.Command("tmux", "-L", e.Socket, "kill-server").Run() // fails when the test started no server
	// The windows' log sinks (swarm _logpipe, run by tmux's pipe-pane)
	// outlive the server for as long as they take to drain and close
	// their log: one still writing under Home while the test's temp dir
	// is removed fails the test ("directory not empty"), as
	// TestWorkerSpawnWhileServerExits did under load.
	pipes := e.helpers("_logpipe")
	for _, pid := range pipes {
		_ = syscall.Kill(pid, syscall.SIGKILL) // one gone already is what is wanted; the wait below checks
	}
	Eventually(e.T, "the log sinks to die", 10*time.Second, func() bool {
		return !slices.ContainsFunc(pipes, running)
	})
	// tmux 3.3 leaves the socket file behind. (tmux.Client.KillServer
	// does the same; this package cannot import tmux, whose tests use it.)
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	_ = os.Remove(filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), e.Socket)) // absent when tmux removed it, or never made
}

// supervisors returns the pids of the env's process workers' supervisors:
// the swarm under test running "_supervise --exit-file" into Home.
func (e *Env) supervisors() []int {
	return e.helpers("_supervise")
}

// helpers returns the pids of the swarm under test running the hidden
// command cmd with a path under Home: "_supervise --exit-file PATH ..."
// and "_logpipe --max N PATH" (a worker's log, a loop's iteration output).
func (e *Env) helpers(cmd string) []int {
	ents, _ := os.ReadDir("/proc")
	home := e.Home + string(filepath.Separator)
	var out []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || !isOurs(pid, e.Swarm) {
			continue
		}
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
		if len(argv) > 3 && argv[1] == cmd && slices.ContainsFunc(argv[2:], func(a string) bool { return strings.HasPrefix(a, home) }) {
			out = append(out, pid)
		}
	}
	return out
}

// running reports whether pid is a process that runs (not a zombie).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// isOurs checks that pid runs the swarm binary under test before killing
// it, so a recycled pid is never hit.
func isOurs(pid int, bin string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && exe == bin
}

// Record is one message the fake agent received, from its --record file.
type Record struct {
	Iteration int    `json:"iteration"`
	Message   string `json:"message"`
	Time      string `json:"time"`
}

// Records reads a fake agent's --record file. A line still being written
// is left out (callers poll); a malformed whole line fails the test.
func Records(t testing.TB, path string) []Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad record line %q: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
			t.Errorf("record time %q: %v", r.Time, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// Messages returns the messages of a --record file, in order.
func Messages(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	for _, r := range Records(t, path) {
		out = append(out, r.Message)
	}
	return out
}
