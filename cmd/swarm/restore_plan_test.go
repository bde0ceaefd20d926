package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// TestRestoreLeavesANoRunLoopNotStarted (issue 27, item 2): a loop made
// with --no-run is not lost, before or after a reboot (its tmux server
// killed): ls and ralph ls say it has not started, restore --all starts
// no monitor and runs no iteration for it (and names it only when asked
// for by name, with the command that starts it), its state stays one
// swarm.py reads, and swarm ralph run still starts it.
func TestRestoreLeavesANoRunLoopNotStarted(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.WriteFile("PROMPT.md", "work")
	e.MustRun("ralph", "spawn", "--name", "later", "--prompt-file", "PROMPT.md", "--max-iterations", "1", "--no-worktree", "--no-run",
		"--", e.Agent, "--script", "print <promise>COMPLETE</promise>;quiet")
	// Another worker, so that the tmux server a reboot takes holds one.
	e.MustRun("spawn", "--name", "other", "--tmux", "--", "sleep", "300")
	notStarted := func(when string) {
		t.Helper()
		if ls := e.MustRun("ls").Stdout; !strings.Contains(ls, "\nlater  stopped(not-started)  ") {
			t.Errorf("%s: ls:\n%s", when, ls)
		}
		for _, w := range wkLsJSON(t, e) {
			if w["name"] == "later" && (w["not_started"] != true || w["lost"] != nil) {
				t.Errorf("%s: ls --format json: %v", when, w)
			}
		}
		rls := e.MustRun("ralph", "ls").Stdout
		if lines := strings.Split(rls, "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], "later  not-started ") || strings.Fields(lines[1])[7] != "-" {
			t.Errorf("%s: ralph ls:\n%s", when, rls)
		}
		st := e.RalphState("later")
		if st["status"] != "running" || st["current_iteration"] != float64(0) || st["monitor_pid"] != float64(0) || st["iteration_active"] == true {
			t.Errorf("%s: the loop's state changed: %v", when, st)
		}
		if ralph.MonitorAlive(state.NewStore(e.Home, nil).Ralph("later")) {
			t.Errorf("%s: a monitor runs", when)
		}
		if log := e.RalphLog("later"); strings.Contains(log, "[START]") || strings.Contains(log, "[RESUME]") {
			t.Errorf("%s: iterations.log:\n%s", when, log)
		}
	}
	notStarted("after the spawn")

	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	wkExpect(t, "restore --all", e.Run("restore", "--all"), 0, "restored other (tmux: "+wkSession(e)+":other)\n", "")
	notStarted("after restore --all")
	wkExpect(t, "restore of the loop by name", e.Run("restore", "later"), 0, "later: nothing to restore (not lost)\n",
		"swarm: note: loop later has not started (spawned with --no-run): start it with: swarm ralph run later\n")
	notStarted("after restore later")

	// swarm.py's way of reading the state still reads it.
	if python, err := exec.LookPath("python3"); err == nil {
		expect := filepath.Join(t.TempDir(), "expect.json")
		data, _ := json.Marshal(map[string]any{"workers": map[string]any{"later": map[string]any{}, "other": map[string]any{}}, "ralph": map[string]any{"later": map[string]any{}}})
		if err := os.WriteFile(expect, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(python, filepath.Join("..", "..", "internal", "state", "testdata", "swarmpy_load.py"), e.Home, expect).CombinedOutput(); err != nil {
			t.Errorf("swarm.py's reader fails on the state: %v\n%s", err, out)
		}
	} else {
		t.Log("no python3: swarm.py's reader not run")
	}

	r := e.Run("ralph", "run", "later")
	if r.Code != 0 || e.RalphState("later")["exit_reason"] != "complete" || !strings.Contains(e.RalphLog("later"), "[START] iteration 1") {
		t.Fatalf("ralph run after the restore: %s\n%v\n%s", r, e.RalphState("later"), e.RalphLog("later"))
	}
}

// TestRestoreDryRun (issue 27, item 7): restore --dry-run says what
// restore would do (what it would restore, resume, and not restore and
// why, with restore's exit code) and does nothing: no window, no monitor,
// no state written, no lock taken.
func TestRestoreDryRun(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.WriteFile("PROMPT.md", "work")
	e.MustRun("spawn", "--name", "up", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "gone", "--tmux", "--worktree", "--", "sleep", "300")
	e.MustRun("ralph", "spawn", "--name", "loop", "--prompt-file", "PROMPT.md", "--max-iterations", "3", "--no-worktree",
		"--", e.Agent, "--script", "wait")
	e.Eventually("the loop's first iteration", 15*time.Second, func() bool { return e.RalphState("loop")["prompt_delivered"] == true })
	// A reboot: the monitor and the tmux server go.
	mon := int(e.RalphState("loop")["monitor_pid"].(float64))
	if err := syscall.Kill(mon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rs := state.NewStore(e.Home, nil).Ralph("loop")
	e.Eventually("the monitor's end", 10*time.Second, func() bool { return !ralph.MonitorAlive(rs) })
	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	wt := wkWorktreePath(e, "gone")
	e.Git(e.Dir, "worktree", "remove", "--force", wt)

	snapshot := func() string {
		var b strings.Builder
		filepath.WalkDir(e.Home, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "%s %x\n", p, sha256.Sum256(data))
			}
			return nil
		})
		return b.String()
	}
	before := snapshot()
	wkExpect(t, "restore --all --dry-run", e.Run("restore", "--all", "--dry-run"), 1,
		"would restore up (tmux: "+wkSession(e)+":up)\nwould resume loop loop at iteration 1\n",
		"swarm: warning: worker 'gone' would not be restored: its worktree "+wt+" is gone (swarm respawn gone makes a new worktree on branch gone, or swarm clean gone)\n"+
			"swarm: error: 1 of 3 would not be restored\n")
	wkExpect(t, "restore loop --dry-run", e.Run("restore", "loop", "--dry-run"), 0, "would resume loop loop at iteration 1\n", "")
	wkExpect(t, "restore --dry-run", e.Run("restore", "--dry-run"), 2, "",
		"swarm: error: give worker names, --all or --install-unit with --dry-run (see: swarm restore --help)\n")
	if after := snapshot(); after != before {
		t.Errorf("the dry run changed the state root:\n%s\nwas\n%s", after, before)
	}
	if wkServerRunning(e) || ralph.MonitorAlive(rs) {
		t.Error("the dry run started a tmux server or a monitor")
	}
	if ls := e.MustRun("ls").Stdout; !strings.Contains(ls, "\nup    stopped(lost)  ") || !strings.Contains(ls, "\nloop  stopped(lost)  ") {
		t.Errorf("after the dry run:\n%s", ls)
	}

	// The real one does what the dry run said.
	r := e.Run("restore", "--all")
	if r.Code != 1 || r.Stdout != "restored up (tmux: "+wkSession(e)+":up)\nresumed loop loop at iteration 1\n" {
		t.Errorf("restore --all after the dry run: %s", r)
	}
}

// TestRestoreInstallUnitEnvFile (issue 27, item 7): --install-unit makes
// the environment file the unit and the crontab line read (restore.env in
// the state root, 0600, comments only) and keeps one the user wrote; one
// another user could write is refused, with nothing written; --dry-run
// says what it would write and writes nothing; and the crontab line, run
// as cron runs it, gives the restore (and the workers it brings back)
// what the file sets.
func TestRestoreInstallUnitEnvFile(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	home := t.TempDir()
	bin := t.TempDir()
	testenv.WriteExecutable(t, filepath.Join(bin, "systemctl"), "#!/bin/sh\nexit 0\n")
	e.Extra = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/cfg", "PATH=" + bin + ":/usr/bin:/bin"}
	name := state.DefaultSession(e.Home) + "-restore.service"
	unit := filepath.Join(home, "cfg", "systemd", "user", name)
	envFile := filepath.Join(e.Home, "restore.env")

	r := e.MustRun("restore", "--install-unit", "--dry-run")
	if !strings.HasPrefix(r.Stdout, "would write "+unit+":\n# Written by swarm restore --install-unit") ||
		!strings.Contains(r.Stdout, "\nEnvironmentFile=-"+envFile+"\n") ||
		!strings.HasSuffix(r.Stdout, "\nwould make "+envFile+" (0600, comments only): the environment the restore at boot reads\n") {
		t.Errorf("install-unit --dry-run: %s", r)
	}
	if wkExists(unit) || wkExists(envFile) {
		t.Fatal("install-unit --dry-run wrote a file")
	}

	e.MustRun("restore", "--install-unit")
	fi, err := os.Stat(envFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("environment file: %v %v", fi, err)
	}
	data, _ := os.ReadFile(envFile)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("the environment file sets something: %q", line)
		}
	}
	if !strings.Contains(string(data), "#ANTHROPIC_API_KEY=") || !strings.Contains(string(data), "#TMUX_TMPDIR=") {
		t.Errorf("the environment file does not say where the key and TMUX_TMPDIR go:\n%s", data)
	}

	// The user's own file is kept; one others can write is refused.
	mine := "SWARM_TEST_FROM_ENVFILE=from-the-file\nPATH=/usr/bin:/bin\n"
	if err := os.WriteFile(envFile, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.MustRun("restore", "--install-unit")
	if !strings.HasSuffix(r.Stdout, "the restore at boot reads "+envFile+"\n") {
		t.Errorf("install-unit with an environment file: %s", r)
	}
	if got, _ := os.ReadFile(envFile); string(got) != mine {
		t.Errorf("install-unit changed the user's environment file: %q", got)
	}
	if err := os.Chmod(envFile, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(unit); err != nil {
		t.Fatal(err)
	}
	r = e.Run("restore", "--install-unit")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: ") || !strings.Contains(r.Stderr, envFile) || !strings.Contains(r.Stderr, "writable by others") ||
		!strings.Contains(r.Stderr, "\nhint: chmod 600 "+envFile) || wkExists(unit) {
		t.Errorf("install-unit with an environment file others can write: %s (unit written: %v)", r, wkExists(unit))
	}
	if err := os.Chmod(envFile, 0o600); err != nil {
		t.Fatal(err)
	}

	// Without systemd: the crontab line, run by sh as cron runs it (the
	// PATH it was made with has no tmux; the file's PATH wins).
	e.MustRun("spawn", "--name", "w", "--tmux", "--", "sh", "-c", `echo "$SWARM_TEST_FROM_ENVFILE" > got; exec sleep 300`)
	got := filepath.Join(e.Dir, "got")
	e.Eventually("the worker's start", 10*time.Second, func() bool { return wkExists(got) })
	if err := os.Remove(got); err != nil {
		t.Fatal(err)
	}
	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	e.Extra = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/cfg", "PATH=" + t.TempDir()}
	r = e.MustRun("restore", "--install-unit")
	line, ok := strings.CutPrefix(strings.Split(r.Stdout, "\n")[1], "@reboot ")
	if !ok {
		t.Fatalf("install-unit without systemd: %s", r)
	}
	cron := exec.Command("/bin/sh", "-c", line)
	cron.Dir = home
	cron.Env = []string{"HOME=" + home, "SWARM_TMUX_SOCKET=" + e.Socket, "SWARM_POLL_INTERVAL=100ms", "PATH=/nonexistent"}
	if out, err := cron.CombinedOutput(); err != nil {
		t.Fatalf("the crontab line: %v\n%s", err, out)
	}
	log, _ := os.ReadFile(filepath.Join(e.Home, "restore.log"))
	if !strings.Contains(string(log), "restored w (tmux: ") {
		t.Fatalf("restore.log:\n%s", log)
	}
	e.Eventually("the restored worker's start", 10*time.Second, func() bool {
		b, err := os.ReadFile(got)
		return err == nil && string(b) == "from-the-file\n"
	})
}

// TestRestoreDryRunRollsNoSpawnBack (issue 27, item 7): a spawn that
// crashed half-way (a "starting" record whose spawner is gone: what a
// reboot during a spawn leaves) is rolled back by restore, as by ls; the
// dry run changes nothing, so it leaves the record as it is.
func TestRestoreDryRunRollsNoSpawnBack(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "up", "--tmux", "--", "sleep", "300")
	store := state.NewStore(e.Home, nil)
	if err := store.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers, state.Worker{Name: "half", Status: state.StatusStarting, Cmd: []string{"sleep", "300"},
			Started: state.Timestamp{Time: time.Now()}, Cwd: e.Dir})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.MustRun("restore", "--all", "--dry-run")
	reg, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if reg.Find("half") == nil {
		t.Fatal("restore --all --dry-run rolled back the crashed spawn 'half'")
	}
}
