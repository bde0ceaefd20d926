package main

// Black-box tests of the worker life cycle: spawn, ls, status, peek, kill,
// clean, wait and respawn, for tmux and process workers (docs/commands.md).

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// wkLsRows runs `ls` (table) with args and returns the whitespace-split
// rows, header first.
func wkLsRows(t *testing.T, e *testenv.Env, args ...string) [][]string {
	t.Helper()
	r := e.MustRun(append([]string{"ls"}, args...)...)
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		if line != "" {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

var wkAgeRe = regexp.MustCompile(`^[0-9]+[smhd]$`)

// wkCheckRow checks one table row; the STARTED cell is an age.
func wkCheckRow(t *testing.T, row []string, name, status, where, worktree, tag string) {
	t.Helper()
	if len(row) != 6 || row[0] != name || row[1] != status || row[2] != where ||
		!wkAgeRe.MatchString(row[3]) || row[4] != worktree || row[5] != tag {
		t.Errorf("ls row %q, want [%s %s %s <age> %s %s]", row, name, status, where, worktree, tag)
	}
}

var wkHeader = []string{"NAME", "STATUS", "PID/WINDOW", "STARTED", "WORKTREE", "TAG"}

func TestWorkerTmuxRoundTrip(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	s := wkSession(e)

	wkExpect(t, "ls table, empty", e.Run("ls"), 0, "", "")
	wkExpect(t, "ls json, empty", e.Run("ls", "--format", "json"), 0, "[]\n", "")
	wkExpect(t, "ls names, empty", e.Run("ls", "--format", "names"), 0, "", "")

	agent := []string{e.Agent, "--input", "none", "--script", "print hello-from-agent;quiet"}
	r := e.Run(append([]string{"spawn", "--name", "w", "--tmux", "--tag", "alpha", "--"}, agent...)...)
	wkExpect(t, "spawn w", r, 0, wkSpawnedTmux(e, "w"), "")
	r = e.Run("spawn", "--name", "other", "--tmux", "--tag", "beta", "--", "sleep", "300")
	wkExpect(t, "spawn other", r, 0, wkSpawnedTmux(e, "other"), "")
	if e.WindowID("w") == "" || e.WindowID("other") == "" {
		t.Fatalf("windows missing: %q", wkWindows(e))
	}

	// ls: table
	rows := wkLsRows(t, e)
	if len(rows) != 3 || !reflect.DeepEqual(rows[0], wkHeader) {
		t.Fatalf("ls table rows %q", rows)
	}
	wkCheckRow(t, rows[1], "w", "running", s+":w", "-", "alpha")
	wkCheckRow(t, rows[2], "other", "running", s+":other", "-", "beta")

	// ls: json
	recs := wkLsJSON(t, e)
	if len(recs) != 2 {
		t.Fatalf("ls json: %d records, want 2: %v", len(recs), recs)
	}
	w := recs[0]
	if w["name"] != "w" || w["status"] != "running" || w["cwd"] != e.Dir || w["pid"] != nil || w["worktree"] != nil {
		t.Errorf("json record of w: %v", w)
	}
	if !reflect.DeepEqual(w["cmd"], []any{agent[0], agent[1], agent[2], agent[3], agent[4]}) {
		t.Errorf("json cmd of w: %#v, want %q", w["cmd"], agent)
	}
	if !reflect.DeepEqual(w["tags"], []any{"alpha"}) || !reflect.DeepEqual(w["env"], map[string]any{}) {
		t.Errorf("json tags/env of w: %#v %#v", w["tags"], w["env"])
	}
	if want := map[string]any{"session": s, "window": "w", "socket": e.Socket}; !reflect.DeepEqual(w["tmux"], want) {
		t.Errorf("json tmux of w: %#v, want %#v", w["tmux"], want)
	}
	// swarm.py's form: local time, no zone, microseconds (or none).
	if st, _ := w["started"].(string); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$`).MatchString(st) {
		t.Errorf("started %q is not swarm.py's zone-less isoformat", st)
	} else if at, err := time.ParseInLocation("2006-01-02T15:04:05.999999", st, time.Local); err != nil || time.Since(at) > time.Hour || time.Since(at) < -time.Minute {
		t.Errorf("started %q: %v (not local time now)", st, err)
	}

	// ls: names and filters
	if got := wkNames(t, e); !reflect.DeepEqual(got, []string{"w", "other"}) {
		t.Errorf("ls names: %q", got)
	}
	if got := wkNames(t, e, "--tag", "alpha"); !reflect.DeepEqual(got, []string{"w"}) {
		t.Errorf("ls --tag alpha: %q", got)
	}
	if got := wkNames(t, e, "--tag", "nope"); len(got) != 0 {
		t.Errorf("ls --tag nope: %q", got)
	}
	if got := wkNames(t, e, "--status", "running"); !wkSameSet(got, []string{"w", "other"}) {
		t.Errorf("ls --status running: %q", got)
	}
	if got := wkNames(t, e, "--status", "stopped"); len(got) != 0 {
		t.Errorf("ls --status stopped: %q", got)
	}
	if got := wkLsJSON(t, e, "--tag", "beta"); len(got) != 1 || got[0]["name"] != "other" {
		t.Errorf("ls json --tag beta: %v", got)
	}

	// status
	r = e.Run("status", "w")
	if re := regexp.MustCompile(`^w: running \(tmux window ` + regexp.QuoteMeta(s) + `:w, uptime \d+s\)\n$`); r.Code != 0 || !re.MatchString(r.Stdout) || r.Stderr != "" {
		t.Errorf("status w: %s", r)
	}
	wkExpect(t, "status of unknown worker", e.Run("status", "nope"), 2, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")

	// peek
	e.Eventually("peek to show the agent's output", wkTimeout, func() bool {
		return strings.Contains(e.Run("peek", "w").Stdout, "hello-from-agent")
	})
	r = e.Run("peek", "w")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Fake Agent v1.0\nhello-from-agent\n") || r.Stderr != "" {
		t.Errorf("peek w: %s", r)
	}
	r = e.Run("peek", "w", "-n", "1")
	if r.Code != 0 || strings.Contains(r.Stdout, "Fake Agent") || !strings.Contains(r.Stdout, "hello-from-agent") {
		t.Errorf("peek w -n 1: %s", r)
	}
	r = e.Run("peek", "--all")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "=== w ===\n") || !strings.Contains(r.Stdout, "\n=== other ===\n") ||
		!strings.Contains(r.Stdout, "hello-from-agent") {
		t.Errorf("peek --all: %s", r)
	}
	wkExpect(t, "peek of unknown worker", e.Run("peek", "nope"), 2, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")

	// kill
	wkExpect(t, "kill w", e.Run("kill", "w"), 0, "killed w\n", "")
	if e.WindowID("w") != "" {
		t.Errorf("window w still exists after kill: %q", wkWindows(e))
	}
	if e.WindowID("other") == "" {
		t.Errorf("kill w removed window other: %q", wkWindows(e))
	}
	r = e.Run("status", "w")
	if re := regexp.MustCompile(`^w: stopped \(tmux window ` + regexp.QuoteMeta(s) + `:w, ran \d+s\)\n$`); r.Code != 1 || !re.MatchString(r.Stdout) {
		t.Errorf("status of killed w: %s", r)
	}
	if got := wkNames(t, e, "--status", "stopped"); !reflect.DeepEqual(got, []string{"w"}) {
		t.Errorf("ls --status stopped after kill: %q", got)
	}
	rows = wkLsRows(t, e, "--status", "stopped")
	if len(rows) != 2 {
		t.Fatalf("ls --status stopped table: %q", rows)
	}
	wkCheckRow(t, rows[1], "w", "stopped", s+":w", "-", "alpha")
	wkExpect(t, "peek stopped w", e.Run("peek", "w"), 1, "", "swarm: error: worker 'w' is not running\nhint: start it again with: swarm respawn w\n")

	// clean
	wkExpect(t, "clean w", e.Run("clean", "w"), 0, "cleaned w\n", "")
	wkExpect(t, "status after clean", e.Run("status", "w"), 2, "", "swarm: error: worker 'w' not found\nhint: swarm ls lists the workers\n")
	if got := wkNames(t, e); !reflect.DeepEqual(got, []string{"other"}) {
		t.Errorf("ls names after clean: %q", got)
	}
	if wkStatusCode(e, "other") != 0 {
		t.Errorf("other is not running any more")
	}
}

func TestWorkerProcessRoundTrip(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	pid := wkSpawnProcess(t, e, "--name", "p", "--tag", "pt", "--",
		e.Agent, "--input", "none", "--script", "print hello-from-agent;quiet")
	if !wkAlive(pid) {
		t.Fatalf("pid %d of the process worker is not alive", pid)
	}
	if rec := wkRecordOf(e, "p"); rec == nil || rec["pid"] != float64(pid) || rec["tmux"] != nil {
		t.Errorf("state record of p: %v", rec)
	}
	if wkServerRunning(e) {
		t.Errorf("a process worker started a tmux server")
	}

	rows := wkLsRows(t, e)
	if len(rows) != 2 || !reflect.DeepEqual(rows[0], wkHeader) {
		t.Fatalf("ls rows %q", rows)
	}
	wkCheckRow(t, rows[1], "p", "running", fmt.Sprint(pid), "-", "pt")
	if got := wkNames(t, e, "--tag", "pt", "--status", "running"); !reflect.DeepEqual(got, []string{"p"}) {
		t.Errorf("ls --tag pt --status running: %q", got)
	}

	r := e.Run("status", "p")
	if re := regexp.MustCompile(fmt.Sprintf(`^p: running \(pid %d, uptime \d+s\)\n$`, pid)); r.Code != 0 || !re.MatchString(r.Stdout) {
		t.Errorf("status p: %s", r)
	}
	e.Eventually("logs to show the output", wkTimeout, func() bool {
		return e.Run("logs", "p").Stdout == "Fake Agent v1.0\nhello-from-agent\n"
	})
	wkExpect(t, "peek on a process worker", e.Run("peek", "p"), 1, "", "swarm: error: worker 'p' is not a tmux worker\nhint: its output is in its log: swarm logs p\n")
	wkExpect(t, "clean running p", e.Run("clean", "p"), 1, "", "swarm: error: cannot clean running worker 'p'\nhint: swarm kill p, then swarm clean p\n")

	wkExpect(t, "kill p", e.Run("kill", "p"), 0, "killed p\n", "")
	e.Eventually("the process worker to die", wkTimeout, func() bool { return !wkAlive(pid) })
	r = e.Run("status", "p")
	if re := regexp.MustCompile(fmt.Sprintf(`^p: stopped \(pid %d, ran \d+s, exit 143\)\n$`, pid)); r.Code != 1 || !re.MatchString(r.Stdout) {
		t.Errorf("status of killed p: %s", r)
	}
	logs := filepath.Join(e.Home, "logs")
	for _, f := range []string{"p.stdout.log", "p.stderr.log"} {
		if !wkExists(filepath.Join(logs, f)) {
			t.Errorf("log file %s missing before clean", f)
		}
	}
	wkExpect(t, "clean p", e.Run("clean", "p"), 0, "cleaned p\n", "")
	for _, f := range []string{"p.stdout.log", "p.stderr.log"} {
		if wkExists(filepath.Join(logs, f)) {
			t.Errorf("clean left log file %s", f)
		}
	}
	wkExpect(t, "ls json after clean", e.Run("ls", "--format", "json"), 0, "[]\n", "")
}

// Killing foo must not touch foobar (swarm.py matched tmux targets by
// prefix; docs/security.md: targets are exact).
func TestWorkerKillExactTarget(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	rec := filepath.Join(t.TempDir(), "foobar.jsonl")
	e.MustRun("spawn", "--name", "foobar", "--tmux", "--ready-wait", "--ready-timeout", "10", "--",
		e.Agent, "--record", rec, "--script", "quiet")
	e.MustRun("spawn", "--name", "foo", "--tmux", "--", "sleep", "300")

	wkExpect(t, "kill foo", e.Run("kill", "foo"), 0, "killed foo\n", "")
	if e.WindowID("foobar") == "" {
		t.Fatalf("kill foo removed foobar's window; windows: %q", wkWindows(e))
	}
	if e.WindowID("foo") != "" {
		t.Errorf("foo's window survived kill")
	}
	if wkStatusCode(e, "foobar") != 0 {
		t.Errorf("foobar is not running after kill foo")
	}
	// foo is stopped: commands on it must not reach foobar by prefix
	if c := wkStatusCode(e, "foo"); c != 1 {
		t.Errorf("status foo after kill: exit %d, want 1", c)
	}
	wkExpect(t, "send to stopped foo", e.Run("send", "foo", "not for foobar"), 1, "", "swarm: error: worker 'foo' is not running\nhint: start it again with: swarm respawn foo\n")
	wkExpect(t, "peek stopped foo", e.Run("peek", "foo"), 1, "", "swarm: error: worker 'foo' is not running\nhint: start it again with: swarm respawn foo\n")
	wkExpect(t, "kill foo again", e.Run("kill", "foo"), 0, "killed foo\n", "")
	if e.WindowID("foobar") == "" || wkStatusCode(e, "foobar") != 0 {
		t.Errorf("foobar did not survive a second kill foo")
	}
	if strings.Contains(e.Screen("foobar"), "not for foobar") || len(testenv.Records(t, rec)) != 0 {
		t.Errorf("text sent to foo reached foobar:\n%s", e.Screen("foobar"))
	}
}

func TestWorkerFileModes(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	wkSpawnProcess(t, e, "--name", "p", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	check := func(path string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			return
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %#o, want %#o", path, got, want)
		}
	}
	check(e.Home, 0o700)
	check(filepath.Join(e.Home, "state.json"), 0o600)
	check(filepath.Join(e.Home, "logs"), 0o700)
	check(filepath.Join(e.Home, "logs", "p.stdout.log"), 0o600)
	check(filepath.Join(e.Home, "logs", "p.stderr.log"), 0o600)
	// still 0600 after a rewrite by another command
	e.MustRun("kill", "p")
	check(filepath.Join(e.Home, "state.json"), 0o600)
}

func TestWorkerWait(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// slow first: its window keeps the tmux server up when quick's closes
	// (see TestWorkerSpawnWhileServerExits)
	e.MustRun("spawn", "--name", "slow", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "quick", "--tmux", "--", e.Agent, "--input", "none", "--script", "sleep 300ms;exit 0")
	wkSpawnProcess(t, e, "--name", "pquick", "--", e.Agent, "--input", "none", "--script", "sleep 300ms;exit 0")

	wkExpect(t, "wait quick", e.Run("wait", "quick"), 0, "quick: exited\n", "")
	if c := wkStatusCode(e, "quick"); c != 1 {
		t.Errorf("status quick after wait: exit %d, want 1", c)
	}
	wkExpect(t, "wait pquick", e.Run("wait", "pquick", "--timeout", "10"), 0, "pquick: exited\n", "")

	start := time.Now()
	wkExpect(t, "wait slow --timeout 1", e.Run("wait", "slow", "--timeout", "1"), 1, "slow: still running (timeout)\n", "")
	if d := time.Since(start); d < 900*time.Millisecond || d > 8*time.Second {
		t.Errorf("wait --timeout 1 took %v", d)
	}
	if wkStatusCode(e, "slow") != 0 {
		t.Errorf("wait --timeout stopped the worker")
	}
	// an already stopped worker returns at once
	wkExpect(t, "wait on stopped quick", e.Run("wait", "quick", "--timeout", "5"), 0, "quick: exited\n", "")
}

func TestWorkerRespawn(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	s := wkSession(e)
	sub := filepath.Join(e.Dir, "sub")
	os.Mkdir(sub, 0o755)
	// a second window keeps the tmux server up when r's window goes (see
	// TestWorkerKillLastWindow for that case)
	e.MustRun("spawn", "--name", "keeper", "--tmux", "--", "sleep", "300")
	agent := []string{e.Agent, "--input", "none", "--script", "env RK;cwd;print started-{n};quiet"}
	e.MustRun(append([]string{"spawn", "--name", "r", "--tmux", "--cwd", "sub", "--env", "RK=v 1", "--tag", "t1", "--tag", "t2", "--"}, agent...)...)
	before := wkRecordOf(e, "r")
	wkWaitScreen(t, e, "r", "CWD="+sub)

	// respawn of a running worker restarts it; after kill it brings it back
	wkExpect(t, "kill r", e.Run("kill", "r"), 0, "killed r\n", "")
	wkExpect(t, "respawn r", e.Run("respawn", "r"), 0, fmt.Sprintf("respawned r (tmux: %s:r)\n", s), "")
	if c := wkStatusCode(e, "r"); c != 0 {
		t.Fatalf("status after respawn: exit %d", c)
	}
	wkWaitScreen(t, e, "r", "CWD="+sub)
	if scr := e.Screen("r"); !strings.Contains(scr, "RK=v 1\n") {
		t.Errorf("env lost on respawn; screen:\n%s", scr)
	}
	after := wkRecordOf(e, "r")
	for _, k := range []string{"cmd", "env", "tags", "cwd", "tmux", "worktree", "pid"} {
		if !reflect.DeepEqual(before[k], after[k]) {
			t.Errorf("respawn changed %s: %#v -> %#v", k, before[k], after[k])
		}
	}
	if got := wkWindows(e); !wkSameSet(got, []string{"keeper", "r"}) {
		t.Errorf("windows after respawn: %q", got)
	}

	// a restart that fails keeps the record
	gone := filepath.Join(t.TempDir(), "gone")
	os.Mkdir(gone, 0o755)
	e.MustRun("spawn", "--name", "g", "--tmux", "--cwd", gone, "--env", "A=1", "--tag", "keep", "--", "sleep", "300")
	gBefore := wkRecordOf(e, "g")
	e.MustRun("kill", "g")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	r := e.Run("respawn", "g")
	if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "swarm: error: ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("respawn with a vanished cwd: %s\nwant exit 1 and one error line", r)
	}
	if got := wkNames(t, e); !wkSameSet(got, []string{"keeper", "r", "g"}) {
		t.Errorf("records after failed respawn: %q", got)
	}
	if c := wkStatusCode(e, "g"); c != 1 {
		t.Errorf("status g after failed respawn: exit %d, want 1 (stopped)", c)
	}
	gAfter := wkRecordOf(e, "g")
	for _, k := range []string{"cmd", "env", "tags", "cwd", "tmux"} {
		if !reflect.DeepEqual(gBefore[k], gAfter[k]) {
			t.Errorf("failed respawn changed %s: %#v -> %#v", k, gBefore[k], gAfter[k])
		}
	}
	if e.WindowID("g") != "" {
		t.Errorf("failed respawn left a window")
	}
	wkExpect(t, "respawn unknown", e.Run("respawn", "nope"), 1, "", "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n")
}

// A corrupt state file whose list holds a byte no value starts with (a
// torn or hand-edited file) is read as corrupt by every command, never
// looped on: ls took the first record's tmux server from it by a quick
// look that went round forever on such a byte.
func TestWorkerCorruptStateEndsEveryLook(t *testing.T) {
	t.Parallel()
	for i, garbage := range []string{
		`[{"name": "a", "tmux": {"session": "s", "window": "a"}}, nul}]`,
		`{"workers": [{"name": "a", "tmux": {"session": "s", "window": "a"}}, :]}`,
		`{"workers": [1}`,
		`{"x": }, "workers": []}`,
	} {
		e := testenv.New(t)
		if err := os.MkdirAll(e.Home, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(e.Home, "state.json")
		if err := os.WriteFile(path, []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"ls"}, {"ls", "--format", "json"}, {"status", "a"}} {
			cmd, out, errb := e.Start(args...)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill() // gone already is fine: the test fails either way
				<-done
				t.Fatalf("file %d: swarm %v did not end within 20s on %q", i, args, garbage)
			}
			if !strings.Contains(errb.String(), "corrupt state file "+path) {
				t.Errorf("file %d: swarm %v: stdout %q, stderr %q; want the corrupt-file warning", i, args, out, errb)
			}
		}
		if data, _ := os.ReadFile(path); string(data) != garbage {
			t.Errorf("file %d: a look changed the state file: %q", i, data)
		}
	}
}

func TestWorkerCorruptState(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := "{\"workers\": [ garbage, not json\x00\n"
	if err := os.WriteFile(filepath.Join(e.Home, "state.json"), []byte(garbage), 0o600); err != nil {
		t.Fatal(err)
	}
	// A read never changes the state: ls warns, backs the file up (as
	// swarm.py's ls does) and leaves it in place (a torn file from a
	// non-atomic writer must not be thrown away by a look at it).
	path := filepath.Join(e.Home, "state.json")
	wkExpect(t, "ls on garbage state", e.Run("ls"), 0, "", "swarm: warning: corrupt state file "+path+" (backed up to "+path+".corrupted), read as empty; the next change resets it\n")
	if data, _ := os.ReadFile(path); string(data) != garbage {
		t.Errorf("ls changed the state file: %q", data)
	}
	if data, _ := os.ReadFile(path + ".corrupted"); string(data) != garbage {
		t.Errorf("ls did not back the state file up: %q", data)
	}
	// The next change backs it up and resets it.
	r := e.Run("spawn", "--name", "after", "--tmux", "--", "sleep", "300")
	wkExpect(t, "spawn after reset", r, 0, wkSpawnedTmux(e, "after"), "swarm: warning: corrupt state file, resetting\n")
	data, err := os.ReadFile(filepath.Join(e.Home, "state.json.corrupted"))
	if err != nil || string(data) != garbage {
		t.Errorf("state.json.corrupted = %q, %v; want the garbage", data, err)
	}
	if got := wkNames(t, e); !reflect.DeepEqual(got, []string{"after"}) {
		t.Errorf("ls after reset: %q", got)
	}
	if len(e.Workers()) != 1 {
		t.Errorf("state.json records: %v", e.Workers())
	}
}

// State written by swarm.py: zone-less isoformat timestamps (local time),
// null socket and pid.
func TestWorkerPythonState(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.Extra = append(e.Extra, "TZ=Asia/Tokyo")
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	py := `{"workers": [
  {"name": "pyw", "status": "running", "cmd": ["claude", "--model", "x"], "started": "2024-01-15T10:30:00.123456",
   "cwd": "` + e.Dir + `", "env": {"A": "b c"}, "tags": ["py"],
   "tmux": {"session": "swarm", "window": "pyw", "socket": null}, "worktree": null, "pid": null, "metadata": {}},
  {"name": "pyp", "status": "running", "cmd": ["python", "x.py"], "started": "2024-01-15T10:30:00",
   "cwd": "` + e.Dir + `", "env": {}, "tags": [],
   "tmux": null, "worktree": null, "pid": 2147483600, "metadata": {}}
]}`
	if err := os.WriteFile(filepath.Join(e.Home, "state.json"), []byte(py), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.Run("ls", "--format", "json")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("ls --format json on swarm.py state: %s", r)
	}
	recs := wkLsJSON(t, e)
	byName := map[string]map[string]any{}
	for _, rec := range recs {
		byName[rec["name"].(string)] = rec
	}
	w, p := byName["pyw"], byName["pyp"]
	if len(recs) != 2 || w == nil || p == nil {
		t.Fatalf("ls json: %v", recs)
	}
	if w["status"] != "stopped" || p["status"] != "stopped" {
		t.Errorf("live status: pyw %v, pyp %v; want stopped", w["status"], p["status"])
	}
	if !reflect.DeepEqual(w["cmd"], []any{"claude", "--model", "x"}) || !reflect.DeepEqual(w["env"], map[string]any{"A": "b c"}) ||
		!reflect.DeepEqual(w["tags"], []any{"py"}) || w["pid"] != nil {
		t.Errorf("pyw record: %v", w)
	}
	if want := map[string]any{"session": "swarm", "window": "pyw", "socket": nil}; !reflect.DeepEqual(w["tmux"], want) {
		t.Errorf("pyw tmux: %#v, want %#v", w["tmux"], want)
	}
	if p["pid"] != float64(2147483600) || p["tmux"] != nil {
		t.Errorf("pyp record: %v", p)
	}
	// zone-less times are local time and written back as swarm.py wrote
	// them (TZ=Asia/Tokyo, +09:00): unchanged text.
	for name, want := range map[string]string{"pyw": "2024-01-15T10:30:00.123456", "pyp": "2024-01-15T10:30:00"} {
		if st, _ := byName[name]["started"].(string); st != want {
			t.Errorf("%s started %q, want %q (swarm.py's text, kept)", name, st, want)
		}
	}

	r = e.Run("status", "pyw")
	if !strings.HasPrefix(r.Stdout, "pyw: stopped (tmux window swarm:pyw, uptime ") || r.Code != 1 || r.Stderr != "" {
		t.Errorf("status pyw: %s", r)
	}
	r = e.Run("status", "pyp")
	if !strings.HasPrefix(r.Stdout, "pyp: stopped (pid 2147483600, uptime ") || r.Code != 1 || r.Stderr != "" {
		t.Errorf("status pyp: %s", r)
	}
	rows := wkLsRows(t, e)
	if len(rows) != 3 {
		t.Errorf("ls table on swarm.py state: %q", rows)
	}
	// and the records survive a rewrite by swarm
	e.MustRun("spawn", "--name", "new", "--", "sleep", "300")
	if got := wkNames(t, e); !wkSameSet(got, []string{"pyw", "pyp", "new"}) {
		t.Errorf("names after spawn: %q", got)
	}
	e.MustRun("clean", "pyw")
	if got := wkNames(t, e); !wkSameSet(got, []string{"pyp", "new"}) {
		t.Errorf("names after clean pyw: %q", got)
	}
}

// Bad command lines fail with the right code and message and change
// nothing.
func TestWorkerBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	wkSpawnProcess(t, e, "--name", "p", "--", "sleep", "300")
	before := e.Workers()
	windows := wkWindows(e)
	stateFile := filepath.Join(e.Home, "state.json")
	logs := func() []string {
		ents, _ := os.ReadDir(filepath.Join(e.Home, "logs"))
		var n []string
		for _, d := range ents {
			n = append(n, d.Name())
		}
		return n
	}
	logsBefore := logs()
	outside := t.TempDir()

	cases := []struct {
		args   []string
		dir    string
		code   int
		stderr string // exact; "" means: any single "swarm: error: " line
	}{
		{args: []string{"ls", "--bogus"}, code: 2},
		{args: []string{"spawn", "--bogus", "--name", "x", "--", "sleep", "1"}, code: 2},
		{args: []string{"spawn", "--name", "x", "--tmux"}, code: 1, stderr: "swarm: error: no command provided (use -- command...)\n"},
		{args: []string{"spawn", "--name", "x"}, code: 1, stderr: "swarm: error: no command provided (use -- command...)\n"},
		{args: []string{"spawn", "--tmux", "--", "sleep", "300"}, code: 2},
		{args: []string{"spawn", "--name", "w", "--tmux", "--", "sleep", "300"}, code: 1, stderr: "swarm: error: worker 'w' already exists\nhint: remove the old one first: swarm kill w; swarm clean w (or pick another --name)\n"},
		{args: []string{"spawn", "--name", "p", "--", "sleep", "300"}, code: 1, stderr: "swarm: error: worker 'p' already exists\nhint: remove the old one first: swarm kill p; swarm clean p (or pick another --name)\n"},
		{args: []string{"spawn", "--name", "x", "--env", "NOEQUALS", "--", "sleep", "300"}, code: 1, stderr: "swarm: error: invalid env format 'NOEQUALS' (expected KEY=VAL)\n"},
		{args: []string{"spawn", "--name", "x", "--tmux", "--env", "=v", "--", "sleep", "300"}, code: 1, stderr: "swarm: error: invalid env format '=v' (expected KEY=VAL)\n"},
		{args: []string{"spawn", "--name", "x", "--tmux", "--worktree", "--", "sleep", "300"}, dir: outside, code: 1, stderr: "swarm: error: not in a git repository (required for --worktree)\nhint: run it inside a git repository, or without a worktree (--no-worktree for ralph spawn)\n"},
		{args: []string{"send"}, code: 2},
		{args: []string{"send", "w"}, code: 2},
		{args: []string{"status"}, code: 2},
		{args: []string{"peek", "p"}, code: 1, stderr: "swarm: error: worker 'p' is not a tmux worker\nhint: its output is in its log: swarm logs p\n"},
		{args: []string{"clean", "w"}, code: 1, stderr: "swarm: error: cannot clean running worker 'w'\nhint: swarm kill w, then swarm clean w\n"},
		{args: []string{"clean", "p"}, code: 1, stderr: "swarm: error: cannot clean running worker 'p'\nhint: swarm kill p, then swarm clean p\n"},
		{args: []string{"kill", "nope"}, code: 1, stderr: "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n"},
		{args: []string{"nosuchcommand"}, code: 2},
	}
	for _, c := range cases {
		dir := c.dir
		if dir == "" {
			dir = e.Dir
		}
		r := e.RunIn(dir, c.args...)
		okErr := c.stderr == r.Stderr
		if c.stderr == "" {
			// One error line, and at most one hint line after it.
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			okErr = strings.HasPrefix(r.Stderr, "swarm: error: ") && strings.HasSuffix(r.Stderr, "\n") &&
				(len(lines) == 1 || len(lines) == 2 && strings.HasPrefix(lines[1], "hint: "))
		}
		if r.Code != c.code || r.Stdout != "" || !okErr {
			t.Errorf("swarm %q: %s\nwant exit %d, no stdout, stderr %q", c.args, r, c.code, c.stderr)
		}
		if got := e.Workers(); !reflect.DeepEqual(got, before) {
			t.Errorf("swarm %q changed state.json:\n%v\nwas:\n%v", c.args, got, before)
		}
		if got := wkWindows(e); !reflect.DeepEqual(got, windows) {
			t.Errorf("swarm %q changed the windows: %q, was %q", c.args, got, windows)
		}
		if got := logs(); !reflect.DeepEqual(got, logsBefore) {
			t.Errorf("swarm %q changed logs/: %q, was %q", c.args, got, logsBefore)
		}
	}
	if fi, err := os.Stat(stateFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state.json: %v %v", fi, err)
	}
	if wkStatusCode(e, "w") != 0 || wkStatusCode(e, "p") != 0 {
		t.Errorf("a failed command stopped a worker")
	}
}

// Killing the only worker window ends the tmux server with it; kill must
// still succeed, and so must killing a worker whose window is already gone
// (docs/commands.md, kill).
func TestWorkerKillLastWindow(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("only%d", i)
		cmd := []string{"sleep", "300"}
		if i%2 == 1 {
			cmd = []string{e.Agent, "--input", "none", "--script", "print up;quiet"}
		}
		e.MustRun(append([]string{"spawn", "--name", name, "--tmux", "--"}, cmd...)...)
		wkExpect(t, "kill "+name+" (the only window)", e.Run("kill", name), 0, "killed "+name+"\n", "")
		if c := wkStatusCode(e, name); c != 1 {
			t.Errorf("status %s after kill: exit %d, want 1", name, c)
		}
	}
	// a window closed behind swarm's back
	e.MustRun("spawn", "--name", "gone", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "stays", "--tmux", "--", "sleep", "300")
	if out, err := e.Tmux("kill-window", "-t", e.WindowID("gone")); err != nil {
		t.Fatalf("kill-window: %v %s", err, out)
	}
	wkWaitStopped(t, e, "gone")
	wkExpect(t, "kill a worker whose window vanished", e.Run("kill", "gone"), 0, "killed gone\n", "")
	wkExpect(t, "clean gone", e.Run("clean", "gone"), 0, "cleaned gone\n", "")
	if wkStatusCode(e, "stays") != 0 {
		t.Errorf("stays stopped")
	}
}

// kill --all and clean --all act on every worker and never lose a record
// added while they run (docs/state.md: every change is locked); a window
// the user made is left alone.
func TestWorkerKillAllCleanAll(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "a", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "b", "--tmux", "--", e.Agent, "--input", "none", "--script", "quiet")
	pid := wkSpawnProcess(t, e, "--name", "p", "--", "sleep", "300")
	if out, err := e.Tmux("new-window", "-d", "-t", "="+wkSession(e)+":", "-n", "userwin", "sleep", "300"); err != nil {
		t.Fatalf("user window: %v %s", err, out)
	}

	cmd, out, errb := e.Start("kill", "--all")
	late := e.Run("spawn", "--name", "late", "--", "sleep", "300")
	err := cmd.Wait()
	if err != nil || errb.String() != "" {
		t.Errorf("kill --all: %v, stderr %q", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, n := range []string{"a", "b", "p"} {
		if !slices.Contains(lines, "killed "+n) {
			t.Errorf("kill --all output %q lacks 'killed %s'", lines, n)
		}
		if c := wkStatusCode(e, n); c != 1 {
			t.Errorf("status %s after kill --all: exit %d", n, c)
		}
	}
	e.Eventually("process worker to die", wkTimeout, func() bool { return !wkAlive(pid) })
	if late.Code != 0 || wkRecordOf(e, "late") == nil {
		t.Errorf("spawn during kill --all: %s; record %v", late, wkRecordOf(e, "late"))
	}
	if e.WindowID("userwin") == "" {
		t.Errorf("kill --all removed a window that is not a worker")
	}
	e.Run("kill", "late")

	cmd, out, errb = e.Start("clean", "--all")
	late2 := e.Run("spawn", "--name", "late2", "--tmux", "--", "sleep", "300")
	err = cmd.Wait()
	if err != nil || errb.String() != "" {
		t.Errorf("clean --all: %v, stderr %q", err, errb.String())
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, n := range []string{"a", "b", "p", "late"} {
		if !slices.Contains(lines, "cleaned "+n) {
			t.Errorf("clean --all output %q lacks 'cleaned %s'", lines, n)
		}
	}
	if late2.Code != 0 {
		t.Errorf("spawn during clean --all: %s", late2)
	}
	if got := wkNames(t, e); !reflect.DeepEqual(got, []string{"late2"}) {
		t.Errorf("records after clean --all: %q, want [late2]", got)
	}
	if wkStatusCode(e, "late2") != 0 {
		t.Errorf("clean --all stopped a running worker")
	}
}

// A process worker's exit code is recorded, as a tmux worker's is: ls
// shows stopped(N) (json: exit_code), status "exit N"; and a stopped
// worker's status says how long it ran, a time that no longer grows. The
// command runs as it would unsupervised: the pid spawn prints is its own,
// with its own argv, environment and stdin, and kill stops it and its
// children (exit 143: SIGTERM).
func TestWorkerProcessExitCode(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	statusRe := func(name string, pid int, code int) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`^%s: stopped \(pid %d, ran \d+s, exit %d\)\n$`, name, pid, code))
	}

	pid := wkSpawnProcess(t, e, "--name", "three", "--", e.Agent, "--input", "none", "--script", "print bye;exit 3")
	var line string
	e.Eventually("status to say that three exited 3", wkTimeout, func() bool {
		r := e.Run("status", "three")
		line = r.Stdout
		return r.Code == 1 && statusRe("three", pid, 3).MatchString(line)
	})
	rows := wkLsRows(t, e)
	if len(rows) != 2 {
		t.Fatalf("ls rows %q", rows)
	}
	wkCheckRow(t, rows[1], "three", "stopped(3)", fmt.Sprint(pid), "-", "-")
	if recs := wkLsJSON(t, e); len(recs) != 1 || recs[0]["exit_code"] != float64(3) || recs[0]["status"] != "stopped" {
		t.Errorf("ls --format json: %v, want exit_code 3", recs)
	}
	// How long it ran does not grow with time (an uptime would).
	seen := time.Now()
	e.Eventually("two seconds to pass", wkTimeout, func() bool { return time.Since(seen) > 2100*time.Millisecond })
	if r := e.Run("status", "three"); r.Stdout != line {
		t.Errorf("status of a stopped worker changed with time: %q, then %q", line, r.Stdout)
	}

	// A long runner: argv, environment and stdin are the command's own.
	childFile := filepath.Join(t.TempDir(), "child.pid")
	argv := []string{e.Agent, "--input", "none", "--script", "env MARK;child " + childFile + ";quiet"}
	pid = wkSpawnProcess(t, e, append([]string{"--name", "long", "--env", "MARK=a b", "--"}, argv...)...)
	child := wkReadPid(t, childFile)
	if data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); string(data) != strings.Join(argv, "\x00")+"\x00" {
		t.Errorf("argv of pid %d: %q, want %q", pid, data, argv)
	}
	if in, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid)); in != os.DevNull {
		t.Errorf("stdin of pid %d: %q", pid, in)
	}
	e.Eventually("the log to show the environment", wkTimeout, func() bool {
		return strings.Contains(e.Run("logs", "long").Stdout, "MARK=a b\n")
	})
	wkExpect(t, "kill long", e.Run("kill", "long"), 0, "killed long\n", "")
	e.Eventually("the worker and its child to die", wkTimeout, func() bool { return !wkAlive(pid) && !wkAlive(child) })
	e.Eventually("status to say that long was killed", wkTimeout, func() bool {
		return statusRe("long", pid, 143).MatchString(e.Run("status", "long").Stdout)
	})

	// clean removes the record of the end with the logs; a respawn's
	// process has an end of its own.
	pid = wkSpawnProcess(t, e, "--name", "again", "--", "sh", "-c", "exit 4")
	e.Eventually("again to exit 4", wkTimeout, func() bool { return statusRe("again", pid, 4).MatchString(e.Run("status", "again").Stdout) })
	r := e.MustRun("respawn", "again")
	var pid2 int
	if _, err := fmt.Sscanf(r.Stdout, "respawned again (pid: %d)\n", &pid2); err != nil || pid2 == pid {
		t.Fatalf("respawn: %s", r)
	}
	e.Eventually("the respawned again to exit 4", wkTimeout, func() bool {
		return statusRe("again", pid2, 4).MatchString(e.Run("status", "again").Stdout)
	})
	for _, name := range []string{"three", "long", "again"} {
		e.MustRun("clean", name)
		if wkExists(filepath.Join(e.Home, "logs", name+".exit")) {
			t.Errorf("clean %s left its exit record", name)
		}
	}
}

// A tmux worker whose command exited says how long it ran and its exit
// code, from the record its window's shell writes (tmux 3.3 keeps a dead
// pane's status and time only now and then), not an uptime that keeps
// growing.
func TestWorkerTmuxStoppedSaysHowLongItRan(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// k keeps the server up after d's command exits.
	e.MustRun("spawn", "--name", "k", "--tmux", "--", e.Agent, "--input", "none", "--script", "quiet")
	e.MustRun("spawn", "--name", "d", "--tmux", "--", e.Agent, "--input", "none", "--script", "print bye;sleep 1200ms;exit 3")
	// 1.2 s, between times kept to the second.
	ran := regexp.MustCompile(`^d: stopped \(tmux window [^,]+:d, ran [12]s, exit 3\)\n$`)
	var line string
	defer func() {
		if t.Failed() {
			t.Logf("last status: %q", line)
		}
	}()
	e.Eventually("status to say how long d ran", wkTimeout, func() bool {
		r := e.Run("status", "d")
		line = r.Stdout
		return r.Code == 1 && ran.MatchString(line)
	})
	seen := time.Now()
	e.Eventually("two seconds to pass", wkTimeout, func() bool { return time.Since(seen) > 2100*time.Millisecond })
	if r := e.Run("status", "d"); r.Stdout != line {
		t.Errorf("status of a stopped worker changed with time: %q, then %q", line, r.Stdout)
	}
}
