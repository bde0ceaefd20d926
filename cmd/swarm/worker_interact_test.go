package main

// Black-box tests of talking to workers: send, interrupt, eof, logs,
// attach, and the environment given with --env (docs/commands.md,
// docs/security.md).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// wkSpawnTTYAgent starts the fake agent in tty mode in a tmux window and
// waits until its prompt shows (a "> " prompt counts as ready:
// docs/ralph.md, "Ready detection").
func wkSpawnTTYAgent(t *testing.T, e *testenv.Env, name string, agentArgs ...string) {
	t.Helper()
	args := append([]string{"spawn", "--name", name, "--tmux", "--ready-wait", "--ready-timeout", "15", "--", e.Agent}, agentArgs...)
	r := e.Run(args...)
	wkExpect(t, "spawn "+name, r, 0, wkSpawnedTmux(e, name), "")
}

func TestWorkerSend(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	wkSpawnTTYAgent(t, e, "w", "--record", rec, "--script", "wait;wait;wait;wait;wait;quiet")

	// text starting with a dash is typed as written
	wkExpect(t, "send -n x", e.Run("send", "w", "--", "-n x"), 0, "sent to w\n", "")
	recs := wkWaitRecords(t, rec, 1)
	if recs[0].Message != "-n x" {
		t.Errorf("message 1 = %q, want %q", recs[0].Message, "-n x")
	}

	// three lines arrive as one message
	wkExpect(t, "send three lines", e.Run("send", "w", "line1\nline2\nline3"), 0, "sent to w\n", "")
	recs = wkWaitRecords(t, rec, 2)
	if recs[1].Message != "line1\nline2\nline3" {
		t.Errorf("message 2 = %q, want the three lines as one message", recs[1].Message)
	}

	// pending input is cleared (Escape, Ctrl-U) before a normal send
	wkExpect(t, "send --no-enter --raw", e.Run("send", "w", "--no-enter", "--raw", "partial junk"), 0, "sent to w\n", "")
	wkWaitScreen(t, e, "w", "> partial junk")
	if n := len(testenv.Records(t, rec)); n != 2 {
		t.Fatalf("--no-enter submitted a message: %d records", n)
	}
	wkExpect(t, "send fresh", e.Run("send", "w", "fresh"), 0, "sent to w\n", "")
	recs = wkWaitRecords(t, rec, 3)
	if recs[2].Message != "fresh" {
		t.Errorf("message 3 = %q, want %q (pending input not cleared)", recs[2].Message, "fresh")
	}

	// --no-enter types without submitting; --raw keeps it and appends
	wkExpect(t, "send --no-enter", e.Run("send", "w", "--no-enter", "typed later"), 0, "sent to w\n", "")
	wkWaitScreen(t, e, "w", "> typed later")
	if n := len(testenv.Records(t, rec)); n != 3 {
		t.Fatalf("--no-enter submitted a message: %d records", n)
	}
	wkExpect(t, "send --raw", e.Run("send", "w", "--raw", " and more"), 0, "sent to w\n", "")
	recs = wkWaitRecords(t, rec, 4)
	if recs[3].Message != "typed later and more" {
		t.Errorf("message 4 = %q, want %q", recs[3].Message, "typed later and more")
	}

	// key names are typed literally
	wkExpect(t, "send key names", e.Run("send", "w", "Enter C-c Escape ; -l"), 0, "sent to w\n", "")
	recs = wkWaitRecords(t, rec, 5)
	if recs[4].Message != "Enter C-c Escape ; -l" {
		t.Errorf("message 5 = %q", recs[4].Message)
	}
	if len(recs) != 5 {
		t.Errorf("records: %+v", recs)
	}
	if wkStatusCode(e, "w") != 0 {
		t.Errorf("agent died")
	}

	wkExpect(t, "send to unknown", e.Run("send", "nope", "x"), 1, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")
}

// send to an agent at a dialog types the answer and nothing else: the
// Escape and Ctrl-U that clear pending input would answer the dialog
// first (Claude Code takes Escape for "No").
func TestWorkerSendAtADialogTypesOnlyTheAnswer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	got := filepath.Join(t.TempDir(), "keys")
	e.MustRun("spawn", "--name", "d", "--tmux", "--", "sh", "-c",
		`stty raw -echo; printf 'Do you want to proceed?\r\n \342\235\257 1. Yes\r\n   2. No\r\n'; dd bs=1 count=2 2>/dev/null | od -An -c > "$0"; sleep 600`, got)
	wkWaitScreen(t, e, "d", "2. No")
	wkExpect(t, "send 1", e.Run("send", "d", "1"), 0, "sent to d\n", "")
	var keys string
	e.Eventually("the answer to arrive", 10*time.Second, func() bool {
		data, err := os.ReadFile(got)
		keys = strings.Join(strings.Fields(string(data)), " ")
		return err == nil && keys != ""
	})
	if keys != `1 \r` {
		t.Fatalf("the dialog received %q, want the answer 1 and Enter only", keys)
	}
}

func TestWorkerSendAll(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	recA, recB := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	wkSpawnTTYAgent(t, e, "a", "--record", recA, "--script", "quiet")
	wkSpawnTTYAgent(t, e, "b", "--record", recB, "--script", "quiet")
	wkSpawnProcess(t, e, "--name", "p", "--", "sleep", "300")
	r := e.Run("send", "--all", "hello all")
	if r.Code != 0 || !wkSameSet(strings.Split(strings.TrimSpace(r.Stdout), "\n"), []string{"sent to a", "sent to b"}) {
		t.Errorf("send --all: %s", r)
	}
	for _, rec := range []string{recA, recB} {
		if got := wkWaitRecords(t, rec, 1); got[0].Message != "hello all" {
			t.Errorf("%s: %+v", rec, got)
		}
	}
}

// wkRCWrapper runs the agent under sh and writes its exit code to a file.
func wkRCWrapper(agent, rcFile string, agentArgs ...string) []string {
	cmd := wkShellQuote(agent)
	for _, a := range agentArgs {
		cmd += " " + wkShellQuote(a)
	}
	return []string{"sh", "-c", cmd + "; echo $? > " + wkShellQuote(rcFile) + "; exit 0"}
}

func wkWaitFile(t *testing.T, path, want string) {
	t.Helper()
	var got string
	testenv.Eventually(t, fmt.Sprintf("%s to hold %q", path, want), wkTimeout, func() bool {
		data, _ := os.ReadFile(path)
		got = string(data)
		return got == want
	})
}

func TestWorkerInterruptAndEOF(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	rcInt, rcEOF := filepath.Join(dir, "int.rc"), filepath.Join(dir, "eof.rc")

	args := append([]string{"spawn", "--name", "i", "--tmux", "--ready-wait", "--ready-timeout", "15", "--"}, wkRCWrapper(e.Agent, rcInt)...)
	wkExpect(t, "spawn i", e.Run(args...), 0, wkSpawnedTmux(e, "i"), "")
	args = append([]string{"spawn", "--name", "d", "--tmux", "--ready-wait", "--ready-timeout", "15", "--"}, wkRCWrapper(e.Agent, rcEOF)...)
	wkExpect(t, "spawn d", e.Run(args...), 0, wkSpawnedTmux(e, "d"), "")

	wkExpect(t, "interrupt i", e.Run("interrupt", "i"), 0, "interrupted i\n", "")
	wkWaitFile(t, rcInt, "130\n")
	wkWaitStopped(t, e, "i")
	if wkStatusCode(e, "d") != 0 {
		t.Errorf("interrupt i stopped d")
	}

	wkExpect(t, "eof d", e.Run("eof", "d"), 0, "sent eof to d\n", "")
	wkWaitFile(t, rcEOF, "0\n")
	wkWaitStopped(t, e, "d")

	wkExpect(t, "interrupt unknown", e.Run("interrupt", "nope"), 1, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")
	wkExpect(t, "interrupt stopped", e.Run("interrupt", "i"), 1, "", "swarm: error: worker 'i' is not running\nhint: start it again with: swarm respawn i\n")
}

func TestWorkerInterruptAll(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	wkSpawnTTYAgent(t, e, "a")
	wkSpawnTTYAgent(t, e, "b")
	r := e.Run("interrupt", "--all")
	if r.Code != 0 || !wkSameSet(strings.Split(strings.TrimSpace(r.Stdout), "\n"), []string{"interrupted a", "interrupted b"}) {
		t.Errorf("interrupt --all: %s", r)
	}
	wkWaitStopped(t, e, "a")
	wkWaitStopped(t, e, "b")
}

func TestWorkerEnv(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	agent := []string{e.Agent, "--input", "none", "--script", "env K;env K2;env K3;quiet"}
	envArgs := []string{"--env", "K=a b", "--env", "K2=a=b", "--env", "K3="}
	want := "K=a b\nK2=a=b\nK3=\n"

	wkSpawnProcess(t, e, append(append([]string{"--name", "p"}, envArgs...), append([]string{"--"}, agent...)...)...)
	e.Eventually("process worker to print its env", wkTimeout, func() bool {
		return e.Run("logs", "p").Stdout == "Fake Agent v1.0\n"+want
	})

	args := append(append([]string{"spawn", "--name", "w", "--tmux"}, envArgs...), append([]string{"--"}, agent...)...)
	wkExpect(t, "spawn w", e.Run(args...), 0, wkSpawnedTmux(e, "w"), "")
	wkWaitScreen(t, e, "w", want)

	for _, n := range []string{"p", "w"} {
		rec := wkRecordOf(e, n)
		env, _ := rec["env"].(map[string]any)
		if env["K"] != "a b" || env["K2"] != "a=b" || env["K3"] != "" || len(env) != 3 {
			t.Errorf("%s: env in state.json = %#v", n, rec["env"])
		}
	}
}

// The window gets the worker's env even when the tmux server was started
// earlier from an environment without it.
func TestWorkerEnvNotFromServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "first", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "w", "--tmux", "--env", "ONLY_FLAG=from-flag", "--",
		e.Agent, "--input", "none", "--script", "env ONLY_FLAG;quiet")
	wkWaitScreen(t, e, "w", "ONLY_FLAG=from-flag\n")
}

func TestWorkerLogs(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)

	// process worker: the stdout log
	wkSpawnProcess(t, e, "--name", "p", "--", e.Agent, "--input", "none", "--script", "print p1;print p2;print p3;exit 0")
	wkExpect(t, "wait p", e.Run("wait", "p", "--timeout", "10"), 0, "p: exited\n", "")
	wkExpect(t, "logs p", e.Run("logs", "p"), 0, "Fake Agent v1.0\np1\np2\np3\n", "")
	wkExpect(t, "logs p --lines 1", e.Run("logs", "p", "--lines", "1"), 0, "p3\n", "")
	wkExpect(t, "logs unknown", e.Run("logs", "nope"), 1, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")

	// process worker: follow ends when the worker stops
	wkSpawnProcess(t, e, "--name", "pf", "--", e.Agent, "--input", "none", "--script", "print f1;sleep 400ms;print f2;sleep 400ms;exit 0")
	out, code := wkRunCtx(t, e, 20*time.Second, "logs", "-f", "pf")
	if code != 0 || !strings.Contains(out, "f1\n") || !strings.Contains(out, "f2\n") || strings.Index(out, "f1") > strings.Index(out, "f2") {
		t.Errorf("logs -f pf: exit %d, output %q", code, out)
	}

	// h first: its window keeps the tmux server up when t's closes (see
	// TestWorkerSpawnWhileServerExits)
	e.MustRun("spawn", "--name", "h", "--tmux", "--", e.Agent, "--input", "none", "--script", "print first-line;print last-line;quiet")

	// tmux worker: the pane; follow ends when the window dies
	e.MustRun("spawn", "--name", "t", "--tmux", "--", e.Agent, "--input", "none",
		"--script", "print one;sleep 400ms;print two;sleep 400ms;print three;sleep 400ms;exit 0")
	out, code = wkRunCtx(t, e, 20*time.Second, "logs", "-f", "t")
	i1, i2, i3 := strings.Index(out, "one\n"), strings.Index(out, "two\n"), strings.Index(out, "three\n")
	if code != 0 || i1 < 0 || i2 < i1 || i3 < i2 {
		t.Errorf("logs -f t: exit %d, output %q; want one, two, three in order", code, out)
	}
	if strings.Count(out, "two\n") != 1 {
		t.Errorf("logs -f t repeated lines: %q", out)
	}

	// tmux worker: plain logs and --history
	wkWaitScreen(t, e, "h", "last-line")
	r := e.Run("logs", "h")
	if r.Code != 0 || !strings.Contains(r.Stdout, "first-line\nlast-line\n") {
		t.Errorf("logs h: %s", r)
	}
	r = e.Run("logs", "h", "--history", "--lines", "1000")
	if r.Code != 0 || !strings.Contains(r.Stdout, "first-line\nlast-line\n") {
		t.Errorf("logs h --history: %s", r)
	}
}

// A stopped tmux worker's last words are what peek, logs and logs
// --history show: its 200x50 window holds a few lines at the top, then
// blank rows down to tmux's "Pane is dead" line at the bottom, and the
// blank rows used to be all of peek's 30 lines.
func TestWorkerStoppedPaneShowsLastWords(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// k keeps the server up after d's command exits.
	e.MustRun("spawn", "--name", "k", "--tmux", "--", e.Agent, "--input", "none", "--script", "quiet")
	e.MustRun("spawn", "--name", "d", "--tmux", "--", e.Agent, "--input", "none",
		"--script", "print first words;print last words;exit 3")
	e.Eventually("d to stop", 10*time.Second, func() bool { return e.Run("status", "d").Code == 1 })
	for _, args := range [][]string{
		{"peek", "d"}, {"peek", "d", "-n", "3"}, {"logs", "d"}, {"logs", "d", "--history"}, {"logs", "d", "--lines", "3"},
	} {
		r := e.Run(args...)
		lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
		// tmux 3.3 does not always draw its dead-pane line (nor always
		// know the exit status): when it does, it comes last.
		dead := strings.Contains(r.Stdout, "Pane is dead")
		if r.Code != 0 || !strings.Contains(r.Stdout, "first words\nlast words\n") || dead && !strings.HasPrefix(lines[len(lines)-1], "Pane is dead") {
			t.Errorf("%q: want the last words, then tmux's dead-pane line: %s", args, r)
		}
		if strings.Contains(r.Stdout, "\n\n") {
			t.Errorf("%q: blank lines shown: %q", args, r.Stdout)
		}
	}
}

// wkRunCtx runs swarm with a deadline so a follow that never ends fails the
// test instead of hanging it; it returns stdout and the exit code.
func wkRunCtx(t *testing.T, e *testenv.Env, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Swarm, args...)
	cmd.Dir = e.Dir
	cmd.Env = e.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("swarm %q did not end within %v; output so far %q", args, timeout, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if errb.Len() > 0 {
		t.Logf("swarm %q stderr: %s", args, errb.String())
	}
	return out.String(), code
}

// attach run from a pane of another tmux server becomes a client of the
// worker's server, on the worker's window.
func TestWorkerAttach(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "a", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "b", "--tmux", "--", "sleep", "300")

	outer := e.Socket + "-outer"
	wkExtraServer(t, outer)
	inner := fmt.Sprintf("env SWARM_HOME=%s SWARM_DIR= SWARM_TMUX_SOCKET=%s TMUX= %s attach a; sleep 300",
		wkShellQuote(e.Home), wkShellQuote(e.Socket), wkShellQuote(e.Swarm))
	cmd := exec.Command("tmux", "-L", outer, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", inner)
	cmd.Env = append(os.Environ(), "TMUX=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("outer tmux: %v\n%s", err, out)
	}
	var clients string
	e.Eventually("a client on the worker's tmux server", wkTimeout, func() bool {
		clients, _ = e.Tmux("list-clients", "-F", "#{session_name} #{window_name}")
		return strings.TrimSpace(clients) != ""
	})
	if want := wkSession(e) + " a"; strings.TrimSpace(clients) != want {
		t.Errorf("client shows %q, want %q", strings.TrimSpace(clients), want)
	}

	wkExpect(t, "attach unknown", e.Run("attach", "nope"), 1, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")
}

// TestSendIntoCopyModePane: a pane left in copy mode (scrolled back in
// attach, the mouse wheel) still gets what swarm sends: a multi-line text
// as one message, keys such as Ctrl-C acting on the agent. In copy mode
// tmux gives keys to the mode and pastes unbracketed, so without leaving
// it a three-line text arrived as three submissions.
func TestSendIntoCopyModePane(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		modeKeys string // the user's mode-keys: vi's Escape does not leave copy mode
		send     []string
	}{
		{"send, vi mode keys", "vi", []string{"send", "w", "l1\nl2\nl3"}},
		{"send --raw", "emacs", []string{"send", "w", "--raw", "l1\nl2\nl3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := testenv.New(t)
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			wkSpawnTTYAgent(t, e, "w", "--record", rec, "--script", "wait;quiet")
			wkEnterCopyMode(t, e, "w", c.modeKeys)
			wkExpect(t, "send", e.Run(c.send...), 0, "sent to w\n", "")
			recs := wkWaitRecords(t, rec, 1)
			if recs[0].Message != "l1\nl2\nl3" {
				t.Errorf("message = %q, want the three lines as one message", recs[0].Message)
			}
			// A second message proves no stray line went as one.
			wkEnterCopyMode(t, e, "w", c.modeKeys)
			wkExpect(t, "send again", e.Run("send", "w", "--raw", "end"), 0, "sent to w\n", "")
			recs = wkWaitRecords(t, rec, 2)
			if len(recs) != 2 || recs[1].Message != "end" {
				t.Errorf("records %+v, want the three lines then end", recs)
			}
		})
	}
	t.Run("interrupt", func(t *testing.T) {
		t.Parallel()
		e := testenv.New(t)
		rc := filepath.Join(t.TempDir(), "rc")
		args := append([]string{"spawn", "--name", "i", "--tmux", "--ready-wait", "--ready-timeout", "15", "--"}, wkRCWrapper(e.Agent, rc)...)
		wkExpect(t, "spawn i", e.Run(args...), 0, wkSpawnedTmux(e, "i"), "")
		wkEnterCopyMode(t, e, "i", "emacs")
		wkExpect(t, "interrupt i", e.Run("interrupt", "i"), 0, "interrupted i\n", "")
		wkWaitFile(t, rc, "130\n")
	})
}

// wkEnterCopyMode sets the server's mode-keys and puts the worker's pane
// in copy mode, as a user scrolling back would.
func wkEnterCopyMode(t *testing.T, e *testenv.Env, name, modeKeys string) {
	t.Helper()
	id := e.WindowID(name)
	if out, err := e.Tmux("set-option", "-g", "mode-keys", modeKeys, ";", "copy-mode", "-t", id); err != nil {
		t.Fatalf("copy-mode: %v: %s", err, out)
	}
	if out, _ := e.Tmux("display-message", "-p", "-t", id, "#{pane_in_mode}"); strings.TrimSpace(out) != "1" {
		t.Fatalf("pane not in copy mode: %q", out)
	}
}

// Issue 27 item 22: tmux clients run with a minimal environment, so the
// server the first spawn starts holds no secret of the caller's shell in
// its global environment; a tmux worker gets the environment of the
// swarm command that spawns it instead (through its env file), whatever
// the server's: a variable the server never had reaches a later worker,
// while the window keeps tmux's own TERM.
func TestWorkerEnvFromTheCallerNotTheServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	secret := fmt.Sprintf("sk-caller-%d", os.Getpid())
	extra := e.Extra
	e.Extra = append(extra, "SWARM_TEST_CALLER_SECRET="+secret)
	e.MustRun("spawn", "--name", "first", "--tmux", "--", "sleep", "300")
	global, err := e.Tmux("show-environment", "-g")
	if err != nil {
		t.Fatalf("show-environment -g: %v: %s", err, global)
	}
	if strings.Contains(global, secret) {
		t.Errorf("the tmux server's global environment holds the caller's secret:\n%s", global)
	}
	e.Extra = append(extra, "SWARM_TEST_CALLER_SECRET="+secret, "SWARM_TEST_LATE=late", "TERM=caller-term")
	e.MustRun("spawn", "--name", "w", "--tmux", "--", e.Agent, "--input", "none",
		"--script", "env SWARM_TEST_LATE;env SWARM_TEST_CALLER_SECRET;env TERM;quiet")
	wkWaitScreen(t, e, "w", "SWARM_TEST_LATE=late\nSWARM_TEST_CALLER_SECRET="+secret+"\nTERM=")
	if s := e.Screen("w"); strings.Contains(s, "caller-term") {
		t.Errorf("the worker got the caller's TERM:\n%s", s)
	}
}
