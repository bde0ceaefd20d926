package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/instructions"
	"github.com/swarmtools/swarm/internal/sandbox"
	"github.com/swarmtools/swarm/templates"
)

type initOptions struct {
	IO *IO

	DryRun bool
	File   string // "": AGENTS.md, or CLAUDE.md if only that exists
	Force  bool
	// WithSandbox also writes the sandbox kit (internal/sandbox) into the
	// current directory; DryRun and Force apply to it too.
	WithSandbox bool
}

func newCmdInit(f *factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Teach agents in this project to use swarm (adds a section to AGENTS.md or CLAUDE.md)",
		Long: `Add a "Process Management (swarm)" section to the project's agent instructions
(AGENTS.md, or CLAUDE.md when only that exists), so agents know how to run and
watch workers with swarm. Running it again changes nothing; --force replaces
the section with the current one.

--with-sandbox also writes, into the current directory, a kit for running
ralph loops in a Docker sandbox: sandbox.sh, Dockerfile.sandbox,
setup-sandbox-network.sh, teardown-sandbox-network.sh, ORCHESTRATOR.md and
PROMPT.md. Existing files are kept; with --force the kit's scripts and
Dockerfile are brought up to date, never PROMPT.md or ORCHESTRATOR.md.`,
		Example: `  swarm init
  swarm init --file CLAUDE.md --dry-run
  swarm init --with-sandbox`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if b := filepath.Base(opts.File); opts.File != "" && b != "AGENTS.md" && b != "CLAUDE.md" {
				return choiceError("--file", opts.File, "AGENTS.md or CLAUDE.md")
			}
			if runF != nil {
				return runF(opts)
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, change nothing")
	cmd.Flags().StringVar(&opts.File, "file", "", "instructions file (default: AGENTS.md, or CLAUDE.md if only that exists)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing swarm section (and, with --with-sandbox, outdated kit scripts)")
	cmd.Flags().BoolVar(&opts.WithSandbox, "with-sandbox", false, "also write the Docker sandbox kit for ralph loops into the current directory")
	return cmd
}

func runInit(opts *initOptions) error {
	shown, err := writeInstructions(opts)
	if err != nil || !opts.WithSandbox {
		return err
	}
	if shown {
		// Keep the kit's lines apart from the section shown above them.
		fmt.Fprintln(opts.IO.Out)
	}
	return writeSandbox(opts)
}

// writeSandbox writes the sandbox kit into the current directory and
// prints what it did with each file. On failure sandbox.Write has undone
// what it did, so nothing is reported as created.
func writeSandbox(opts *initOptions) error {
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	actions, err := sandbox.Write(cwd, sandbox.Options{DryRun: opts.DryRun, Force: opts.Force})
	if err != nil {
		return fail(exitFail, "%w (no sandbox file was changed)", err)
	}
	for _, a := range actions {
		fmt.Fprintln(opts.IO.Out, a.Message())
	}
	return nil
}

// writeInstructions adds (or with --dry-run, shows) the swarm section of
// the agent instructions file; shown reports that the section was printed.
func writeInstructions(opts *initOptions) (shown bool, err error) {
	path, name := opts.File, opts.File
	if path == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return false, &exitError{code: exitFail, err: err}
		}
		path = instructions.DefaultFile(cwd)
		name = filepath.Base(path)
	}
	section := templates.AgentsSection()
	var outcome instructions.Outcome
	if opts.DryRun {
		outcome, _, err = instructions.Plan(path, section, opts.Force)
	} else {
		outcome, err = instructions.Apply(path, section, opts.Force)
	}
	if err != nil {
		return false, fail(exitFail, "cannot update %s: %w", name, err)
	}
	prefix := ""
	if opts.DryRun {
		prefix = "would: "
	}
	switch outcome {
	case instructions.Created:
		fmt.Fprintf(opts.IO.Out, "%sCreated %s\n", prefix, name)
	case instructions.Added:
		fmt.Fprintf(opts.IO.Out, "%sAdded swarm instructions to %s\n", prefix, name)
	case instructions.Updated:
		fmt.Fprintf(opts.IO.Out, "%sUpdated swarm instructions in %s\n", prefix, name)
	case instructions.Present:
		fmt.Fprintf(opts.IO.Err, "swarm: %s already contains swarm instructions\n", name)
		return false, nil
	}
	if opts.DryRun {
		fmt.Fprint(opts.IO.Out, "\n"+section)
	}
	return opts.DryRun, nil
}
