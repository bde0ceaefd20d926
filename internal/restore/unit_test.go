package restore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnitQuoting: what systemd or cron would expand in a path (%, $, a
// quote, a space) reaches them escaped.
func TestUnitQuoting(t *testing.T) {
	t.Parallel()
	o := UnitOptions{Root: `/h/a b%c"d`, Self: `/opt/$x/swarm`, Path: "/bin:/u%s"}
	text := unitText(o)
	for _, want := range []string{
		`Environment="SWARM_HOME=/h/a b%%c\"d"` + "\n",
		`Environment="PATH=/bin:/u%%s"` + "\n",
		`EnvironmentFile=-/h/a b%%c"d/restore.env` + "\n",
		`ExecStart="/opt/$$x/swarm" restore --all` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("unit lacks %q:\n%s", want, text)
		}
	}
	line := cronLine(o)
	if want := `@reboot SWARM_HOME='/h/a b\%c"d' PATH='/bin:/u\%s'; export SWARM_HOME PATH; set -a; [ ! -r '/h/a b\%c"d/restore.env' ] || . '/h/a b\%c"d/restore.env'; set +a; '/opt/$x/swarm' restore --all >> '/h/a b\%c"d/restore.log' 2>&1`; line != want {
		t.Errorf("cron line\n got %s\nwant %s", line, want)
	}
}

// TestUnitVerifies: systemd reads the unit as meant (a quoted path, say,
// is "not absolute" to EnvironmentFile=), where systemd-analyze is found.
func TestUnitVerifies(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "state a%b")
	self := filepath.Join(dir, "bin $x", "swarm")
	if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, "swarm-test-restore.service")
	if err := os.WriteFile(unit, []byte(unitText(UnitOptions{Root: root, Self: self, Path: "/usr/bin:/bin"})), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(analyze, "verify", "--man=no", unit).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, unit) {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
}

// Issue 27 item 26: a newline (or any control character) in the state
// root, the binary's path or PATH would end the unit's comment or
// Description line and start a setting of its own (ExecStartPre=), or
// end the crontab line and start another entry: refused, nothing
// written, with systemd and without.
func TestInstallUnitRefusesControlCharacters(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	for _, path := range []string{bin, t.TempDir()} {
		t.Setenv("PATH", path)
		for _, o := range []UnitOptions{
			{Root: "/h/x\nExecStartPre=/bin/touch /tmp/pwned", Self: "/bin/swarm", Path: "/bin"},
			{Root: "/h/x", Self: "/bin/swarm\n@reboot touch /tmp/pwned", Path: "/bin"},
			{Root: "/h/x", Self: "/bin/swarm", Path: "/bin\r\x1b[2J"},
		} {
			o.ConfigDir = cfg
			inst, err := InstallUnit(o)
			if err == nil || !strings.Contains(err.Error(), "holds a control character") || inst.Line != "" || inst.Path != "" {
				t.Errorf("InstallUnit(%q) = %+v, %v; want refused", o, inst, err)
			}
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cfg, "systemd", "user")); len(ents) != 0 {
		t.Errorf("a unit was written: %v", ents)
	}
}
