package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

type spawnOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	// Worker is the worker to start: --name, --tmux, --env, --tag, ... and
	// Command, everything after "--" (or from the first word that is not a
	// flag on).
	Worker worker.SpawnOptions
	// Ralph (--ralph) runs a loop on the worker with Loop's options.
	Ralph bool
	Loop  ralph.SpawnOptions
	// Heartbeat is --heartbeat, --heartbeat-expire and --heartbeat-message,
	// checked; nil without --heartbeat.
	Heartbeat *heartbeat.Config
}

func newCmdSpawn(f *factory, runF func(*spawnOptions) error) *cobra.Command {
	opts := &spawnOptions{IO: f.IO, Manager: f.Manager}
	var readySecs int
	var lf *loopFlags
	var hb heartbeat.Flags
	cmd := &cobra.Command{
		Use:   "spawn --name NAME [flags] -- COMMAND [ARGS...]",
		Short: "Start a worker",
		Long: `Start a worker running COMMAND, in a tmux window (--tmux) or as a background
process whose output goes to $SWARM_HOME/logs/NAME.stdout.log.`,
		Example: `  swarm spawn --name api --tmux -- npm run dev
  swarm spawn --name agent --ralph --prompt-file PROMPT.md --max-iterations 10 -- claude
  swarm spawn --name fixer --tmux --worktree --ready-wait -- claude
  swarm spawn --name night --tmux --heartbeat 4h --heartbeat-expire 24h -- claude
  swarm spawn --name job --env 'TOKEN=a b' --tag batch -- ./run.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Worker.Command = args
			opts.Worker.ReadyTimeout = time.Duration(readySecs) * time.Second
			opts.Loop.Loop.ReadyTimeout.Duration = opts.Worker.ReadyTimeout
			if err := opts.check(lf); err != nil {
				return err
			}
			if err := checkLifecycleFlags(cmd, args, &opts.Worker, &opts.Loop.Loop); err != nil {
				return err
			}
			var err error
			if opts.Heartbeat, err = parseSpawnHeartbeat(opts.IO, hb, cmd.Flags().Changed); err != nil {
				return err
			}
			opts.dropTmuxOnly()
			warnFlagsAfterCommand(opts.IO, cmd.Flags(), args)
			if runF != nil {
				return runF(opts)
			}
			return runSpawn(opts)
		},
	}
	fs := cmd.Flags()
	// Everything after the command's first word belongs to the command.
	fs.SetInterspersed(false)
	addWorkerSpawnFlags(fs, &opts.Worker)
	addSpawnHeartbeatFlags(fs, &hb)
	intVar(fs, &readySecs, "ready-timeout", int(defaultReadyTimeout/time.Second), 0, noMax,
		"seconds --ready-wait waits (and a ralph loop waits before typing)")
	fs.BoolVar(&opts.Worker.Tmux, "tmux", false, "run in a tmux window")
	fs.BoolVar(&opts.Worker.Worktree, "worktree", false, "run in a new git worktree on branch NAME")
	fs.BoolVar(&opts.Worker.ReadyWait, "ready-wait", false, "wait until the agent looks ready for input")
	fs.BoolVar(&opts.Ralph, "ralph", false, "run a ralph loop (needs --prompt-file and --max-iterations; implies --tmux)")
	// No default cap: spawn --ralph needs one named (docs/ralph.md; 0: not
	// given).
	lf = registerLoopFlags(fs, &opts.Loop, 0, spawnRalphInactivity)
	return cmd
}

// addWorkerSpawnFlags registers the flags spawn and ralph spawn share.
func addWorkerSpawnFlags(fs *pflag.FlagSet, w *worker.SpawnOptions) {
	fs.StringVar(&w.Name, "name", "", "worker name (letters, digits, '.', '_', '-'; max 64)")
	fs.StringVar(&w.Session, "session", "", "tmux session (default swarm-<hash of state root>)")
	fs.StringVar(&w.Socket, "tmux-socket", os.Getenv("SWARM_TMUX_SOCKET"), "tmux socket name (tmux -L; default $SWARM_TMUX_SOCKET)")
	fs.StringVar(&w.Branch, "branch", "", "worktree branch (default: the name)")
	fs.StringVar(&w.WorktreeDir, "worktree-dir", "", "directory to create worktrees in (default <repo>-worktrees)")
	fs.StringArrayVar(&w.Tags, "tag", nil, "tag the worker (repeatable)")
	fs.StringArrayVar(&w.Env, "env", nil, "set KEY=VAL in the command's environment (repeatable)")
	fs.StringVar(&w.Cwd, "cwd", "", "working directory (default: current)")
	fs.BoolVar(&w.FreshBranch, "fresh-branch", false, "move an existing worktree branch to HEAD (or --base) first (refused when that would drop commits or changes)")
	fs.StringVar(&w.Base, "base", "", "branch, tag or commit a new worktree branch starts from (default: HEAD); swarm merge merges into it")
	fs.BoolVar(&w.NewBranch, "new-branch", false, "refuse to reuse an existing worktree branch")
	fs.StringVar(&w.WorktreeSetup, "worktree-setup", "", "shell command run in the worktree before the agent starts (e.g. 'npm ci'); its failure fails the spawn")
	sizeVar(fs, &w.MaxLogSize, "max-log-size", logcap.DefaultMax, logcap.MinMax,
		"cap each output log (a process worker's, each loop iteration's) at this size, keeping its head and tail")
}

// check validates the command line before anything runs: usage errors
// (exit 2) first, then the swarm.py messages that exit 1.
func (o *spawnOptions) check(lf *loopFlags) error {
	if o.Worker.Name == "" {
		return usagef("--name is required")
	}
	if err := lf.finish(); err != nil {
		return err
	}
	// --ready-pattern is a loop flag, and counts for --ready-wait too.
	o.Worker.ReadyPatterns = lf.readyPatterns
	if o.Ralph {
		if o.Loop.Loop.PromptFile == "" {
			return fail(exitFail, "--ralph requires --prompt-file")
		}
		if o.Loop.Loop.MaxIterations == 0 {
			return fail(exitFail, "--ralph requires --max-iterations")
		}
	}
	if len(o.Worker.Command) == 0 {
		return &exitError{code: exitFail, err: worker.ErrNoCommand}
	}
	return checkWorktreeFlags(&o.Worker)
}

// checkLifecycleFlags checks the loop flags of issue 19 against the
// command line: a --notify value given after a space, --on-complete
// without a worktree to merge, --auto-commit without one to commit in.
func checkLifecycleFlags(cmd *cobra.Command, args []string, w *worker.SpawnOptions, l *ralph.Options) error {
	if err := notifySpaced(cmd.Flags().Changed("notify"), args); err != nil {
		return err
	}
	if l.OnComplete != "" && !w.Worktree {
		return usagef("--on-complete needs a worktree to merge (--worktree; ralph spawn makes one unless --no-worktree)")
	}
	if l.AutoCommit && !w.Worktree {
		return usagef("--auto-commit needs a worktree to commit in (--worktree; ralph spawn makes one unless --no-worktree)")
	}
	return nil
}

// warnFlagsAfterCommand warns about words after the command's first word
// that are flags of this spawn command ("-- claude --max-iterations 3"):
// they go to the command, and swarm runs with its defaults, which the
// user finds out in the morning. Not an error: the command may take an
// option of the same name; those of the agent CLIs swarm knows (claude
// --agent) are left out, and so is everything after the command's own
// "--".
func warnFlagsAfterCommand(io *IO, fs *pflag.FlagSet, args []string) {
	var found []string
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		flag, ok := strings.CutPrefix(name, "--")
		if !ok || flag == "" || fs.Lookup(flag) == nil || agent.OwnOption(args, name) || slices.Contains(found, name) {
			continue
		}
		found = append(found, name)
	}
	if len(found) == 0 {
		return
	}
	verb := "is"
	if len(found) > 1 {
		verb = "are"
	}
	io.Warn(fmt.Sprintf("%s after the command %s passed to %s, not read by swarm: put swarm's flags before the command (or before \"--\")",
		strings.Join(found, ", "), verb, filepath.Base(args[0])))
}

// checkWorktreeFlags refuses the worktree set-up flags on a worker that
// gets no worktree: they would be ignored in silence.
func checkWorktreeFlags(w *worker.SpawnOptions) error {
	if w.Worktree {
		return nil
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"--base", w.Base != ""}, {"--new-branch", w.NewBranch}, {"--worktree-setup", w.WorktreeSetup != ""}} {
		if f.set {
			return usagef("%s needs a worktree (--worktree; ralph spawn makes one unless --no-worktree)", f.name)
		}
	}
	return nil
}

// dropTmuxOnly warns about, and drops, what only a tmux worker has, before
// a process worker is spawned: --ready-wait (swarm.py ignores it
// silently: a process has no screen to read) and --heartbeat (swarm.py's
// warning: there is no pane to type into). --ralph implies --tmux.
func (o *spawnOptions) dropTmuxOnly() {
	if o.Worker.Tmux || o.Ralph {
		return
	}
	if o.Worker.ReadyWait {
		o.IO.Warn("--ready-wait has no effect without --tmux")
		o.Worker.ReadyWait = false
	}
	if o.Heartbeat != nil {
		o.IO.Warn(heartbeatNeedsTmux)
		o.Heartbeat = nil
	}
}

func runSpawn(opts *spawnOptions) error {
	if opts.Ralph {
		so := opts.Loop
		so.Worker = opts.Worker
		return startLoop(opts.IO, opts.Manager, so, opts.Heartbeat)
	}
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.Worker.ReadyWait {
		opts.Worker.ReadyProgress = func(msg string) { fmt.Fprintf(opts.IO.Err, "swarm: %s\n", msg) }
	}
	res, err := m.Spawn(opts.Worker)
	if err != nil {
		return workerError(err, exitFail)
	}
	printSpawned(opts.IO, "spawned", res.Worker, "")
	printNotes(opts.IO, res.Notes)
	warnNotReady(opts.IO, res, opts.Worker.ReadyTimeout)
	return startSpawnHeartbeat(opts.IO, m.Store.Root, res.Worker, opts.Heartbeat)
}

// warnNotReady says what came of --ready-wait when the agent did not look
// ready: it exited (at once, usually: a missing login, a bad flag), or it
// did not within the timeout (swarm.py's warning). Either way the spawn
// succeeded, and exits 0.
func warnNotReady(io *IO, res *worker.SpawnResult, timeout time.Duration) {
	name := res.Worker.Name
	switch {
	case res.Exited && res.HasExit:
		io.Warn(fmt.Sprintf("agent '%s' exited before it looked ready (exit %d; see: swarm logs %s)", name, res.ExitCode, name))
	case res.Exited:
		io.Warn(fmt.Sprintf("agent '%s' exited before it looked ready (see: swarm logs %s)", name, name))
	case res.NotReady:
		io.Warn(fmt.Sprintf("agent '%s' did not become ready within %ds", name, timeout/time.Second))
	}
}

// printNotes prints what spawn did that the user may not expect, as notes
// on stderr (stdout keeps swarm.py's lines for scripts).
func printNotes(io *IO, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(io.Err, "swarm: note: %s\n", n)
	}
}

// printSpawned prints "spawned N (tmux: S:W)" or "spawned N (pid: P)"
// (verb "respawned" for respawn), then suffix.
func printSpawned(io *IO, verb string, w *state.Worker, suffix string) {
	switch {
	case w.Tmux != nil:
		fmt.Fprintf(io.Out, "%s %s (tmux: %s:%s)%s\n", verb, w.Name, w.Tmux.Session, w.Tmux.Window, suffix)
	case w.PID != nil:
		fmt.Fprintf(io.Out, "%s %s (pid: %d)%s\n", verb, w.Name, *w.PID, suffix)
	default:
		fmt.Fprintf(io.Out, "%s %s%s\n", verb, w.Name, suffix)
	}
}
