package main

// Black-box tests of records that outlive what they describe, and of
// tmux servers that do not answer (issue 16, items 1, 16 and 17).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// stRun runs swarm with extra environment and fails the test if it has
// not ended within limit (it is killed then): a command that hangs is a
// failure, not a test that never ends.
func stRun(t *testing.T, e *testenv.Env, extra []string, limit time.Duration, args ...string) testenv.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Swarm, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(e.Env(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := testenv.Result{Stdout: out.String(), Stderr: errb.String()}
	if ctx.Err() != nil {
		t.Fatalf("swarm %q did not end within %s; output so far:\n%s", args, limit, r)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("swarm %q: %v", args, err)
	}
	return r
}

// stServerPID is the pid of the env's tmux server.
func stServerPID(t *testing.T, e *testenv.Env) int {
	t.Helper()
	out, err := e.Tmux("display-message", "-p", "#{pid}")
	pid, perr := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || perr != nil || pid <= 1 {
		t.Fatalf("tmux server pid: %q %v", out, err)
	}
	return pid
}

// stStop stops the env's tmux server (SIGSTOP) until the test ends or
// the returned function resumes it. The cleanup runs before the env's,
// which kills the server and could not while it is stopped.
func stStop(t *testing.T, e *testenv.Env) (resume func()) {
	t.Helper()
	pid := stServerPID(t, e)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resume = func() { syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(resume)
	return resume
}

// Issue 16, item 17: a stopped tmux server (SIGSTOP) accepts connections
// and never answers. Commands that ask it fail after the deadline with
// an error saying so, and ls of process workers alone does not ask it.
func TestStoppedTmuxServerHasADeadline(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	wkSpawnProcess(t, e, "--name", "p", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "t", "--tmux", "--", "sleep", "300")
	resume := stStop(t, e)

	deadline := []string{"SWARM_TMUX_TIMEOUT=1s"}
	for _, args := range [][]string{{"ls"}, {"status", "t"}, {"send", "t", "hi"}, {"kill", "t"}, {"kill", "--all"}, {"top", "--once"}} {
		r := stRun(t, e, deadline, 30*time.Second, args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "swarm: error: tmux did not answer within 1s") ||
			!strings.Contains(r.Stderr, "is the server stopped?") || !strings.Contains(r.Stderr, "\nhint: ") {
			t.Errorf("%q with the tmux server stopped:\n%s", args, r)
		}
	}

	// Without the tmux worker, ls needs no tmux at all.
	resume()
	e.MustRun("kill", "t")
	e.MustRun("clean", "t")
	if out, err := e.Tmux("new-session", "-d", "-s", "mine", "sleep 300"); err != nil {
		t.Fatalf("a server to stop: %v %s", err, out)
	}
	stStop(t, e)
	r := stRun(t, e, deadline, 30*time.Second, "ls", "--format", "names")
	wkExpect(t, "ls of a process worker with the tmux server stopped", r, 0, "p\n", "")
}

// stEditRecord changes the state.json record of name with edit.
func stEditRecord(t *testing.T, e *testenv.Env, name string, edit func(rec map[string]any)) {
	t.Helper()
	path := filepath.Join(e.Home, "state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	ws, _ := reg["workers"].([]any)
	found := false
	for _, w := range ws {
		if rec, _ := w.(map[string]any); rec["name"] == name {
			edit(rec)
			found = true
		}
	}
	if !found {
		t.Fatalf("no record %s in %s", name, data)
	}
	if data, err = json.Marshal(reg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 16, item 16: one record whose socket name tmux would turn into a
// path outside its socket directory (../x), here a ralph loop's, is set
// aside with a warning by ls, top, kill --all and clean --all; the other
// workers are listed, killed and cleaned as ever.
func TestBadSocketRecordIsSetAside(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.WriteFile("PROMPT.md", "work")
	e.MustRun("ralph", "spawn", "--name", "bad", "--prompt-file", "PROMPT.md", "--no-worktree", "--no-run", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "good", "--tmux", "--", "sleep", "300")
	stEditRecord(t, e, "bad", func(rec map[string]any) {
		rec["tmux"].(map[string]any)["socket"] = "../x"
	})
	const warned = "swarm: warning: worker 'bad' cannot be reached: invalid tmux socket name '../x' (no '/'); it is listed as stopped\n"

	r := stRun(t, e, nil, wkTimeout, "ls", "--format", "names", "--status", "running")
	wkExpect(t, "ls", r, 0, "good\n", warned)
	r = stRun(t, e, nil, wkTimeout, "top", "--once")
	if r.Code != 0 || !strings.Contains(r.Stdout, "\ngood ") || !strings.Contains(r.Stdout, "\nbad ") {
		t.Errorf("top --once:\n%s", r)
	}

	r = stRun(t, e, nil, wkTimeout, "kill", "--all")
	if r.Code != 0 || r.Stdout != "killed good\n" ||
		!strings.Contains(r.Stderr, "swarm: warning: cannot stop 'bad': invalid tmux socket name '../x' (no '/'); its record is damaged; stop the agent by hand, then swarm clean bad\n") {
		t.Errorf("kill --all:\n%s", r)
	}
	if ws := wkWindows(e); len(ws) != 0 {
		t.Errorf("windows left after kill --all: %q", ws)
	}
	r = stRun(t, e, nil, wkTimeout, "clean", "--all")
	if r.Code != 0 || r.Stdout != "cleaned bad\ncleaned good\n" {
		t.Errorf("clean --all:\n%s", r)
	}
	if ws := e.Workers(); len(ws) != 0 {
		t.Errorf("records left after clean --all: %v", ws)
	}
}
