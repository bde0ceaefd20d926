package restore

import (
	"errors"
	"fmt"
	"io/fs"
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
// or the crontab line to add where there is no systemd; and the
// environment file the unit or line reads (EnvFile), made by it when
// there was none (EnvMade). PlanUnit says the same of what it would do.
type Installed struct {
	Systemd bool
	Path    string // the unit file
	Name    string // the unit's name
	Line    string // the crontab line
	Text    string // the unit file's text
	EnvFile string
	EnvMade bool
}

// EnvFileName is the environment file of the restore at boot, in the
// state root: the user's own (the root is, and swarm refuses a file in it
// that another user owns or others can write), one per root as the unit
// is. The unit and the crontab line read it when it exists: what the
// restored agents need that a boot does not give them (ANTHROPIC_API_KEY,
// TMUX_TMPDIR).
const EnvFileName = "restore.env"

// envTemplate is the environment file as InstallUnit makes it (0600):
// comments only, so it sets nothing until the user writes in it.
const envTemplate = `# The environment of swarm restore --all at boot (the unit or crontab
# line of swarm restore --install-unit for this state root), and so of the
# workers, agents and loops it brings back: one NAME=value a line, no
# spaces around "=", no export. Keep it private: chmod 600 (swarm restore
# --install-unit refuses it if another user owns it or others can write it).
#
# An agent's credentials, if it does not keep a login of its own:
#ANTHROPIC_API_KEY=sk-ant-...
#OPENAI_API_KEY=sk-...
#
# Where tmux keeps its sockets, if you set it in your shell (tmux's
# default is /tmp):
#TMUX_TMPDIR=/run/user/1000
#
# A PATH set here replaces the one the unit was written with.
`

// PlanUnit says what InstallUnit would do, doing nothing: an environment
// file already there is looked at (it must be the user's own, not
// writable by others), never changed.
func PlanUnit(o UnitOptions) (Installed, error) {
	if err := checkUnitText(o); err != nil {
		return Installed{}, err
	}
	env := filepath.Join(o.Root, EnvFileName)
	in := Installed{EnvFile: env}
	f, err := state.OpenFile(env, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		in.EnvMade = true
	case err != nil:
		return Installed{}, err
	default:
		_ = f.Close() // read only: nothing to lose
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		in.Line = cronLine(o)
		return in, nil
	}
	in.Systemd = true
	in.Name = UnitName(o.Root)
	in.Path = filepath.Join(o.ConfigDir, "systemd", "user", in.Name)
	in.Text = unitText(o)
	return in, nil
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
	in, err := PlanUnit(o)
	if err != nil {
		return Installed{}, err
	}
	if in.EnvMade {
		if err := state.MakeDir(o.Root, o.Root); err != nil {
			return Installed{}, err
		}
		// O_EXCL: a file made meanwhile is the user's, and kept.
		f, err := state.OpenFile(in.EnvFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case errors.Is(err, fs.ErrExist):
			in.EnvMade = false
		case err != nil:
			return Installed{}, err
		default:
			_, err = f.WriteString(envTemplate)
			if err = errors.Join(err, f.Close()); err != nil {
				return Installed{}, fmt.Errorf("cannot write %s: %w", in.EnvFile, err)
			}
		}
	}
	if !in.Systemd {
		return in, nil
	}
	if err := os.MkdirAll(filepath.Dir(in.Path), 0o755); err != nil {
		return Installed{}, err
	}
	if err := state.WriteFileAtomicPerm(in.Path, []byte(in.Text), 0o644); err != nil {
		return Installed{}, fmt.Errorf("cannot write %s: %w", in.Path, err)
	}
	return in, nil
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
// stop when the command is done. EnvironmentFile's "-": a file the user
// removed is no error; its path is not quoted (systemd takes the rest of
// the line as it is, and a quoted path as not absolute).
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
EnvironmentFile=-%[6]s
ExecStart=%[5]s restore --all

[Install]
WantedBy=default.target
`, o.Root, systemdEscape(o.Root, false), systemdQuote("SWARM_HOME="+o.Root, false),
		systemdQuote("PATH="+o.Path, false), systemdQuote(o.Self, true), systemdEscape(filepath.Join(o.Root, EnvFileName), false))
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
// sh, with % meaning a newline: it is escaped. The environment file is
// read as the unit reads it (its variables exported, over SWARM_HOME
// and PATH), when it is there.
func cronLine(o UnitOptions) string {
	q := func(s string) string { return strings.ReplaceAll(tmux.ShellQuote(s), "%", `\%`) }
	env := q(filepath.Join(o.Root, EnvFileName))
	return fmt.Sprintf("@reboot SWARM_HOME=%s PATH=%s; export SWARM_HOME PATH; set -a; [ ! -r %s ] || . %s; set +a; %s restore --all >> %s 2>&1",
		q(o.Root), q(o.Path), env, env, q(o.Self), q(filepath.Join(o.Root, "restore.log")))
}
