package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Main runs swarm with args and returns the process exit code. The state
// root comes from the environment ($SWARM_HOME, $SWARM_DIR, ~/.swarm).
func Main(args []string, streams *IO) int {
	if len(args) > 0 && args[0] == eventCommand {
		return runHook(streams, args)
	}
	return execute(newFactory(streams, ""), args)
}

// runHook runs _event, which an agent's hooks run: it exits 0 whatever
// happens (a bad flag from a settings file written by an older or newer
// swarm, a panic). Claude Code reads a hook's exit status 2 as "block":
// a tool call refused, a prompt dropped, a turn that does not end.
func runHook(streams *IO, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(streams.Err, "swarm: error: %s: %v\n", eventCommand, r)
		}
		code = exitOK
	}()
	_ = execute(newFactory(streams, ""), args) // its error is on stderr already; the hook's status stays 0
	return exitOK
}

// execute runs the command line args with the commands built from f: on
// a host when it names one (--host, HOST:worker), else here.
func execute(f *factory, args []string) int {
	if mayForward(args) {
		fw, err := planForward(newCmdRoot(f, args), args)
		if err != nil {
			return report(f.IO.Err, fw.cmd, err)
		}
		if fw != nil {
			return runForward(f, fw)
		}
	}
	return runCommand(f.IO, newCmdRoot(f, args), args)
}

// runCommand executes cmd with args, reports its error on streams and
// returns the exit code.
func runCommand(streams *IO, cmd *cobra.Command, args []string) int {
	cmd.SetArgs(args)
	failed, err := cmd.ExecuteC()
	if err == nil {
		return exitOK
	}
	return report(streams.Err, failed, err)
}

// topCommand is one of the root's commands: the names that run it and
// how it is built.
type topCommand struct {
	names []string // its name, then its aliases
	build func(*factory) *cobra.Command
}

// topCommands returns the root's commands (help sorts them). A command
// line builds only the one it names (newCmdRoot): building them all,
// about 300 flags and 1,800 allocations, was a third of every command's
// start-up. TestTopCommandsAreTheTree holds the names to the commands'
// own. (A function, not a variable: the commands' code builds roots.)
func topCommands() []topCommand {
	return []topCommand{
		{[]string{"spawn"}, func(f *factory) *cobra.Command { return newCmdSpawn(f, nil) }},
		{[]string{"ls", "list"}, func(f *factory) *cobra.Command { return newCmdLs(f, nil) }},
		{[]string{"status"}, func(f *factory) *cobra.Command { return newCmdStatus(f, nil) }},
		{[]string{"peek"}, func(f *factory) *cobra.Command { return newCmdPeek(f, nil) }},
		{[]string{"logs"}, func(f *factory) *cobra.Command { return newCmdLogs(f, nil) }},
		{[]string{"attach"}, func(f *factory) *cobra.Command { return newCmdAttach(f, nil) }},
		{[]string{"send"}, func(f *factory) *cobra.Command { return newCmdSend(f, nil) }},
		{[]string{"interrupt"}, func(f *factory) *cobra.Command { return newCmdInterrupt(f, nil) }},
		{[]string{"eof"}, func(f *factory) *cobra.Command { return newCmdEOF(f, nil) }},
		{[]string{"wait"}, func(f *factory) *cobra.Command { return newCmdWait(f, nil) }},
		{[]string{"kill"}, func(f *factory) *cobra.Command { return newCmdKill(f, nil) }},
		{[]string{"clean"}, func(f *factory) *cobra.Command { return newCmdClean(f, nil) }},
		{[]string{"respawn"}, func(f *factory) *cobra.Command { return newCmdRespawn(f, nil) }},
		{[]string{"init"}, func(f *factory) *cobra.Command { return newCmdInit(f, nil) }},
		{[]string{"version"}, func(f *factory) *cobra.Command { return newCmdVersion(f, nil) }},
		{[]string{"ralph"}, newCmdRalph},
		{[]string{"heartbeat"}, newCmdHeartbeat},
		{[]string{"top"}, func(f *factory) *cobra.Command { return newCmdTop(f, nil) }},
		{[]string{logPipeCommand}, func(f *factory) *cobra.Command { return newCmdLogPipe(f, nil) }},
		{[]string{superviseCommand}, func(f *factory) *cobra.Command { return newCmdSupervise(f, nil) }},
		{[]string{execCommand}, func(f *factory) *cobra.Command { return newCmdExec(f, nil) }},
		{[]string{eventCommand}, func(f *factory) *cobra.Command { return newCmdEvent(f, nil) }},
		{[]string{"hosts"}, newCmdHosts},
		{[]string{withPromptCommand}, newCmdWithPrompt},
		{[]string{"merge"}, func(f *factory) *cobra.Command { return newCmdMerge(f, nil) }},
		{[]string{"diff"}, func(f *factory) *cobra.Command { return newCmdDiff(f, nil) }},
		{[]string{"restore"}, func(f *factory) *cobra.Command { return newCmdRestore(f, nil) }},
	}
}

// commandsReached returns the root's commands the command line args can
// reach, and whether that is all of them: the one it names; none when it
// names none and asks for the version (cobra then prints it and runs
// nothing); else all, for what lists or looks them up (help, completion,
// an unknown command's suggestions, the root's own usage).
func commandsReached(args []string) (reached []topCommand, all bool) {
	every := topCommands()
	named, version := "", false
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			named = a // the root's own flags take no value: the first word that is not one is the command
			break
		}
		switch a {
		case "-h", "--help":
			return every, true
		case "-v", "--version":
			version = true
		}
	}
	if named == "" && version {
		return nil, false
	}
	for _, c := range every {
		for _, n := range c.names {
			if n == named {
				return []topCommand{c}, false
			}
		}
	}
	return every, true
}

// newCmdRoot returns the root command with the commands args can reach
// (commandsReached); nil args: all of them.
func newCmdRoot(f *factory, args []string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run AI coding agents as workers in tmux, and drive them in ralph loops",
		Long: `swarm runs agent CLIs (claude, codex, aider, opencode, or any command) as
workers in tmux windows or as background processes, each optionally in its own
git worktree, and drives them in ralph loops that restart the agent with a
fresh context until the work is done.

State lives in $SWARM_HOME (else $SWARM_DIR, else ~/.swarm).`,
		Example: `  swarm spawn --name fix-tests --tmux --worktree -- claude
  swarm ls
  swarm peek fix-tests
  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude --dangerously-skip-permissions`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// Streams first: the completion command captures its output stream
	// when it is created.
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.Err)
	cmd.SetVersionTemplate("swarm {{.Version}}\n")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "swarm ralph stauts --name x" fails on --name while parsing the
		// group's flags; the real mistake is the command.
		if c.HasSubCommands() && c.Flags().NArg() > 0 {
			return unknownCommand(c, c.Flags().Arg(0))
		}
		return flagError(err)
	})
	reached, all := commandsReached(args)
	for _, c := range reached {
		cmd.AddCommand(c.build(f))
	}
	addHostFlags(cmd)
	if all {
		cmd.InitDefaultCompletionCmd()
	} else {
		// The completion command is reached by its name, which builds
		// them all.
		cmd.CompletionOptions.DisableDefaultCmd = true
	}
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
	if all {
		addCompletions(f, cmd) // read by __complete only, which builds them all
	}
	return cmd
}

// requireSubcommands makes every command group under c (a command with
// subcommands and nothing to run itself) fail as a usage error when called
// bare or with an unknown subcommand. cobra checks that only at the top
// level; below it a group prints its help and exits 0.
func requireSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	// A usage template is inherited: the group's own one (below) must not
	// reach its subcommands, so they get the one they had.
	inherited := c.UsageTemplate()
	for _, sub := range c.Commands() {
		if sub.HasSubCommands() {
			requireSubcommands(sub)
		} else {
			sub.SetUsageTemplate(inherited)
		}
	}
	if c.Runnable() {
		return
	}
	// Runnable now, the group's help would list "swarm ralph [flags]" as a
	// usage: drop that line from cobra's template.
	c.SetUsageTemplate(strings.Replace(inherited, "{{if .Runnable}}\n  {{.UseLine}}{{end}}", "", 1))
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return usagef("missing command for %q", cmd.CommandPath())
	}
}

// argsRange validates the number of positional arguments as a usage error.
func argsRange(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			return usagef("%s expects %s", cmd.CommandPath(), what)
		}
		return nil
	}
}

type versionOptions struct {
	IO *IO
}

func newCmdVersion(f *factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the swarm version",
		Example: `  swarm version`,
		Args:    argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
}

func runVersion(opts *versionOptions) error {
	fmt.Fprintf(opts.IO.Out, "swarm %s\n", version)
	return nil
}

// nameOrAllRunE is the RunE of a command on one worker NAME or --all: it
// sets *name from the arguments (nameOrAll), then runs the test's runF
// when there is one, else run.
func nameOrAllRunE[T any](name *string, all *bool, opts T, runF, run func(T) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		var err error
		if *name, err = nameOrAll(args, *all); err != nil {
			return err
		}
		if runF != nil {
			return runF(opts)
		}
		return run(opts)
	}
}

// nameOrAll resolves the "NAME or --all" choice of kill, clean, peek,
// interrupt, wait, send and ralph clean: the name, or "" for --all.
func nameOrAll(args []string, all bool) (string, error) {
	switch {
	case all && len(args) > 0:
		return "", usagef("give a worker name or --all, not both")
	case all:
		return "", nil
	case len(args) == 0:
		// Neither: swarm.py exits 1 (not 2) with "must specify ..." here,
		// and scripts may test for 1, so this one usage mistake keeps
		// exit 1.
		return "", fail(exitFail, "must specify a worker name or --all")
	}
	return args[0], nil
}
