package main

// Shell completion: worker, loop and heartbeat names for the commands that
// take one, and flag values. cobra's "swarm completion SHELL" scripts ask
// "swarm __complete ARGS..." on every TAB, in the user's environment (so
// $SWARM_HOME picks the state root as for any command).
//
// A completion runs on every TAB, often many times a second: it reads the
// state files and nothing else. It never runs tmux, takes no lock, writes
// nothing and prints no warning (state.Store.Load, RalphStore.Load and the
// heartbeat store's List only read). So it cannot see whether a worker
// really runs: the registry's status is as the last command left it. A
// "stopped" record is reliable (only a respawn makes it run again, and that
// writes "running"), a "running" one may be stale; the lists below leave
// out only what the command would surely refuse.

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/templates"
)

// candidate is one completion: a name and what the shell may show beside
// it (zsh, fish and powershell do; bash shows names only).
type candidate struct{ name, desc string }

// nameSource lists the candidates of a NAME argument under the state root.
type nameSource func(root string) []candidate

// nameCompletions is what the NAME argument of each command completes to,
// by command path. The table, not each constructor, sets them so that one
// place says what every command offers; TestNameCompletionsCoverCommands
// fails for a command with a NAME argument missing here, or for a path
// here that names no command.
var nameCompletions = map[string]nameSource{
	"status":  workers(anyWorker),
	"logs":    workers(anyWorker),
	"respawn": workers(plainWorker),
	// A stopped tmux worker keeps its window when its command exited:
	// peek shows its last screen.
	"peek":      workers(tmuxWorker),
	"attach":    workers(liveTmuxWorker),
	"send":      workers(liveTmuxWorker),
	"interrupt": workers(liveTmuxWorker),
	"eof":       workers(liveTmuxWorker),
	"wait":      workers(liveWorker),
	"kill":      workers(killableWorker),
	// Every worker: a "running" record may be stale, and clean is how
	// such a worker goes.
	"clean": workers(anyWorker),
	// The workers with a branch of their own.
	"merge": workers(worktreeWorker),
	"diff":  workers(worktreeWorker),
	// Any: a "running" record may be lost.
	"restore": workers(anyWorker),

	"ralph status": loops(anyLoop),
	"ralph logs":   loops(anyLoop),
	"ralph wait":   loops(anyLoop),
	"ralph clean":  loops(anyLoop),
	"ralph run":    loops(anyLoop),
	"ralph set":    loops(anyLoop),
	"ralph pause":  loops((*state.Ralph).Runs),
	"ralph stop":   loops((*state.Ralph).Active),
	// resume also restarts a loop that ended (failed, killed).
	"ralph resume":   loops(anyLoop),
	"ralph template": fixedNames(templates.RalphNames()),

	"heartbeat start":  workers(liveTmuxWorker),
	"heartbeat status": heartbeats(anyHeartbeat),
	"heartbeat stop":   heartbeats((*heartbeat.State).Live),
	"heartbeat pause":  heartbeats(activeHeartbeat),
	// resume also restarts an active heartbeat whose process died.
	"heartbeat resume": heartbeats((*heartbeat.State).Live),

	// hosts add names a new host: nothing to offer.
	"hosts add":     fixedNames(nil),
	"hosts rm":      hostNames,
	"hosts check":   hostNames,
	"hosts install": hostNames,
}

// commandArgs are the commands whose arguments are a command line to
// run: those complete as files, as the shell would without swarm.
var commandArgs = map[string]bool{"spawn": true, "ralph spawn": true}

// addCompletions gives every command under root the completion of its
// arguments and flag values. A completion set in a command's constructor
// is kept.
func addCompletions(f *factory, root *cobra.Command) {
	for _, c := range root.Commands() {
		// cobra's own commands complete themselves.
		if c.Name() == "completion" || c.Name() == "help" {
			continue
		}
		addCompletionsTo(f, c)
	}
}

func addCompletionsTo(f *factory, c *cobra.Command) {
	for _, sub := range c.Commands() {
		addCompletionsTo(f, sub)
	}
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if _, ok := c.GetFlagCompletionFunc(fl.Name); ok {
			return
		}
		if fn := flagCompletion(f, c, fl); fn != nil {
			_ = c.RegisterFlagCompletionFunc(fl.Name, fn) // cannot fail: the flag exists and has no function yet
		}
	})
	// A group (ralph, heartbeat) completes its subcommands' names.
	if c.ValidArgsFunction != nil || c.HasSubCommands() {
		return
	}
	path := commandPath(c)
	switch src, ok := nameCompletions[path]; {
	case ok:
		c.ValidArgsFunction = completeName(f, src)
	case commandArgs[path]:
		c.ValidArgsFunction = fileValues(cobra.ShellCompDirectiveDefault)
	default:
		// No arguments, or none swarm can guess: no file names either.
		c.ValidArgsFunction = cobra.NoFileCompletions
	}
}

// commandPath is c's path below the program: "kill", "ralph status".
func commandPath(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// completeName completes the one NAME argument of a command from src.
func completeName(f *factory, src nameSource) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// Every such command takes one name, and none with --all (send's
		// first argument is then the text).
		if len(args) > 0 || flagChanged(cmd, "all") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		root, err := f.Root()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completions(src(root), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func flagChanged(cmd *cobra.Command, name string) bool {
	fl := cmd.Flags().Lookup(name)
	return fl != nil && fl.Changed
}

// completions turns the candidates starting with prefix into cobra's
// completions, sorted by name.
func completions(cands []candidate, prefix string) []cobra.Completion {
	sort.Slice(cands, func(i, j int) bool { return cands[i].name < cands[j].name })
	var out []cobra.Completion
	for _, c := range cands {
		if !strings.HasPrefix(c.name, prefix) {
			continue
		}
		if c.desc == "" {
			out = append(out, c.name)
		} else {
			out = append(out, cobra.CompletionWithDesc(c.name, c.desc))
		}
	}
	return out
}

// fixedNames is a nameSource of names known without the state root.
func fixedNames(names []string) nameSource {
	return func(string) []candidate {
		out := make([]candidate, len(names))
		for i, n := range names {
			out[i] = candidate{name: n}
		}
		return out
	}
}

// flagCompletion is what the value of flag fl of c completes to, or nil
// for file names (cobra's default).
func flagCompletion(f *factory, c *cobra.Command, fl *pflag.Flag) cobra.CompletionFunc {
	if e, ok := fl.Value.(*enumValue); ok {
		// --format, --status, --prompt-mode, --template
		return fixedValues(e.allowed)
	}
	switch {
	case fl.Name == "agent":
		return fixedValues(agent.Names())
	case fl.Name == "notify":
		return fixedValues([]string{"desktop", "webhook:", "ntfy:"})
	case fl.Name == "file" && commandPath(c) == "init":
		return fixedValues([]string{"AGENTS.md", "CLAUDE.md"})
	case fl.Name == "prompt-file":
		return fileValues(cobra.ShellCompDirectiveDefault)
	case fl.Name == "cwd" || fl.Name == "worktree-dir":
		return fileValues(cobra.ShellCompDirectiveFilterDirs)
	case fl.Name == "tag":
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			root, err := f.Root()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completions(tags(root), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	switch fl.Value.(type) {
	case *intValue, *durationValue, rawDuration:
		// A number or a duration: nothing to offer, and no file names.
		return cobra.NoFileCompletions
	}
	return nil
}

// fixedValues completes a flag value from values.
func fixedValues(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completions(fixedNames(values)(""), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// fileValues leaves an argument or a flag value to the shell's completion of paths
// (directive Default: files, FilterDirs: directories).
func fileValues(d cobra.ShellCompDirective) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, d
	}
}
