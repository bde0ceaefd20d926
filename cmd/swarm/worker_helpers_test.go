package main

// Helpers shared by the worker_*_test.go black-box tests. Every name starts
// with "wk" so it cannot collide with helpers of other test files in this
// package.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/testenv"
)

// wkTimeout bounds every poll in these tests; conditions normally hold
// within a fraction of a second.
const wkTimeout = 15 * time.Second

// wkSession is the default tmux session of an env: swarm-<first 8 hex of
// sha256(absolute state root)> (docs/state.md).
func wkSession(e *testenv.Env) string {
	sum := sha256.Sum256([]byte(e.Home))
	return "swarm-" + hex.EncodeToString(sum[:])[:8]
}

// wkExpect checks a result's exit code, stdout and stderr exactly.
func wkExpect(t *testing.T, what string, r testenv.Result, code int, stdout, stderr string) {
	t.Helper()
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		t.Errorf("%s:\n got: %s\nwant: exit %d\nstdout:\n%s\nstderr:\n%s", what, r, code, stdout, stderr)
	}
}

// wkSpawnedTmux is the exact stdout of a successful tmux spawn.
func wkSpawnedTmux(e *testenv.Env, name string) string {
	return fmt.Sprintf("spawned %s (tmux: %s:%s)\n", name, wkSession(e), name)
}

// wkSpawnProcess spawns a process worker and returns its pid, checking
// the success line.
func wkSpawnProcess(t *testing.T, e *testenv.Env, args ...string) int {
	t.Helper()
	r := e.MustRun(append([]string{"spawn"}, args...)...)
	var name string
	var pid int
	if _, err := fmt.Sscanf(r.Stdout, "spawned %s (pid: %d)\n", &name, &pid); err != nil || pid <= 1 {
		t.Fatalf("unexpected spawn output %q: %v", r.Stdout, err)
	}
	if want := fmt.Sprintf("spawned %s (pid: %d)\n", name, pid); r.Stdout != want || r.Stderr != "" {
		t.Fatalf("spawn output: %s\nwant stdout %q and no stderr", r, want)
	}
	return pid
}

// wkNames runs `ls --format names` with extra args and returns the names.
func wkNames(t *testing.T, e *testenv.Env, args ...string) []string {
	t.Helper()
	r := e.MustRun(append([]string{"ls", "--format", "names"}, args...)...)
	if r.Stderr != "" {
		t.Errorf("ls stderr: %q", r.Stderr)
	}
	return strings.Fields(r.Stdout)
}

// wkSameSet reports whether two name lists hold the same names.
func wkSameSet(a, b []string) bool {
	a = append([]string(nil), a...)
	b = append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// wkStatusCode runs `status name` and returns its exit code.
func wkStatusCode(e *testenv.Env, name string) int {
	return e.Run("status", name).Code
}

// wkWaitStopped polls until `status name` reports stopped (exit 1).
func wkWaitStopped(t *testing.T, e *testenv.Env, name string) {
	t.Helper()
	e.Eventually(name+" to stop", wkTimeout, func() bool { return wkStatusCode(e, name) == 1 })
}

// wkWaitScreen polls until the worker's window shows want.
func wkWaitScreen(t *testing.T, e *testenv.Env, name, want string) {
	t.Helper()
	var last string
	if !clock.Wait(context.Background(), clock.Real, 50*time.Millisecond, wkTimeout, func() bool {
		last = e.Screen(name)
		return strings.Contains(last, want)
	}) {
		t.Fatalf("window %s never showed %q; screen:\n%s", name, want, last)
	}
}

// wkWaitRecords polls until the record file holds n messages and returns
// them.
func wkWaitRecords(t *testing.T, path string, n int) []testenv.Record {
	t.Helper()
	var recs []testenv.Record
	testenv.Eventually(t, fmt.Sprintf("%d recorded message(s) in %s", n, path), wkTimeout, func() bool {
		recs = testenv.Records(t, path)
		return len(recs) >= n
	})
	return recs
}

// wkAlive reports whether pid exists and is not a zombie.
func wkAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	// state is the field after the ")" that ends the command name
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// wkReadPid polls until a pid file written by the fake agent is complete.
func wkReadPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testenv.Eventually(t, "pid file "+path, wkTimeout, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 1
	})
	return pid
}

// wkWindows lists the window names on the env's tmux server (nil when no
// server runs).
func wkWindows(e *testenv.Env) []string {
	out, err := e.Tmux("list-windows", "-a", "-F", "#{window_name}")
	if err != nil {
		return nil
	}
	return strings.Fields(out)
}

// wkServerRunning reports whether the env's private tmux server runs.
func wkServerRunning(e *testenv.Env) bool {
	_, err := e.Tmux("list-sessions")
	return err == nil
}

// wkRecordOf returns the state.json record of name (nil if none).
func wkRecordOf(e *testenv.Env, name string) map[string]any {
	for _, w := range e.Workers() {
		if w["name"] == name {
			return w
		}
	}
	return nil
}

// wkLsJSON runs `ls --format json` and decodes it.
func wkLsJSON(t *testing.T, e *testenv.Env, args ...string) []map[string]any {
	t.Helper()
	r := e.MustRun(append([]string{"ls", "--format", "json"}, args...)...)
	var out []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("ls --format json is not a JSON array: %v\n%s", err, r.Stdout)
	}
	return out
}

// wkShellQuote quotes s for sh.
func wkShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// wkExists reports whether path exists.
func wkExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// wkWorktreePath is the default worktree of name for the repo at e.Dir.
func wkWorktreePath(e *testenv.Env, name string) string {
	return filepath.Join(filepath.Dir(e.Dir), filepath.Base(e.Dir)+"-worktrees", name)
}

// wkBranches lists the local branches of the repo at dir.
func wkBranches(e *testenv.Env, dir string) []string {
	return strings.Fields(e.Git(dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/"))
}

// wkExtraServer registers cleanup for a tmux server the test starts itself
// on socket name: kill it, then remove its socket file.
func wkExtraServer(t *testing.T, name string) {
	t.Cleanup(func() {
		exec.Command("tmux", "-L", name, "kill-server").Run()
		dir := os.Getenv("TMUX_TMPDIR")
		if dir == "" {
			dir = "/tmp"
		}
		os.Remove(filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), name))
	})
}
