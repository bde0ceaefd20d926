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
	"regexp"
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

// stWindowID is the tmux_window_id recorded for name.
func stWindowID(t *testing.T, e *testenv.Env, name string) string {
	t.Helper()
	meta, _ := wkRecordOf(e, name)["metadata"].(map[string]any)
	id, _ := meta["tmux_window_id"].(string)
	if !strings.HasPrefix(id, "@") {
		t.Fatalf("%s has no window id recorded: %v", name, wkRecordOf(e, name))
	}
	return id
}

// stPanePID is the pane pid of window id on the env's server ("" when
// there is no such window).
func stPanePID(e *testenv.Env, id string) string {
	out, _ := e.Tmux("list-panes", "-a", "-F", "#{window_id} #{pane_pid}")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == id {
			return f[1]
		}
	}
	return ""
}

// stUsersWindow plays the user's own work on a new tmux server on the
// env's socket (the old one exited, or the machine rebooted): a session
// "mywork" whose windows copy what is typed into them to typed, made
// until one has the window id id. It returns that window's pane pid.
func stUsersWindow(t *testing.T, e *testenv.Env, id, typed string) string {
	t.Helper()
	cat := "cat >> " + wkShellQuote(typed)
	// The old server may still be closing down (kill-server returns
	// before it is gone).
	e.Eventually("the user's session on a new server", wkTimeout, func() bool {
		_, err := e.Tmux("new-session", "-d", "-s", "mywork", cat)
		return err == nil
	})
	for i := 0; i < 20 && stPanePID(e, id) == ""; i++ {
		e.Tmux("new-window", "-d", "-t", "mywork:", cat)
	}
	pid := stPanePID(e, id)
	if pid == "" {
		t.Fatalf("no window %s on the new server", id)
	}
	return pid
}

// stNothingTyped checks that the user's window id got nothing but what
// the test types into it itself now: a marker, which arrives after
// anything typed before it.
func stNothingTyped(t *testing.T, e *testenv.Env, id, typed string) {
	t.Helper()
	if out, err := e.Tmux("send-keys", "-t", id, "-l", "MARK", ";", "send-keys", "-t", id, "Enter"); err != nil {
		t.Fatalf("typing the marker: %v %s", err, out)
	}
	var got string
	e.Eventually("the marker in the user's window", wkTimeout, func() bool {
		data, _ := os.ReadFile(typed)
		got = string(data)
		return strings.Contains(got, "MARK")
	})
	if got != "MARK\n" {
		t.Errorf("the user's window got %q, want only the marker", got)
	}
}

// Issue 16, item 1: a tmux server exits (here kill-server; the last
// window closing or a reboot do the same) while a worker's record still
// says running. The next server numbers windows from @0 again, and the
// user's own window gets the id recorded for the worker. It is not the
// worker's: ls and status say stopped, send and peek refuse, kill, kill
// --all and clean leave it alone.
func TestStaleWindowIdOfAnotherServerLifetime(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	id := stWindowID(t, e, "w")
	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	typed := filepath.Join(t.TempDir(), "typed")
	pid := stUsersWindow(t, e, id, typed)

	for _, l := range wkLsJSON(t, e) {
		if l["name"] == "w" && l["status"] != "stopped" {
			t.Errorf("ls shows w %v with the user's window %s", l["status"], id)
		}
	}
	if r := e.Run("status", "w"); r.Code != 1 || !strings.Contains(r.Stdout, "stopped") {
		t.Errorf("status w:\n%s", r)
	}
	if r := e.Run("send", "w", "hello"); r.Code == 0 || !strings.Contains(r.Stderr, "swarm: error: worker 'w' is not running") {
		t.Errorf("send w went through:\n%s", r)
	}
	if r := e.Run("peek", "w"); r.Code == 0 {
		t.Errorf("peek w showed a screen:\n%s", r)
	}
	if r := e.Run("kill", "--all"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("kill --all:\n%s", r)
	}
	if r := e.Run("kill", "w"); r.Code != 0 {
		t.Errorf("kill w:\n%s", r)
	}
	if r := e.Run("clean", "w"); r.Code != 0 {
		t.Errorf("clean w:\n%s", r)
	}
	if got := stPanePID(e, id); got != pid {
		t.Fatalf("the user's window %s: pane pid %q, want %s (untouched)", id, got, pid)
	}
	stNothingTyped(t, e, id, typed)
}

// Issue 16, item 1, for a ralph loop: its tmux server exits while the
// loop runs, and the user's own window on the next server gets the id
// recorded for the loop's window. Neither a monitor resumed after a
// reboot (which adopts a running iteration) nor the next iteration of a
// live monitor (which respawns the loop's window) takes it for the
// loop's, and kill leaves it alone: the loop makes itself a new window.
func TestStaleWindowIdOfAnotherServerLifetimeRalph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// lose ends the loop's tmux server while iteration 1 runs, as
		// the case has it; goOn makes the loop go on afterwards.
		lose, goOn func(t *testing.T, e *testenv.Env)
	}{
		{"ralph resume after a reboot", func(t *testing.T, e *testenv.Env) {
			mon := stMonitorPID(t, e, "r")
			syscall.Kill(mon, syscall.SIGKILL)
			e.Eventually("the monitor to die", wkTimeout, func() bool { return !wkAlive(mon) })
			e.Tmux("kill-server")
		}, func(t *testing.T, e *testenv.Env) {
			e.MustRun("ralph", "resume", "r")
		}},
		{"the next iteration", func(t *testing.T, e *testenv.Env) {
			// Paused, the monitor starts no iteration until resumed.
			e.MustRun("ralph", "pause", "r")
			e.Tmux("kill-server")
			e.Eventually("iteration 1 to end", wkTimeout, func() bool {
				active, _ := e.RalphState("r")["iteration_active"].(bool)
				return !active
			})
		}, func(t *testing.T, e *testenv.Env) {
			e.MustRun("ralph", "resume", "r")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testenv.New(t)
			e.WriteFile("PROMPT.md", "work")
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			r := e.Run("ralph", "spawn", "--name", "r", "--prompt-file", "PROMPT.md", "--max-iterations", "5",
				"--no-worktree", "--restart-delay", "100ms", "--", e.Agent, "--record", rec, "--script", "print busy;wait")
			if r.Code != 0 {
				t.Fatalf("ralph spawn: %s", r)
			}
			wkWaitRecords(t, rec, 1)
			id := stWindowID(t, e, "r")
			tc.lose(t, e)
			typed := filepath.Join(t.TempDir(), "typed")
			pid := stUsersWindow(t, e, id, typed)

			tc.goOn(t, e)
			// The loop goes on in a window of its own.
			if got := wkWaitRecords(t, rec, 2); got[1].Message != "work" {
				t.Errorf("the agent got %+v", got)
			}
			if got := stPanePID(e, id); got != pid {
				t.Errorf("the user's window %s: pane pid %q, want %s (untouched)\n%s", id, got, pid, e.RalphLog("r"))
			}
			if r := e.Run("kill", "r"); r.Code != 0 {
				t.Errorf("kill r: %s", r)
			}
			if got := stPanePID(e, id); got != pid {
				t.Fatalf("after kill r, the user's window %s: pane pid %q, want %s (untouched)", id, got, pid)
			}
			stNothingTyped(t, e, id, typed)
		})
	}
}

// stMonitorPID is the pid of loop name's monitor.
func stMonitorPID(t *testing.T, e *testenv.Env, name string) int {
	t.Helper()
	pid, _ := e.RalphState(name)["monitor_pid"].(float64)
	if pid <= 1 {
		t.Fatalf("no monitor pid in %v", e.RalphState(name))
	}
	return int(pid)
}

// Issue 27 item 22: a worker whose recorded socket is now another user's
// (its own server gone, another user's listening there) is never
// connected to: ls lists it as stopped with a warning, send refuses it,
// and the other workers are listed as before.
func TestWorkerOnAnotherUsersSocketIsNotReached(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the socket to another user")
	}
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "a", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "p", "--", "sleep", "300")
	var sock string
	for _, w := range e.Workers() {
		if w["name"] == "a" {
			sock, _ = w["metadata"].(map[string]any)["tmux_socket_path"].(string)
		}
	}
	if sock == "" {
		t.Fatalf("no socket path recorded: %v", e.Workers())
	}
	if err := os.Lchown(sock, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Lchown(sock, 0, 0) })
	r := e.Run("ls")
	if r.Code != 0 || !strings.Contains(r.Stderr, "worker 'a' cannot be reached: tmux socket "+sock+" is owned by another user (uid 65534)") ||
		!regexp.MustCompile(`(?m)^a\s+stopped`).MatchString(r.Stdout) || !regexp.MustCompile(`(?m)^p\s+running`).MatchString(r.Stdout) {
		t.Errorf("ls: %s", r)
	}
	if r := e.Run("send", "a", "hi"); r.Code == 0 {
		t.Errorf("send to a worker on another user's socket: %s", r)
	}
	if r := e.Run("kill", "--all"); r.Code != 0 || !strings.Contains(r.Stderr, "worker 'a' cannot be reached") {
		t.Errorf("kill --all: %s", r)
	}
	if r := e.Run("clean", "--all"); r.Code != 0 || len(e.Workers()) != 0 {
		t.Errorf("clean --all: %s\nrecords left: %v", r, e.Workers())
	}
}
