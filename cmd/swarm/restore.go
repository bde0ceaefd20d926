package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

type restoreOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)
	Root    func() (string, error)

	Names       []string
	All         bool
	InstallUnit bool
	DryRun      bool
}

func newCmdRestore(f *factory, runF func(*restoreOptions) error) *cobra.Command {
	opts := &restoreOptions{IO: f.IO, Manager: f.Manager, Root: f.Root}
	cmd := &cobra.Command{
		Use:   "restore [--all | NAME...]",
		Short: "Bring back the workers and loops a reboot or a killed tmux server took",
		Long: `Bring back what a reboot or a killed tmux server took: tmux workers whose window
is gone while their record says running (swarm ls marks them "lost") are
re-spawned with their recorded command, env, directory and worktree; ralph
loops whose monitor is gone while they run are resumed at their iteration by a
new monitor, with a fresh agent. Nothing is restored twice: a second restore
finds them running. A worker or loop whose worktree is gone is reported, not
restored.

--install-unit writes a systemd user unit that runs swarm restore --all when
your user's systemd starts (it enables nothing: the command to do so is
printed), or, without systemd, prints a crontab @reboot line to add. Both
read the environment file restore.env in the state root, made (0600, all
comments) if there is none: put there what the restored agents need that a
boot does not give them (ANTHROPIC_API_KEY=..., TMUX_TMPDIR=...).

--dry-run says what would be restored, and what --install-unit would write,
and does nothing.`,
		Example: `  swarm ls                  # lost workers show "stopped(lost)"
  swarm restore --all
  swarm restore builder api
  swarm restore --all --dry-run
  swarm restore --install-unit`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			switch {
			case opts.All && len(args) > 0:
				return usagef("give worker names or --all, not both")
			case !opts.All && len(args) == 0 && !opts.InstallUnit:
				if opts.DryRun {
					return usagef("give worker names, --all or --install-unit with --dry-run")
				}
				return usagef("give worker names, --all or --install-unit")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRestore(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every lost worker and loop")
	cmd.Flags().BoolVar(&opts.InstallUnit, "install-unit", false, "write a systemd user unit (or print a crontab line) that runs swarm restore --all at boot, and its environment file")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be restored (and what --install-unit would write), and do nothing")
	return cmd
}

func runRestore(opts *restoreOptions) error {
	if opts.InstallUnit {
		if err := installUnit(opts); err != nil {
			return err
		}
		if !opts.All && len(opts.Names) == 0 {
			return nil
		}
	}
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	run := restore.Run
	if opts.DryRun {
		run = restore.DryRun
	}
	results, err := run(m, opts.Names, opts.All)
	if err != nil {
		return workerError(err, exitFail)
	}
	return printRestored(opts.IO, results, opts.DryRun)
}

// printRestored says what was restored (stdout), what could not be and
// why (stderr), and fails when something could not; with dry, what would
// be and what would not be.
func printRestored(io *IO, results []restore.Result, dry bool) error {
	not := "not restored"
	if dry {
		not = "would not be restored"
	}
	failed, done := 0, 0
	for _, r := range results {
		for _, n := range r.Notes {
			fmt.Fprintf(io.Err, "swarm: note: %s\n", termtext.Line(n))
		}
		switch {
		case r.Err != nil:
			failed++
			msg := fmt.Sprintf("%s '%s' %s: %v", r.Kind, r.Name, not, r.Err)
			if h := hint.Of(r.Err); h != "" {
				msg += " (" + h + ")"
			}
			io.Warn(termtext.Line(msg))
		case r.Done != "":
			done++
			fmt.Fprintln(io.Out, termtext.Line(r.Done))
		default:
			fmt.Fprintf(io.Out, "%s: nothing to restore (not lost)\n", r.Name)
		}
	}
	if len(results) == 0 {
		fmt.Fprintln(io.Out, "nothing to restore")
	}
	if failed > 0 {
		return fail(exitFail, "%d of %d %s", failed, failed+done, not)
	}
	return nil
}

// installUnit writes the boot unit, or prints the crontab line.
func installUnit(opts *restoreOptions) error {
	root, err := opts.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	self, err := os.Executable()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	install := restore.InstallUnit
	if opts.DryRun {
		install = restore.PlanUnit
	}
	in, err := install(restore.UnitOptions{Root: root, Self: self, Path: os.Getenv("PATH"), ConfigDir: cfg})
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	out := opts.IO.Out
	if opts.DryRun {
		if in.Systemd {
			fmt.Fprintf(out, "would write %s:\n%s", in.Path, in.Text)
		} else {
			fmt.Fprintf(out, "no systemd here (systemctl not found); would print this line to add with crontab -e:\n%s\n", in.Line)
		}
		if in.EnvMade {
			fmt.Fprintf(out, "would make %s (0600, comments only): the environment the restore at boot reads\n", in.EnvFile)
		} else {
			fmt.Fprintf(out, "would keep %s: the environment the restore at boot reads\n", in.EnvFile)
		}
		return nil
	}
	if !in.Systemd {
		fmt.Fprintf(out, "no systemd here (systemctl not found); add this line with crontab -e:\n%s\n", in.Line)
	} else {
		fmt.Fprintf(out, `wrote %s
enable it with: systemctl --user daemon-reload && systemctl --user enable %s
(it runs when your user's systemd starts; for that to be at boot, without a login: loginctl enable-linger)
`, in.Path, in.Name)
	}
	if in.EnvMade {
		fmt.Fprintf(out, "made %s: put what the restored agents need at boot there (ANTHROPIC_API_KEY=..., TMUX_TMPDIR=...)\n", in.EnvFile)
	} else {
		fmt.Fprintf(out, "the restore at boot reads %s\n", in.EnvFile)
	}
	return nil
}
