package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/templates"
)

// promptFile is what ralph init writes, in the current directory.
const promptFile = "PROMPT.md"

type ralphInitOptions struct {
	IO *IO

	Template string
	Force    bool
}

func newCmdRalphInit(f *factory, runF func(*ralphInitOptions) error) *cobra.Command {
	opts := &ralphInitOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starter PROMPT.md in the current directory",
		Long: `Write PROMPT.md, a starter prompt for a ralph loop, in the current directory.
It is a skeleton: customize it for your project (what to build, where the plan
lives, which tests must pass, how to say it is done) before starting a loop.
The default template (swarm.py's) asks for no completion signal: a loop on it
runs until --max-iterations unless you add one (init says so). --template
picks another starting point (swarm ralph template --list); plan and promise
end with <promise>COMPLETE</promise>.`,
		Example: `  swarm ralph init
  swarm ralph init --template promise --force`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRalphInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing PROMPT.md")
	enumVar(cmd.Flags(), &opts.Template, "template", templates.DefaultRalph, templates.RalphNames(),
		"template to use (see: swarm ralph template --list)")
	return cmd
}

func runRalphInit(opts *ralphInitOptions) error {
	text, err := templates.Ralph(opts.Template)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	_, statErr := os.Stat(promptFile)
	exists := statErr == nil
	if exists && !opts.Force {
		return fail(exitFail, "%s already exists (use --force to overwrite)", promptFile)
	}
	// A prompt is project text, readable like the rest of the project.
	if err := state.WriteFileAtomicPerm(promptFile, []byte(text), 0o644); err != nil {
		return fail(exitFail, "cannot write %s: %w", promptFile, err)
	}
	if exists {
		fmt.Fprintf(opts.IO.Out, "created %s (overwritten)\n", promptFile)
	} else {
		fmt.Fprintf(opts.IO.Out, "created %s\n", promptFile)
	}
	if !templates.HasCompletionSignal(text) {
		// swarm.py's default template asks for no completion signal: say
		// so, or the loop silently runs to its cap.
		fmt.Fprintf(opts.IO.Err, "swarm: note: %s has no completion signal, so a loop on it runs until --max-iterations (%d by default); "+
			"add a line telling the agent to print %s when all the work is done, or start from: swarm ralph init --template plan --force\n",
			promptFile, ralphMaxIterations, templates.CompletionTag)
	}
	return nil
}

type ralphTemplateOptions struct {
	IO *IO

	Name string // "": the default template
	List bool
}

func newCmdRalphTemplate(f *factory, runF func(*ralphTemplateOptions) error) *cobra.Command {
	opts := &ralphTemplateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "template [NAME]",
		Short: "Print a prompt template (default: the minimal one)",
		Example: `  swarm ralph template > BUILD_PROMPT.md
  swarm ralph template plan
  swarm ralph template --list`,
		Args: argsRange(0, 1, "at most one template name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runRalphTemplate(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the templates, one line each: name and what it is for")
	return cmd
}

func runRalphTemplate(opts *ralphTemplateOptions) error {
	if opts.List {
		names := templates.RalphNames()
		width := 0
		for _, n := range names {
			width = max(width, len(n))
		}
		for _, n := range names {
			fmt.Fprintf(opts.IO.Out, "%-*s  %s\n", width, n, templates.RalphSummary(n))
		}
		return nil
	}
	text, err := templates.Ralph(opts.Name)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprint(opts.IO.Out, text)
	return nil
}
