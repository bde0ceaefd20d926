package main

// Black-box tests of spawning: names, concurrency, worktrees, ready-wait,
// rollback, and stopping a worker's whole process group (docs/commands.md,
// docs/security.md).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Killing a process worker kills the children it started (docs/commands.md:
// kill signals the process groups).
func TestWorkerKillProcessGroup(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	childPid := filepath.Join(dir, "child.pid")
	pid := wkSpawnProcess(t, e, "--name", "p", "--", e.Agent, "--input", "none", "--script", "child "+childPid+";quiet")
	child := wkReadPid(t, childPid)
	if !wkAlive(child) || !wkAlive(pid) {
		t.Fatalf("agent %d or child %d not running", pid, child)
	}
	wkExpect(t, "kill p", e.Run("kill", "p"), 0, "killed p\n", "")
	e.Eventually(fmt.Sprintf("child %d of the killed process worker to die", child), wkTimeout, func() bool { return !wkAlive(child) })
	e.Eventually("the process worker to die", wkTimeout, func() bool { return !wkAlive(pid) })

	// the same for a tmux worker: the pane's process group is signalled
	tChildPid := filepath.Join(dir, "tchild.pid")
	e.MustRun("spawn", "--name", "keeper", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "w", "--tmux", "--", e.Agent, "--input", "none", "--script", "child "+tChildPid+";quiet")
	tchild := wkReadPid(t, tChildPid)
	wkExpect(t, "kill w", e.Run("kill", "w"), 0, "killed w\n", "")
	e.Eventually(fmt.Sprintf("child %d of the killed tmux worker to die", tchild), wkTimeout, func() bool { return !wkAlive(tchild) })
}

// A worker that ignores SIGTERM is killed with SIGKILL after 5 s.
func TestWorkerKillIgnoresTerm(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	pidFile := filepath.Join(t.TempDir(), "agent.pid")
	pid := wkSpawnProcess(t, e, "--name", "stubborn", "--", e.Agent, "--input", "none", "--pidfile", pidFile, "--script", "ignore-term;print armed;quiet")
	wkReadPid(t, pidFile)
	e.Eventually("the agent to ignore SIGTERM", wkTimeout, func() bool {
		return strings.Contains(e.Run("logs", "stubborn").Stdout, "armed")
	})
	start := time.Now()
	wkExpect(t, "kill stubborn", e.Run("kill", "stubborn"), 0, "killed stubborn\n", "")
	e.Eventually("the stubborn worker to die", wkTimeout, func() bool { return !wkAlive(pid) })
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("killing a SIGTERM-ignoring worker took %v", d)
	}
	if c := wkStatusCode(e, "stubborn"); c != 1 {
		t.Errorf("status after kill: exit %d", c)
	}
}

// 20 concurrent spawns against one state root all succeed and all land in
// state.json (docs/state.md: every change is locked). The burst is repeated on a second tmux
// socket, so the race to start a server and create the session is run
// twice.
func TestWorkerConcurrentSpawns(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	const n = 20
	second := e.Socket + "-b"
	wkExtraServer(t, second)
	var all []string
	for round, socket := range []string{e.Socket, second} {
		results := make([]testenv.Result, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				args := []string{"spawn", "--name", fmt.Sprintf("r%dc%02d", round, i), "--tmux"}
				if round > 0 {
					args = append(args, "--tmux-socket", socket)
				}
				results[i] = e.Run(append(args, "--", "sleep", "300")...)
			}(i)
		}
		wg.Wait()
		var want []string
		for i, r := range results {
			name := fmt.Sprintf("r%dc%02d", round, i)
			want = append(want, name)
			wkExpect(t, "spawn "+name, r, 0, wkSpawnedTmux(e, name), "")
		}
		all = append(all, want...)
		got := wkNames(t, e)
		sort.Strings(got)
		if !reflect.DeepEqual(got, all) {
			t.Errorf("round %d: ls --format names: %q, want %q", round, got, all)
		}
		if len(e.Workers()) != len(all) {
			t.Errorf("round %d: state.json holds %d records, want %d", round, len(e.Workers()), len(all))
		}
		// one window per worker, no stray shell window
		out, _ := exec.Command("tmux", "-L", socket, "list-windows", "-a", "-F", "#{window_name}").Output()
		if w := strings.Fields(string(out)); !wkSameSet(w, want) {
			t.Errorf("round %d: windows on %s: %q", round, socket, w)
		}
	}
	if got := wkNames(t, e, "--status", "running"); len(got) != len(all) {
		t.Errorf("running: %d, want %d", len(got), len(all))
	}
	for _, w := range e.Workers() {
		tm, _ := w["tmux"].(map[string]any)
		if want := map[bool]string{true: e.Socket, false: second}[strings.HasPrefix(w["name"].(string), "r0")]; tm["socket"] != want {
			t.Errorf("%v: socket %v, want %s", w["name"], tm["socket"], want)
		}
	}
}

// Invalid names are rejected before anything is created (docs/security.md,
// "Names are validated before they become paths, branches or targets").
func TestWorkerInvalidNames(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	base := filepath.Dir(e.Dir)
	entriesBefore := wkDirEntries(t, base)
	bad := []string{"../evil", "a/b", "-x", "a b", "123", strings.Repeat("a", 65), "", ".", "..", ".hidden", "a:b", "a.b:c", "é"}
	for _, name := range bad {
		want := fmt.Sprintf("swarm: error: invalid worker name '%s' (use letters, digits, '.', '_', '-'; max 64)\n", name)
		if host, _, ok := strings.Cut(name, ":"); ok {
			// HOST:NAME names a worker on a host (docs/remote.md).
			want = fmt.Sprintf("swarm: error: unknown host '%s'\nhint: swarm hosts ls lists them; swarm hosts add %s USER@MACHINE adds one\n", host, host)
		}
		for _, mode := range [][]string{
			{"--tmux", "--worktree"},
			{"--tmux"},
			{"--worktree"},
			{},
		} {
			args := append(append([]string{"spawn", "--name=" + name}, mode...), "--", "sleep", "300")
			r := e.Run(args...)
			if name == "" && r.Code == 2 {
				continue // an empty --name may be reported as a missing flag
			}
			wkExpect(t, fmt.Sprintf("spawn %q", args[1:]), r, 1, "", want)
		}
	}
	// other commands reject them without touching anything either
	for _, name := range []string{"../evil", "a/b", "-x"} {
		for _, cmd := range [][]string{{"kill", name}, {"clean", name}, {"respawn", name}, {"status", name}} {
			r := e.Run(append(cmd[:1:1], "--", cmd[1])...)
			if r.Code == 0 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "swarm: error: ") {
				t.Errorf("swarm %q: %s", cmd, r)
			}
		}
	}

	if wkExists(filepath.Join(e.Home, "state.json")) && len(e.Workers()) != 0 {
		t.Errorf("records created: %v", e.Workers())
	}
	if wkServerRunning(e) {
		out, _ := e.Tmux("list-windows", "-a")
		t.Errorf("a tmux server was started; windows:\n%s", out)
	}
	if after := wkDirEntries(t, base); !reflect.DeepEqual(after, entriesBefore) {
		t.Errorf("entries next to the repo changed: %q -> %q", entriesBefore, after)
	}
	if b := wkBranches(e, e.Dir); !reflect.DeepEqual(b, []string{"main"}) {
		t.Errorf("branches: %q", b)
	}
	if out := e.Git(e.Dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees:\n%s", out)
	}
	if st := e.Git(e.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("repo changed:\n%s", st)
	}
	logs, _ := os.ReadDir(filepath.Join(e.Home, "logs"))
	if len(logs) != 0 {
		t.Errorf("log files created: %v", logs)
	}
	for _, p := range []string{filepath.Join(base, "evil"), filepath.Join(e.Dir, "a"), filepath.Join(e.Home, "evil")} {
		if wkExists(p) {
			t.Errorf("%s was created", p)
		}
	}

	// the longest valid name, and names with every allowed character
	long := strings.Repeat("b", 64)
	for _, name := range []string{long, "A1._-z", "9lives"} {
		wkExpect(t, "spawn "+name, e.Run("spawn", "--name", name, "--tmux", "--", "sleep", "300"), 0, wkSpawnedTmux(e, name), "")
		if e.WindowID(name) == "" {
			t.Errorf("no window named %s: %q", name, wkWindows(e))
		}
		if c := wkStatusCode(e, name); c != 0 {
			t.Errorf("status %s: exit %d", name, c)
		}
	}
}

func wkDirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		out = append(out, d.Name())
	}
	return out
}

// Worktrees: default path and branch; a dirty worktree survives kill
// --rm-worktree run outside the repo; clean --force-dirty removes it and
// keeps the branch (docs/security.md, "Removing a worktree never loses
// work").
func TestWorkerWorktree(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	outside := t.TempDir()
	e.MustRun("spawn", "--name", "keeper", "--tmux", "--", "sleep", "300")

	path := wkWorktreePath(e, "wk")
	r := e.Run("spawn", "--name", "wk", "--tmux", "--worktree", "--", e.Agent, "--input", "none", "--script", "cwd;quiet")
	wkExpect(t, "spawn --worktree", r, 0, wkSpawnedTmux(e, "wk"), "")
	if !wkExists(filepath.Join(path, "README")) {
		t.Fatalf("worktree not at %s", path)
	}
	if b := strings.TrimSpace(e.Git(path, "branch", "--show-current")); b != "wk" {
		t.Errorf("worktree branch %q, want wk", b)
	}
	wkWaitScreen(t, e, "wk", "CWD="+path+"\n")
	rec := wkRecordOf(e, "wk")
	if want := map[string]any{"path": path, "branch": "wk", "base_repo": e.Dir}; !reflect.DeepEqual(rec["worktree"], want) {
		t.Errorf("worktree record %#v, want %#v", rec["worktree"], want)
	}
	if rec["cwd"] != path {
		t.Errorf("cwd %v, want %s", rec["cwd"], path)
	}
	rows := wkLsRows(t, e)
	found := false
	for _, row := range rows {
		if len(row) > 0 && row[0] == "wk" {
			found = true
			wkCheckRow(t, row, "wk", "running", wkSession(e)+":wk", path, "-")
		}
	}
	if !found {
		t.Errorf("wk not in ls: %q", rows)
	}
	r = e.Run("status", "wk")
	if r.Code != 0 || !strings.Contains(r.Stdout, ", worktree "+path+", uptime ") {
		t.Errorf("status wk: %s", r)
	}

	// dirty it, and kill --rm-worktree from outside the repo
	if err := os.WriteFile(filepath.Join(path, "work.txt"), []byte("unsaved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.RunIn(outside, "kill", "--rm-worktree", "wk")
	wkExpect(t, "kill --rm-worktree on a dirty worktree", r, 0, "killed wk\n",
		"swarm: warning: cannot remove worktree for 'wk': worktree has 1 uncommitted change(s)\n")
	if data, err := os.ReadFile(filepath.Join(path, "work.txt")); err != nil || string(data) != "unsaved\n" {
		t.Fatalf("uncommitted work lost: %q %v", data, err)
	}
	if c := wkStatusCode(e, "wk"); c != 1 {
		t.Errorf("status after kill: exit %d", c)
	}

	// clean --force-dirty removes it, from outside too; the branch stays
	wkExpect(t, "clean --force-dirty", e.RunIn(outside, "clean", "--force-dirty", "wk"), 0, "cleaned wk\n", "")
	if wkExists(path) {
		t.Errorf("worktree %s still exists after clean --force-dirty", path)
	}
	if b := wkBranches(e, e.Dir); !wkSameSet(b, []string{"main", "wk"}) {
		t.Errorf("branches after clean: %q, want main and wk", b)
	}
	if out := e.Git(e.Dir, "worktree", "list", "--porcelain"); strings.Contains(out, path) {
		t.Errorf("git still lists the worktree:\n%s", out)
	}
	if wkRecordOf(e, "wk") != nil {
		t.Errorf("record of wk still there")
	}

	// a clean worktree is removed by plain clean (from outside the repo)
	path2 := wkWorktreePath(e, "wk2")
	e.MustRun("spawn", "--name", "wk2", "--tmux", "--worktree", "--", "sleep", "300")
	wkExpect(t, "kill wk2", e.RunIn(outside, "kill", "wk2"), 0, "killed wk2\n", "")
	if !wkExists(path2) {
		t.Fatalf("plain kill removed the worktree")
	}
	wkExpect(t, "clean wk2", e.RunIn(outside, "clean", "wk2"), 0, "cleaned wk2\n", "")
	if wkExists(path2) {
		t.Errorf("clean left the clean worktree %s", path2)
	}

	// kill --rm-worktree removes a clean worktree; --branch and --worktree-dir
	wtDir := filepath.Join(t.TempDir(), "trees")
	path3 := filepath.Join(wtDir, "wk3")
	e.MustRun("spawn", "--name", "wk3", "--tmux", "--worktree", "--branch", "feature/x", "--worktree-dir", wtDir, "--", "sleep", "300")
	if b := strings.TrimSpace(e.Git(path3, "branch", "--show-current")); b != "feature/x" {
		t.Errorf("--branch: worktree on %q", b)
	}
	wkExpect(t, "kill --rm-worktree wk3", e.RunIn(outside, "kill", "--rm-worktree", "wk3"), 0, "killed wk3\n", "")
	if wkExists(path3) {
		t.Errorf("kill --rm-worktree left the clean worktree %s", path3)
	}
	if b := wkBranches(e, e.Dir); !wkSameSet(b, []string{"main", "wk", "wk2", "feature/x"}) {
		t.Errorf("branches: %q", b)
	}
	if e.WindowID("keeper") == "" {
		t.Errorf("keeper window gone")
	}
}

// A dirty worktree is kept by a plain clean, which prints its path.
func TestWorkerCleanKeepsDirtyWorktree(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	path := wkWorktreePath(e, "d")
	wkSpawnProcess(t, e, "--name", "d", "--worktree", "--", "sleep", "300")
	e.MustRun("kill", "d")
	os.WriteFile(filepath.Join(path, "README"), []byte("changed\n"), 0o644)
	r := e.RunIn(t.TempDir(), "clean", "d")
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, path) || !strings.HasSuffix(r.Stdout, "cleaned d\n") {
		t.Errorf("clean with a dirty worktree: %s\nwant the kept path printed and 'cleaned d'", r)
	}
	if data, _ := os.ReadFile(filepath.Join(path, "README")); string(data) != "changed\n" {
		t.Errorf("clean discarded uncommitted work: %q", data)
	}
}

// A spawn that fails rolls back everything it made (docs/security.md,
// "Crash-safe spawn").
func TestWorkerSpawnRollback(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.MustRun("spawn", "--name", "keeper", "--tmux", "--", "sleep", "300")
	before := e.Workers()
	path := wkWorktreePath(e, "bad")

	r := e.Run("spawn", "--name", "bad", "--tmux", "--worktree", "--", "definitely-not-a-command")
	if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "swarm: error: ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("spawn of a missing command: %s\nwant exit 1 and one error line", r)
	}
	r = e.Run("spawn", "--name", "badp", "--worktree", "--", "definitely-not-a-command")
	if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "swarm: error: ") {
		t.Errorf("process spawn of a missing command: %s", r)
	}
	if got := e.Workers(); !reflect.DeepEqual(got, before) {
		t.Errorf("records after failed spawns: %v", got)
	}
	if wkExists(path) || wkExists(wkWorktreePath(e, "badp")) {
		t.Errorf("worktree left behind")
	}
	if out := e.Git(e.Dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("git worktrees after failed spawn:\n%s", out)
	}
	if w := wkWindows(e); !reflect.DeepEqual(w, []string{"keeper"}) {
		t.Errorf("windows after failed spawn: %q", w)
	}
	logs, _ := os.ReadDir(filepath.Join(e.Home, "logs"))
	for _, l := range logs {
		if strings.HasPrefix(l.Name(), "badp.") {
			t.Errorf("log file left: %s", l.Name())
		}
	}
	if b := wkBranches(e, e.Dir); !reflect.DeepEqual(b, []string{"main"}) {
		t.Errorf("branches after failed spawns: %q, want only main (the branch spawn created must be rolled back)", b)
	}
	// the name is free again
	wkExpect(t, "spawn bad again", e.Run("spawn", "--name", "bad", "--tmux", "--", "sleep", "300"), 0, wkSpawnedTmux(e, "bad"), "")
}

// Rollback keeps a branch that existed before the spawn.
func TestWorkerSpawnRollbackKeepsExistingBranch(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.Git(e.Dir, "branch", "pre")
	r := e.Run("spawn", "--name", "bad", "--tmux", "--worktree", "--branch", "pre", "--", "definitely-not-a-command")
	if r.Code != 1 {
		t.Errorf("spawn: %s", r)
	}
	if b := wkBranches(e, e.Dir); !wkSameSet(b, []string{"main", "pre"}) {
		t.Errorf("branches: %q, want main and pre", b)
	}
	if wkExists(wkWorktreePath(e, "bad")) || len(e.Workers()) != 0 {
		t.Errorf("leftovers: worktree %v, records %v", wkExists(wkWorktreePath(e, "bad")), e.Workers())
	}
}

func TestWorkerReadyWait(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	start := time.Now()
	r := e.Run("spawn", "--name", "claude", "--tmux", "--ready-wait", "--ready-timeout", "30", "--",
		e.Agent, "--input", "none", "--banner", "Claude Code v2.0.76", "--script", "quiet")
	d := time.Since(start)
	wkExpect(t, "spawn --ready-wait with a Claude banner", r, 0, wkSpawnedTmux(e, "claude"), "")
	if d > 8*time.Second {
		t.Errorf("--ready-wait took %v for a ready agent", d)
	}
	if !strings.Contains(e.Screen("claude"), "Claude Code v2.0.76") {
		t.Errorf("spawn returned before the banner showed:\n%s", e.Screen("claude"))
	}

	start = time.Now()
	r = e.Run("spawn", "--name", "silent", "--tmux", "--ready-wait", "--ready-timeout", "2", "--", "sleep", "300")
	d = time.Since(start)
	wkExpect(t, "spawn --ready-wait of a silent command", r, 0, wkSpawnedTmux(e, "silent"),
		"swarm: warning: agent 'silent' did not become ready within 2s\n")
	if d < 1900*time.Millisecond || d > 10*time.Second {
		t.Errorf("--ready-timeout 2 returned after %v", d)
	}
	if wkStatusCode(e, "silent") != 0 {
		t.Errorf("the silent worker is not running after the ready timeout")
	}

	// --ready-wait has no effect on a process worker (it has no screen),
	// as in swarm.py, which said nothing: the spawn says so and returns
	// at once.
	start = time.Now()
	r = e.Run("spawn", "--name", "pready", "--ready-wait", "--ready-timeout", "30", "--", "sleep", "300")
	if r.Code != 0 || r.Stderr != "swarm: warning: --ready-wait has no effect without --tmux\n" ||
		!strings.HasPrefix(r.Stdout, "spawned pready (pid: ") || time.Since(start) > 8*time.Second {
		t.Errorf("process spawn --ready-wait: %s after %v", r, time.Since(start))
	}
}

// An agent that exits before it looks ready is reported as such, at once,
// not as one that "did not become ready within" the timeout it did not
// wait for.
func TestWorkerReadyWaitExited(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	start := time.Now()
	r := e.Run("spawn", "--name", "gone", "--tmux", "--ready-wait", "--ready-timeout", "30", "--",
		e.Agent, "--input", "none", "--script", "print no login;exit 3")
	d := time.Since(start)
	want := regexp.MustCompile(`^swarm: warning: agent 'gone' exited before it looked ready \((exit 3; )?see: swarm logs gone\)\n$`)
	if r.Code != 0 || r.Stdout != wkSpawnedTmux(e, "gone") || !want.MatchString(r.Stderr) {
		t.Errorf("spawn --ready-wait of an agent that exits: %s", r)
	}
	if d > 10*time.Second {
		t.Errorf("spawn --ready-wait of an agent that exits took %v", d)
	}
}

// Spawning while the tmux server is going away (its last window just
// closed) must still work: tmux reports "server exited unexpectedly" or "no
// current target" in that moment, and spawn has to start a new server
// instead of failing. Short-lived workers spawned in a staggered stream hit
// that moment many times.
func TestWorkerSpawnWhileServerExits(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	const n = 30
	results := make([]testenv.Result, n)
	var wg sync.WaitGroup
	tick := time.NewTicker(15 * time.Millisecond) // pacing of the stream, not a wait
	defer tick.Stop()
	for i := 0; i < n; i++ {
		<-tick.C
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = e.Run("spawn", "--name", fmt.Sprintf("s%02d", i), "--tmux", "--", "sleep", "0.05")
		}(i)
	}
	wg.Wait()
	failed := 0
	for i, r := range results {
		name := fmt.Sprintf("s%02d", i)
		if r.Code != 0 || r.Stdout != wkSpawnedTmux(e, name) || r.Stderr != "" {
			failed++
			if failed <= 3 {
				t.Errorf("spawn %s while windows come and go: %s", name, r)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d spawns failed", failed, n)
	}
	if got := len(e.Workers()); got != n-failed {
		t.Errorf("state.json holds %d records, want %d (one per successful spawn)", got, n-failed)
	}
}

// Re-spawning a name with --worktree says that it reuses the old branch
// and how far behind HEAD it is; --fresh-branch moves it to HEAD.
func TestWorkerWorktreeSaysWhatItReuses(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.MustRun("spawn", "--name", "w1", "--tmux", "--worktree", "--", "sleep", "300")
	e.MustRun("kill", "w1", "--rm-worktree")
	e.MustRun("clean", "w1")
	e.WriteFile("later.txt", "x\n")
	e.Git(e.Dir, "add", "later.txt")
	e.Git(e.Dir, "commit", "-qm", "later")
	r := e.MustRun("spawn", "--name", "w1", "--tmux", "--worktree", "--", "sleep", "300")
	if !regexp.MustCompile(`^swarm: note: using existing branch w1 at [0-9a-f]{7,} \(1 commit\(s\) behind HEAD\)\n$`).MatchString(r.Stderr) {
		t.Fatalf("reused branch note: %q", r.Stderr)
	}
	e.MustRun("kill", "w1", "--rm-worktree")
	e.MustRun("clean", "w1")
	r = e.MustRun("spawn", "--name", "w1", "--tmux", "--worktree", "--fresh-branch", "--", "sleep", "300")
	if !strings.HasPrefix(r.Stderr, "swarm: note: reset existing branch w1 to HEAD") {
		t.Fatalf("fresh branch note: %q", r.Stderr)
	}
	if !wkExists(filepath.Join(wkWorktreePath(e, "w1"), "later.txt")) {
		t.Fatal("the fresh branch is not at HEAD")
	}
}
