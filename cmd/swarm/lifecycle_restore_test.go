package main

// Black-box tests of issue 19, item 3: swarm restore's reports and its
// boot unit. The full restore after a killed tmux server and SIGKILLed
// monitors is internal/stresstest's TestRestoreAfterTmuxServerAndMonitorsDie.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// TestRestoreReportsWhatItCannot: a lost worker whose worktree is gone is
// reported (exit 1) and left as it was, never given a new worktree; a
// named worker that is not lost is left alone; a worker killed by swarm
// kill is not lost; an unknown name is an error.
func TestRestoreReportsWhatItCannot(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.MustRun("spawn", "--name", "gone", "--tmux", "--worktree", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "up", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "stopped", "--tmux", "--", "sleep", "300")
	e.MustRun("kill", "stopped")
	wkExpect(t, "restore of a running worker", e.Run("restore", "up"), 0, "up: nothing to restore (not lost)\n", "")

	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	wt := wkWorktreePath(e, "gone")
	e.Git(e.Dir, "worktree", "remove", "--force", wt)
	r := e.Run("restore", "gone")
	wkExpect(t, "restore of a worker whose worktree is gone", r, 1, "",
		"swarm: warning: worker 'gone' not restored: its worktree "+wt+" is gone (swarm respawn gone makes a new worktree on branch gone, or swarm clean gone)\n"+
			"swarm: error: 1 of 1 not restored\n")
	if wkExists(wt) {
		t.Error("restore made a new worktree for a worker whose worktree was gone")
	}
	if !strings.Contains(e.MustRun("ls").Stdout, "gone     stopped(lost)") {
		t.Errorf("the worker that could not be restored is no longer marked lost:\n%s", e.MustRun("ls").Stdout)
	}
	r = e.Run("restore", "--all")
	if r.Code != 1 || r.Stdout != "restored up (tmux: "+wkSession(e)+":up)\n" || !strings.Contains(r.Stderr, "worker 'gone' not restored") {
		t.Errorf("restore --all: %s", r)
	}
	if strings.Contains(r.Stdout+r.Stderr, "stopped") {
		t.Errorf("restore touched the worker swarm kill stopped: %s", r)
	}
	wkExpect(t, "restore of an unknown worker", e.Run("restore", "nosuch"), 1, "",
		"swarm: error: worker 'nosuch' not found\nhint: swarm ls lists the workers\n")
}

// TestRestoreInstallUnit: with systemctl on PATH the unit is written
// under $XDG_CONFIG_HOME/systemd/user (nothing enabled: the fake
// systemctl records any call), running this swarm's restore --all for
// this state root with this PATH; without systemctl a crontab line is
// printed.
func TestRestoreInstallUnit(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	home := t.TempDir()
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	testenv.WriteExecutable(t, filepath.Join(bin, "systemctl"), "#!/bin/sh\necho \"$@\" >> "+calls+"\n")
	path := bin + ":/usr/bin:/bin"
	e.Extra = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/cfg", "PATH=" + path}
	r := e.MustRun("restore", "--install-unit")
	name := state.DefaultSession(e.Home) + "-restore.service"
	unit := filepath.Join(home, "cfg", "systemd", "user", name)
	envFile := filepath.Join(e.Home, "restore.env")
	if r.Stdout != "wrote "+unit+"\nenable it with: systemctl --user daemon-reload && systemctl --user enable "+name+
		"\n(it runs when your user's systemd starts; for that to be at boot, without a login: loginctl enable-linger)\n"+
		"made "+envFile+": put what the restored agents need at boot there (ANTHROPIC_API_KEY=..., TMUX_TMPDIR=...)\n" {
		t.Errorf("install-unit: %s", r)
	}
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Type=oneshot\n", "KillMode=process\n",
		`Environment="SWARM_HOME=` + e.Home + `"` + "\n",
		`Environment="PATH=` + path + `"` + "\n",
		"EnvironmentFile=-" + envFile + "\n",
		`ExecStart="` + e.Swarm + `" restore --all` + "\n",
		"WantedBy=default.target\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("unit lacks %q:\n%s", want, data)
		}
	}
	if _, err := os.Stat(calls); err == nil {
		t.Error("install-unit ran systemctl")
	}

	// A PATH without systemctl (install-unit runs nothing else).
	empty := t.TempDir()
	e.Extra = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/cfg", "PATH=" + empty}
	r = e.MustRun("restore", "--install-unit")
	want := "no systemd here (systemctl not found); add this line with crontab -e:\n" +
		"@reboot SWARM_HOME='" + e.Home + "' PATH='" + empty + "'; export SWARM_HOME PATH; set -a; [ ! -r '" + envFile + "' ] || . '" + envFile + "'; set +a; '" +
		e.Swarm + "' restore --all >> '" + e.Home + "/restore.log' 2>&1\n" +
		"the restore at boot reads " + envFile + "\n"
	if r.Stdout != want {
		t.Errorf("install-unit without systemd:\n got %q\nwant %q", r.Stdout, want)
	}
}

// Issue 27 item 22-23: restore and respawn start a worker again only in a
// directory that is still the user's: after a reboot another user can
// make a directory of the same name (under /tmp, say), or one others can
// write could have been swapped. Refused, nothing is started, and the
// worker stays lost; once the directory is the user's again, restore
// brings it back.
func TestRestoreAndRespawnRefuseADirectoryAnotherUserMayHaveMade(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := filepath.Join(e.Dir, "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.RunIn(dir, "spawn", "--name", "w", "--tmux", "--", "sleep", "300"); r.Code != 0 {
		t.Fatalf("spawn: %s", r)
	}
	if out, err := e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	refused := func(what string) {
		t.Helper()
		for _, args := range [][]string{{"restore", "w"}, {"respawn", "w"}} {
			r := e.Run(args...)
			if r.Code != 1 || !strings.Contains(r.Stderr, what) {
				t.Errorf("%s: %s\nwant %q", args[0], r, what)
			}
		}
		if !regexp.MustCompile(`(?m)^w\s+stopped\(lost\)`).MatchString(e.MustRun("ls").Stdout) {
			t.Errorf("the worker is no longer lost:\n%s", e.MustRun("ls").Stdout)
		}
		if id := e.WindowID("w"); id != "" {
			t.Errorf("a window was made: %s", id)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	refused("directory " + dir + " is writable by others (mode 0777)")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		refused("directory " + dir + " is owned by another user (uid 65534)")
		if err := os.Chown(dir, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.Run("restore", "w"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "restored w") {
		t.Errorf("restore in the user's own directory: %s", r)
	}
}
