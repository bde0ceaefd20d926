package restore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// UnitOptions is what the unit (or crontab line) that runs swarm restore
// --all at boot is written for.
type UnitOptions struct {
	Root string // the state root (SWARM_HOME)
	Self string // the swarm binary, absolute
	// Path is the PATH the restore runs with: the agents and tmux are
	// found on it as they are now.
	Path string
	// ConfigDir is the user's configuration directory ($XDG_CONFIG_HOME,
	// else ~/.config): the unit goes in its systemd/user.
	ConfigDir string
}

// Installed is what InstallUnit did: the unit file it wrote (Systemd),
// or the crontab line to add where there is no systemd.
type Installed struct {
	Systemd bool
	Path    string // the unit file
	Name    string // the unit's name
	Line    string // the crontab line
}

// UnitName is the name of the state root's unit: one per root.
func UnitName(root string) string {
	return state.DefaultSession(root) + "-restore.service"
}

// InstallUnit writes a systemd user unit that runs swarm restore --all
// when the user's systemd starts (at login, or at boot with lingering),
// where systemctl is found; it enables nothing. Without systemd it
// returns the crontab @reboot line that does the same.
func InstallUnit(o UnitOptions) (Installed, error) {
	if err := checkUnitText(o); err != nil {
		return Installed{}, err
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return Installed{Line: cronLine(o)}, nil
	}
	dir := filepath.Join(o.ConfigDir, "systemd", "user")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Installed{}, err
	}
	name := UnitName(o.Root)
	path := filepath.Join(dir, name)
	if err := state.WriteFileAtomicPerm(path, []byte(unitText(o)), 0o644); err != nil {
		return Installed{}, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return Installed{Systemd: true, Path: path, Name: name}, nil
}

// checkUnitText refuses a state root, binary or PATH holding a control
// character: a newline would end the unit's line (the comment, the
// Description) and start a setting of its own (ExecStartPre=...), or end
// the crontab line and start another entry; cron has no way to write one
// in a command.
func checkUnitText(o UnitOptions) error {
	for _, f := range []struct{ what, s string }{{"state root", o.Root}, {"swarm binary's path", o.Self}, {"PATH", o.Path}} {
		for _, r := range f.s {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return hint.Errorf("use a SWARM_HOME, binary and PATH without control characters (a newline, a tab)",
					"cannot write a boot unit: the %s %q holds a control character", f.what, f.s)
			}
		}
	}
	return nil
}

// unitText is the unit file. Type oneshot with KillMode=process: the tmux
// server and the loop monitors the restore starts are not the unit's to
// stop when the command is done.
func unitText(o UnitOptions) string {
	return fmt.Sprintf(`# Written by swarm restore --install-unit: brings back the workers and
# ralph loops of %[1]s after a reboot (swarm restore --all).
[Unit]
Description=swarm: restore the workers and loops of %[2]s

[Service]
Type=oneshot
RemainAfterExit=yes
KillMode=process
Environment=%[3]s
Environment=%[4]s
ExecStart=%[5]s restore --all

[Install]
WantedBy=default.target
`, o.Root, systemdEscape(o.Root, false), systemdQuote("SWARM_HOME="+o.Root, false),
		systemdQuote("PATH="+o.Path, false), systemdQuote(o.Self, true))
}

// systemdQuote quotes s as one word of a unit file's setting: in double
// quotes, with systemd's escapes (systemd.syntax(7)).
func systemdQuote(s string, exec bool) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(systemdEscape(s, exec)) + `"`
}

// systemdEscape doubles what systemd would expand: % (specifiers), and
// in a command line $ (variables).
func systemdEscape(s string, exec bool) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if exec {
		s = strings.ReplaceAll(s, "$", "$$")
	}
	return s
}

// cronLine is the crontab line that runs swarm restore --all at boot,
// its output in restore.log in the state root. cron gives the command to
// sh, with % meaning a newline: it is escaped.
func cronLine(o UnitOptions) string {
	q := func(s string) string { return strings.ReplaceAll(tmux.ShellQuote(s), "%", `\%`) }
	return fmt.Sprintf("@reboot SWARM_HOME=%s PATH=%s %s restore --all >> %s 2>&1",
		q(o.Root), q(o.Path), q(o.Self), q(filepath.Join(o.Root, "restore.log")))
}
