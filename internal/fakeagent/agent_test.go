package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// The tests below run the real binary, built once per test run.
var (
	buildDir  string
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func buildAgent(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "fakeagent-test-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "fakeagent")
		cmd := exec.Command("go", "build", "-o", buildBin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// runAgent runs the binary without a terminal and returns its stdout,
// stderr and exit code.
func runAgent(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(buildAgent(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run fakeagent: %v", err)
	}
	return out.String(), errOut.String(), code
}

func TestArgModeSteps(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FAKEAGENT_WHO", "world")
	t.Setenv("FAKEAGENT_EMPTY", "")
	script := `print hello {env:FAKEAGENT_WHO} #{n}\;ok;write a\tb;print ;env FAKEAGENT_EMPTY;env FAKEAGENT_UNSET_VAR;` +
		`echo;touch made;touch gone;rm gone;rm never-existed;cwd;exit 7;print not reached`
	out, errOut, code := runAgent(t, dir, "", "--input", "arg", "--banner", "", "--script", script, "ignored", "the\nmessage")
	wantDir, _ := filepath.EvalSymlinks(dir)
	want := "hello world #1;ok\na\tb\nFAKEAGENT_EMPTY=\nFAKEAGENT_UNSET_VAR=<unset>\nthe\nmessage\nCWD=" + wantDir + "\n"
	if code != 7 || out != want {
		t.Errorf("exit %d, stdout %q (stderr %q); want exit 7, stdout %q", code, out, errOut, want)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "made")); err != nil || string(data) != "done\n" {
		t.Errorf("touched file: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rm did not remove the file: %v", err)
	}
}

func TestStdinModeCounterAndIter(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.jsonl")
	counter := filepath.Join(dir, "sub", "counter")
	if err := os.Mkdir(filepath.Dir(counter), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--input", "stdin", "--record", rec, "--counter", counter,
		"--script", "print default {n}", "--iter", "2=print two;exit 5", "--iter", "3+=print later {n}"}
	wantOut := []string{"default 1", "two", "later 3", "later 4"}
	wantCode := []int{0, 5, 0, 0}
	for i := range wantOut {
		msg := fmt.Sprintf("message <%d>\nwith & lines\n", i+1)
		out, errOut, code := runAgent(t, dir, msg, args...)
		if want := "Fake Agent v1.0\n" + wantOut[i] + "\n"; out != want || code != wantCode[i] {
			t.Errorf("run %d: exit %d, stdout %q (stderr %q); want exit %d, %q", i+1, code, out, errOut, wantCode[i], want)
		}
	}
	recs := testenv.Records(t, rec)
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4: %+v", len(recs), recs)
	}
	for i, r := range recs {
		if want := fmt.Sprintf("message <%d>\nwith & lines\n", i+1); r.Iteration != i+1 || r.Message != want {
			t.Errorf("record %d = %+v, want iteration %d message %q", i, r, i+1, want)
		}
	}
	if data, _ := os.ReadFile(counter); strings.TrimSpace(string(data)) != "4" {
		t.Errorf("counter file holds %q, want 4", data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(counter)); len(entries) != 1 {
		t.Errorf("temporary files left next to the counter: %v", entries)
	}
}

func TestTTYModeWithoutTerminal(t *testing.T) {
	// Not a terminal: one line of stdin is the message.
	dir := t.TempDir()
	out, _, code := runAgent(t, dir, "first line\r\nsecond line\n", "--echo-transcript", "--script", "echo;wait;echo")
	want := "Fake Agent v1.0\n> \n> first line\nfirst line\n> \n> second line\nsecond line\n"
	if out != want || code != 0 {
		t.Errorf("exit %d, stdout %q; want exit 0, %q", code, out, want)
	}
}

func TestValidationFailsFirst(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	counter := filepath.Join(dir, "counter")
	for _, args := range [][]string{
		{"--script", "print ok;frobnicate now"},
		{"--iter", "2=frobnicate now"},
	} {
		args = append(args, "--input", "none", "--pidfile", pidfile, "--counter", counter)
		out, errOut, code := runAgent(t, dir, "", args...)
		if code != 2 || out != "" || errOut != "fakeagent: unknown step \"frobnicate\"\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written before validation: %v", entries)
	}
}

func TestPidfileAndChild(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runAgent(t, dir, "", "--input", "none", "--pidfile", "agent.pid", "--script", "child child.pid;print started")
	if code != 0 || out != "Fake Agent v1.0\nstarted\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := readPid(filepath.Join(dir, "agent.pid")); err != nil {
		t.Error(err)
	}
	pid, err := readPid(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	// The child outlives the agent, as a leaked helper process would.
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("child %d is not running: %v", pid, err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func readPid(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds %q, want a pid", path, data)
	}
	return pid, nil
}

// requireTmux skips a test that needs tmux when it is not installed. Tests
// call it before anything else, so that they skip before building.
func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
}

// tmuxServer is a tmux server on a private socket, so tests neither see nor
// disturb the user's sessions or each other.
type tmuxServer struct {
	t    *testing.T
	name string
}

var tmuxSeq atomic.Int64

// startTmux starts argv in session "t" of a new private tmux server, and
// kills the server when the test ends.
func startTmux(t *testing.T, argv ...string) *tmuxServer {
	t.Helper()
	s := &tmuxServer{t: t, name: fmt.Sprintf("fakeagent-test-%d-%d", os.Getpid(), tmuxSeq.Add(1))}
	t.Cleanup(func() { _, _ = s.tryRun("", "kill-server") })
	s.run("", append([]string{"new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "--"}, argv...)...)
	// tmux leaves its socket file behind after kill-server; remove it too.
	if sock := strings.TrimSpace(s.run("", "display-message", "-p", "#{socket_path}")); sock != "" {
		t.Cleanup(func() { _, _ = s.tryRun("", "kill-server"); os.Remove(sock) })
	}
	// Keep the pane and its screen after the agent exits, so that the last
	// output can be checked without racing the exit. (Exit codes are checked
	// by the tests without tmux: tmux 3.3a sometimes never reaps a pane's
	// process, leaving #{pane_dead_status} empty.)
	s.run("", "set-option", "-wg", "remain-on-exit", "on")
	return s
}

func (s *tmuxServer) tryRun(stdin string, args ...string) (string, error) {
	// -f /dev/null: no user configuration changes what the pane looks like.
	cmd := exec.Command("tmux", append([]string{"-L", s.name, "-f", "/dev/null"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %q: %v: %s", args, err, out)
	}
	return string(out), nil
}

func (s *tmuxServer) run(stdin string, args ...string) string {
	s.t.Helper()
	out, err := s.tryRun(stdin, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *tmuxServer) screen() string {
	// -N keeps trailing spaces, so an empty prompt shows as "> ".
	out, _ := s.tryRun("", "capture-pane", "-p", "-N", "-t", "t")
	return out
}

// history is the screen with the scrollback above it. Final checks use it
// because tmux scrolls the screen up a line when it marks a pane dead.
func (s *tmuxServer) history() string {
	out, _ := s.tryRun("", "capture-pane", "-p", "-N", "-S", "-", "-t", "t")
	return out
}

// waitFor polls cond every 50ms for up to 10s; describe explains the last
// state seen when it never became true.
func waitFor(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last state:\n%s", what, describe())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxServer) waitScreen(what string) {
	s.t.Helper()
	waitFor(s.t, fmt.Sprintf("screen to show %q", what),
		func() bool { return strings.Contains(s.screen(), what) }, s.screen)
}

func (s *tmuxServer) waitPrompt() { s.t.Helper(); s.waitScreen("> ") }

// waitRecords waits until the record file holds exactly the given messages.
func waitRecords(t *testing.T, path string, want ...string) []testenv.Record {
	t.Helper()
	var recs []testenv.Record
	waitFor(t, fmt.Sprintf("records %q", want), func() bool {
		recs = testenv.Records(t, path)
		if len(recs) != len(want) {
			return false
		}
		for i := range want {
			if recs[i].Message != want[i] {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%+v", recs) })
	return recs
}

func TestTmuxBracketedPaste(t *testing.T) {
	requireTmux(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s := startTmux(t, buildAgent(t), "--record", rec, "--script", "print got it;sleep 200ms;exit 3")
	s.waitPrompt()

	s.run("line one\nline two\nline three", "load-buffer", "-b", "b", "-")
	s.run("", "paste-buffer", "-p", "-d", "-b", "b", "-t", "t")
	s.run("", "send-keys", "-t", "t", "Enter")

	recs := waitRecords(t, rec, "line one\nline two\nline three")
	if recs[0].Iteration != 1 {
		t.Errorf("iteration = %d, want 1", recs[0].Iteration)
	}
	s.waitScreen("got it")
	if scr := s.history(); !strings.Contains(scr, "Fake Agent v1.0\n> line one\nline two\nline three") {
		t.Errorf("pasted text not echoed as expected:\n%s", scr)
	}
}

func TestTmuxTypedText(t *testing.T) {
	requireTmux(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s := startTmux(t, buildAgent(t), "--record", rec)
	s.waitPrompt()

	// Text that looks like a flag must reach the agent as typed text.
	s.run("", "send-keys", "-t", "t", "-l", "--", "-n x")
	s.run("", "send-keys", "-t", "t", "Enter")
	waitRecords(t, rec, "-n x")
	s.waitScreen("> -n x\n")
}

func TestTmuxEscapeAndClear(t *testing.T) {
	requireTmux(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s := startTmux(t, buildAgent(t), "--record", rec, "--script", "print done")
	s.waitPrompt()

	s.run("", "send-keys", "-t", "t", "-l", "--", "stale draft")
	s.waitScreen("> stale draft")
	s.run("", "send-keys", "-t", "t", "Escape", "C-u")
	s.run("", "send-keys", "-t", "t", "-l", "--", "fresh")
	s.run("", "send-keys", "-t", "t", "Enter")
	waitRecords(t, rec, "fresh")
	s.waitScreen("done")
	if scr := s.history(); strings.Contains(scr, "stale") || !strings.Contains(scr, "> fresh\n") {
		t.Errorf("the cleared draft should be gone from the screen:\n%s", scr)
	}
}

func TestTmuxWaitAndTranscript(t *testing.T) {
	requireTmux(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s := startTmux(t, buildAgent(t), "--record", rec, "--echo-transcript", "--banner", "Banner {n}",
		"--script", "print answer one;wait;echo;print bye")
	s.waitPrompt()

	s.run("", "send-keys", "-t", "t", "-l", "--", "first")
	s.run("", "send-keys", "-t", "t", "Enter")
	s.waitScreen("answer one\n> ")
	s.run("second\nmessage", "load-buffer", "-b", "b", "-")
	s.run("", "paste-buffer", "-p", "-d", "-b", "b", "-t", "t")
	s.run("", "send-keys", "-t", "t", "Enter")
	waitRecords(t, rec, "first", "second\nmessage")
	s.waitScreen("bye")
	want := "Banner {n}\n> first\n> first\nanswer one\n> second\nmessage\n> second\n> message\nsecond\nmessage\nbye\n"
	if scr := s.history(); !strings.HasPrefix(scr, want) {
		t.Errorf("screen:\n%s\nwant it to start with:\n%s", scr, want)
	}
}

// TestTmuxSignalRestoresTerminal kills the agent with SIGTERM while it waits
// for input and checks, from a shell in the same pane, that the terminal is
// back in cooked mode.
func TestTmuxSignalRestoresTerminal(t *testing.T) {
	requireTmux(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	sttyOut := filepath.Join(dir, "stty")
	shell := `"$0" --pidfile "$1"; echo "status $?"; stty -a > "$2"; echo stty-done`
	s := startTmux(t, "sh", "-c", shell, buildAgent(t), pidfile, sttyOut)
	s.waitPrompt()
	pid, err := readPid(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitScreen("stty-done")
	if scr := s.screen(); !strings.Contains(scr, "status 143") {
		t.Errorf("want the shell to see death by SIGTERM (143):\n%s", scr)
	}
	data, err := os.ReadFile(sttyOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{" icanon ", " echo ", " isig ", " icrnl ", " iexten ", " ixon "} {
		if !strings.Contains(" "+strings.Join(strings.Fields(string(data)), " ")+" ", flag) {
			t.Errorf("terminal not restored, %q missing from stty -a:\n%s", flag, data)
		}
	}
}
