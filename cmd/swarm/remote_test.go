package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/sshtest"
	"github.com/swarmtools/swarm/internal/testenv"
)

// fleet is a machine A (local) and hosts reached over real OpenSSH: one
// sshd per host on its own loopback address, each host with its own
// state root and tmux server, its swarm the binary under test.
type fleet struct {
	local   *testenv.Env
	hosts   map[string]*testenv.Env
	servers map[string]*sshtest.Server
	keys    *sshtest.Keys
}

func newFleet(t *testing.T, names ...string) *fleet {
	t.Helper()
	sshtest.Require(t)
	fl := &fleet{local: testenv.New(t), hosts: map[string]*testenv.Env{}, servers: map[string]*sshtest.Server{}}
	var servers []*sshtest.Server
	fl.keys, servers = sshtest.New(t, names...)
	fl.local.Extra = append(fl.local.Extra, "SWARM_SSH_CONFIG="+fl.keys.ConfigFile)
	for i, n := range names {
		e := testenv.New(t)
		fl.hosts[n], fl.servers[n] = e, servers[i]
		fl.local.MustRun("hosts", "add", n, servers[i].Alias, "--swarm", e.Swarm, "--state-root", e.Home,
			"--tmux-socket", e.Socket, "--env", "SWARM_POLL_INTERVAL=100ms")
	}
	t.Cleanup(fl.closeMasters)
	return fl
}

// closeMasters ends the shared connections the test's commands left.
func (fl *fleet) closeMasters() {
	ents, _ := os.ReadDir(filepath.Join(fl.local.Home, "ssh"))
	for _, e := range ents {
		sock := filepath.Join(fl.local.Home, "ssh", e.Name())
		cmd := []string{"-F", fl.keys.ConfigFile, "-o", "ControlPath=" + sock, "-O", "exit", "x"}
		runQuiet("ssh", cmd...)
	}
}

// jsonRows decodes a listing's JSON.
func jsonRows(t *testing.T, r testenv.Result) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r)
	}
	return rows
}

// findRow returns the first row whose keys have the values given.
func findRow(rows []map[string]any, kv ...string) map[string]any {
	for _, r := range rows {
		ok := true
		for i := 0; i < len(kv); i += 2 {
			if fmt.Sprint(r[kv[i]]) != kv[i+1] {
				ok = false
			}
		}
		if ok {
			return r
		}
	}
	return nil
}

// tableRow returns the fields of the first line of a table whose first
// fields are prefix.
func tableRow(out string, prefix ...string) []string {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= len(prefix) && strings.Join(f[:len(prefix)], " ") == strings.Join(prefix, " ") {
			return f
		}
	}
	return nil
}

// A loop spawned on host B from A, with a prompt file of A's: seen in ls
// --all-hosts and top --all-hosts --once, peeked at, sent to, killed.
func TestRemoteLoopLifecycle(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	prompt := "fix it's $HOME; `id` \"now\""
	promptFile := a.WriteFile("my prompt.md", prompt)
	rec := filepath.Join(b.Dir, "rec")
	a.MustRun("ralph", "spawn", "--host", "b", "--name", "w", "--prompt-file", promptFile, "--no-worktree",
		"--cwd", b.Dir, "--max-iterations", "3", "--", a.Agent, "--record", rec, "--script", "print working;wait")
	a.Eventually("the prompt to reach the agent on b", wkTimeout, func() bool {
		m := testenv.Messages(t, rec)
		return len(m) == 1 && m[0] == prompt
	})
	if st := b.RalphState("w"); st == nil || !strings.HasPrefix(fmt.Sprint(st["prompt_file"]), filepath.Join(b.Home, "prompts")+"/") {
		t.Errorf("the loop's prompt file should be the copy under b's state root: %v", st["prompt_file"])
	}

	r := a.MustRun("ls", "--all-hosts")
	if row := tableRow(r.Stdout, "b", "w"); row == nil || row[2] != "running" {
		t.Errorf("ls --all-hosts: no running row b w\n%s", r)
	}
	rows := jsonRows(t, a.MustRun("ls", "--all-hosts", "--format", "json"))
	if findRow(rows, "host", "b", "name", "w", "status", "running") == nil {
		t.Errorf("ls --all-hosts --format json: no row of w with host b: %v", rows)
	}
	r = a.MustRun("top", "--all-hosts", "--once")
	if row := tableRow(r.Stdout, "b", "w"); row == nil || row[2] != "loop" || row[3] != "running" {
		t.Errorf("top --all-hosts --once: no running loop row b w\n%s", r)
	}
	a.Eventually("peek b:w shows the agent", wkTimeout, func() bool {
		return strings.Contains(a.Run("peek", "b:w").Stdout, "working")
	})

	hostile := `it's $HOME; echo injected "quoted" \back`
	if r := a.Run("send", "b:w", hostile); r.Code != 0 || r.Stdout != "sent to w\n" {
		t.Fatalf("send b:w: %s", r)
	}
	a.Eventually("the sent text to arrive intact", wkTimeout, func() bool {
		m := testenv.Messages(t, rec)
		return len(m) == 2 && m[1] == hostile
	})

	if r := a.Run("kill", "b:w"); r.Code != 0 || r.Stdout != "killed w\n" {
		t.Fatalf("kill b:w: %s", r)
	}
	if r := b.Run("status", "w"); r.Code != 1 {
		t.Errorf("status on b after kill b:w: %s", r)
	}
	if st := b.RalphState("w"); st["status"] == "running" {
		t.Errorf("the loop still runs after kill b:w: %v", st["status"])
	}
}

// A loop on B that completes: ralph wait B:w returns its code, and top
// --all-hosts shows it; the remote's exit codes come back as they are.
func TestRemoteLoopCompletes(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	promptFile := a.WriteFile("PROMPT.md", "work")
	a.MustRun("ralph", "spawn", "--host", "b", "--name", "done", "--prompt-file", promptFile, "--no-worktree",
		"--cwd", b.Dir, "--max-iterations", "3", "--", a.Agent, "--script", "print <promise>COMPLETE</promise>;quiet")
	r := a.Run("ralph", "wait", "b:done", "--timeout", "60")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "done: complete after 1 iterations") {
		t.Fatalf("ralph wait b:done: %s", r)
	}
	r = a.MustRun("top", "--all-hosts", "--once")
	if row := tableRow(r.Stdout, "b", "done", "loop"); row == nil || !strings.Contains(strings.Join(row, " "), " complete ") {
		t.Errorf("top --all-hosts --once: no complete loop b done\n%s", r)
	}
	r = a.MustRun("ralph", "ls", "--hosts", "b", "--format", "json")
	if findRow(jsonRows(t, r), "host", "b", "worker_name", "done", "exit_reason", "complete") == nil {
		t.Errorf("ralph ls --hosts b: %s", r)
	}
	if r := a.Run("status", "b:nope"); r.Code != 2 || !strings.Contains(r.Stderr, "worker 'nope' not found") {
		t.Errorf("status b:nope: want the remote's exit 2 and message: %s", r)
	}
	if r := a.Run("peek", "--host", "c", "x"); r.Code != 1 || !strings.Contains(r.Stderr, "unknown host 'c'") {
		t.Errorf("peek on an unknown host: %s", r)
	}
}

// With B's sshd stopped (and a host that accepts connections but never
// answers), ls --all-hosts answers within the connect timeout, marks them
// unreachable and lists the rest.
func TestRemoteUnreachableHost(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b", "c")
	a := fl.local
	a.MustRun("spawn", "--name", "mine", "--tmux", "--", "sleep", "300")
	a.MustRun("spawn", "--host", "c", "--name", "theirs", "--tmux", "--", "sleep", "300")
	a.MustRun("ls", "--all-hosts") // shared connections up to both
	fl.servers["b"].Stop()
	silentPort := sshtest.Silent(t, "127.0.0.9")
	a.MustRun("hosts", "add", "mute", "127.0.0.9", "--ssh-option", "Port="+strconv.Itoa(silentPort))

	start := time.Now()
	r := a.Run("ls", "--all-hosts", "--connect-timeout", "3s")
	took := time.Since(start)
	if took > 8*time.Second {
		t.Errorf("ls --all-hosts took %s with a 3s connect timeout", took)
	}
	if r.Code != 1 {
		t.Errorf("ls --all-hosts with unreachable hosts: exit %d, want 1\n%s", r.Code, r)
	}
	for _, h := range []string{"b", "mute"} {
		if row := tableRow(r.Stdout, h); row == nil || row[2] != "unreachable" {
			t.Errorf("no unreachable row for %s\n%s", h, r)
		}
		if !strings.Contains(r.Stderr, "swarm: warning: host "+h+": unreachable: ") {
			t.Errorf("no warning for %s\n%s", h, r)
		}
	}
	if tableRow(r.Stdout, "local", "mine") == nil || tableRow(r.Stdout, "c", "theirs") == nil {
		t.Errorf("the reachable hosts' rows are missing\n%s", r)
	}
	rows := jsonRows(t, a.Run("ls", "--all-hosts", "--format", "json", "--connect-timeout", "3s"))
	if row := findRow(rows, "host", "b", "status", "unreachable"); row == nil || !strings.Contains(fmt.Sprint(row["error"]), "unreachable") {
		t.Errorf("JSON: no unreachable object for b: %v", rows)
	}
	r = a.Run("top", "--all-hosts", "--once", "--connect-timeout", "3s")
	if row := tableRow(r.Stdout, "b", "-", "host"); row == nil || row[3] != "unreachable" {
		t.Errorf("top --once: no unreachable row for b\n%s", r)
	}
}

// Arguments with spaces, quotes, $, ; and backquotes reach the host's
// command as typed: the command line is quoted once for the remote shell.
func TestRemoteHostileArguments(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	out := filepath.Join(b.Dir, "argv out")
	args := []string{"a b", "it's", "$HOME", "x; touch pwned", "`touch pwned2`", `back\slash`, "*", "-n", ""}
	script := `for a in "$@"; do printf '%s\n' "$a"; done > "$0"; printf 'K=%s\n' "$K" >> "$0"; sleep 300`
	spawn := append([]string{"spawn", "--host", "b", "--name", "h", "--tmux", "--env", "K=v $PATH; 'q'", "--cwd", b.Dir,
		"--", "sh", "-c", script, out}, args...)
	a.MustRun(spawn...)
	want := strings.Join(args, "\n") + "\nK=v $PATH; 'q'\n"
	a.Eventually("the worker's argv file", wkTimeout, func() bool {
		data, _ := os.ReadFile(out)
		return string(data) == want
	})
	for _, f := range []string{"pwned", "pwned2"} {
		for _, dir := range []string{a.Dir, b.Dir, os.Getenv("HOME")} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("an argument ran as a command: %s", filepath.Join(dir, f))
			}
		}
	}
}

// 50 hosts that share one sshd (and so one connection) are listed at
// once without going past sshd's MaxSessions: at most a few sessions run
// at a time on the connection (the remote swarm counts itself in).
func TestRemoteFanoutOf50Hosts(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	b.MustRun("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "swarm-counting")
	testenv.WriteExecutable(t, wrapper, fmt.Sprintf(`#!/bin/sh
exec 9>>%[1]s/lock
flock 9; n=$(( $(cat %[1]s/n 2>/dev/null || echo 0) + 1 )); echo $n > %[1]s/n; echo $n >> %[1]s/seen; flock -u 9
%[2]s "$@"; rc=$?
flock 9; n=$(( $(cat %[1]s/n) - 1 )); echo $n > %[1]s/n; flock -u 9
exit $rc
`, dir, b.Swarm))
	for i := 0; i < 50; i++ {
		a.MustRun("hosts", "add", fmt.Sprintf("h%02d", i), fl.servers["b"].Alias, "--swarm", wrapper,
			"--state-root", b.Home, "--tmux-socket", b.Socket)
	}
	r := a.Run("ls", "--all-hosts", "--format", "json", "--connect-timeout", "20s")
	rows := jsonRows(t, r)
	for i := 0; i < 50; i++ {
		if findRow(rows, "host", fmt.Sprintf("h%02d", i), "name", "w", "status", "running") == nil {
			t.Errorf("h%02d: no row of w\n%s", i, r.Stderr)
		}
	}
	seen, _ := os.ReadFile(filepath.Join(dir, "seen"))
	most := 0
	for _, f := range strings.Fields(string(seen)) {
		n, _ := strconv.Atoi(f)
		most = max(most, n)
	}
	if n := len(strings.Fields(string(seen))); n != 50 || most > 4 {
		t.Errorf("%d remote swarms ran, at most %d at once; want 50, at most 4 (sshd's MaxSessions is 10)", n, most)
	}
}

func TestHostsAddRmLsCheck(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"hosts", "add", "x", "--", "-oProxyCommand=touch /tmp/x"}, "invalid ssh target '-oProxyCommand=touch /tmp/x': it starts with '-'"},
		{[]string{"hosts", "add", "local", "h"}, "invalid host name 'local'"},
		{[]string{"hosts", "add", "a:b", "h"}, "invalid host name 'a:b'"},
		{[]string{"hosts", "add", "x", "h", "--ssh-option", "-oFoo"}, "invalid ssh option '-oFoo'"},
		{[]string{"hosts", "add", "x", "h", "--env", "1X=y"}, "invalid environment variable '1X=y'"},
		{[]string{"hosts", "add", "b", "other"}, "host 'b' exists (" + fl.servers["b"].Alias + ")"},
		{[]string{"hosts", "rm", "nope"}, "unknown host 'nope'"},
	} {
		before, _ := os.ReadFile(filepath.Join(a.Home, "hosts.json"))
		r := a.Run(tc.args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: "+tc.err) {
			t.Errorf("%q: %s\nwant exit 1 and %q", tc.args, r, tc.err)
		}
		if after, _ := os.ReadFile(filepath.Join(a.Home, "hosts.json")); string(after) != string(before) {
			t.Errorf("%q changed hosts.json", tc.args)
		}
	}
	r := a.MustRun("hosts", "ls", "--format", "json")
	if rows := jsonRows(t, r); len(rows) != 1 || rows[0]["name"] != "b" || rows[0]["state_root"] != b.Home {
		t.Errorf("hosts ls --format json: %s", r)
	}
	r = a.MustRun("hosts", "check")
	if row := tableRow(r.Stdout, "b", "yes", "swarm"); row == nil || !strings.Contains(r.Stdout, "tmux ") || !strings.Contains(r.Stdout, "git version") {
		t.Errorf("hosts check: %s", r)
	}
	a.MustRun("hosts", "add", "gone", "127.0.0.1", "--ssh-option", "Port=1")
	if r := a.Run("hosts", "check", "gone"); r.Code != 1 || tableRow(r.Stdout, "gone", "no:") == nil {
		t.Errorf("hosts check of a host that refuses connections: %s", r)
	}
	if r := a.MustRun("hosts", "rm", "gone"); r.Stdout != "removed host gone\n" {
		t.Errorf("hosts rm: %s", r)
	}
}

// hosts install copies this binary to the host's --swarm path, checks it,
// leaves the same binary alone, and replaces another one only with
// --force.
func TestHostsInstall(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a := fl.local
	dest := filepath.Join(t.TempDir(), "bin dir", "swarm")
	a.MustRun("hosts", "add", "fresh", fl.servers["b"].Alias, "--swarm", dest)
	if r := a.MustRun("hosts", "install", "fresh"); !strings.Contains(r.Stdout, "fresh: installed swarm ") {
		t.Errorf("first install: %s", r)
	}
	self, _ := os.ReadFile(a.Swarm)
	got, _ := os.ReadFile(dest)
	if sha256.Sum256(got) != sha256.Sum256(self) {
		t.Fatal("the installed file is not this binary")
	}
	if fi, _ := os.Stat(dest); fi.Mode().Perm() != 0o755 {
		t.Errorf("installed mode %v", fi.Mode())
	}
	if r := a.MustRun("hosts", "install", "fresh"); !strings.Contains(r.Stdout, "is this swarm already") {
		t.Errorf("second install: %s", r)
	}
	os.WriteFile(dest, []byte("#!/bin/sh\necho swarm 0.0.1-other\n"), 0o755)
	r := a.Run("hosts", "install", "fresh")
	if r.Code != 1 || !strings.Contains(r.Stderr, "is another binary (swarm 0.0.1-other)") || !strings.Contains(r.Stderr, "hint: swarm hosts install fresh --force") {
		t.Errorf("install over another binary: %s", r)
	}
	if data, _ := os.ReadFile(dest); !strings.Contains(string(data), "0.0.1-other") {
		t.Error("install without --force replaced another binary")
	}
	if r := a.MustRun("hosts", "install", "fresh", "--force"); !strings.Contains(r.Stdout, "fresh: replaced swarm ") {
		t.Errorf("install --force: %s", r)
	}
	if got, _ := os.ReadFile(dest); sha256.Sum256(got) != sha256.Sum256(self) {
		t.Error("install --force did not put this binary there")
	}
	a.MustRun("hosts", "add", "onpath", fl.servers["b"].Alias)
	if r := a.Run("hosts", "install", "onpath"); r.Code != 1 || !strings.Contains(r.Stderr, "give it a path to install to") {
		t.Errorf("install to a host without a path: %s", r)
	}
}

// runQuiet runs a program, ignoring how it ends.
func runQuiet(name string, args ...string) { exec.Command(name, args...).Run() }

// attach B:w runs ssh -t to the host and attaches there: in a terminal
// (a tmux pane of A's), the agent's screen on B shows; detaching ends it.
func TestRemoteAttach(t *testing.T) {
	t.Parallel()
	fl := newFleet(t, "b")
	a, b := fl.local, fl.hosts["b"]
	a.MustRun("spawn", "--host", "b", "--name", "w", "--tmux", "--cwd", b.Dir, "--", a.Agent, "--banner", "agent on host b", "--input", "none", "--script", "quiet")
	script := fmt.Sprintf("env SWARM_HOME=%s SWARM_SSH_CONFIG=%s %s attach b:w; echo attach-exit=$?; sleep 600",
		wkShellQuote(a.Home), wkShellQuote(fl.keys.ConfigFile), wkShellQuote(a.Swarm))
	if out, err := a.Tmux("new-session", "-d", "-s", "viewer", "-x", "120", "-y", "30", script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	screen := func() string { out, _ := a.Tmux("capture-pane", "-p", "-t", "viewer:0"); return out }
	a.Eventually("b's agent on A's terminal", wkTimeout, func() bool { return strings.Contains(screen(), "agent on host b") })
	// Detach from b's tmux (its prefix is C-b): attach returns 0.
	clients, _ := b.Tmux("list-clients", "-F", "#{client_name}")
	for _, c := range strings.Fields(clients) {
		b.Tmux("detach-client", "-t", c)
	}
	a.Eventually("attach to end", wkTimeout, func() bool { return strings.Contains(screen(), "attach-exit=0") })
}
