package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/instructions"
	"github.com/swarmtools/swarm/templates"
)

type initOptions struct {
	IO *IO

	DryRun bool
	File   string // "": AGENTS.md, or CLAUDE.md if only that exists
	Force  bool
}

func newCmdInit(f *factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Teach agents in this project to use swarm (adds a section to AGENTS.md or CLAUDE.md)",
		Example: `  swarm init
  swarm init --file CLAUDE.md --dry-run`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if b := filepath.Base(opts.File); opts.File != "" && b != "AGENTS.md" && b != "CLAUDE.md" {
				return usagef("invalid --file '%s' (use AGENTS.md or CLAUDE.md)", opts.File)
			}
			if runF != nil {
				return runF(opts)
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, change nothing")
	cmd.Flags().StringVar(&opts.File, "file", "", "instructions file (default: AGENTS.md, or CLAUDE.md if only that exists)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing swarm section")
	return cmd
}

func runInit(opts *initOptions) error {
	path, name := opts.File, opts.File
	if path == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return &exitError{code: exitFail, err: err}
		}
		path = instructions.DefaultFile(cwd)
		name = filepath.Base(path)
	}
	section := templates.AgentsSection()
	var outcome instructions.Outcome
	var err error
	if opts.DryRun {
		outcome, _, err = instructions.Plan(path, section, opts.Force)
	} else {
		outcome, err = instructions.Apply(path, section, opts.Force)
	}
	if err != nil {
		return fail(exitFail, "cannot update %s: %w", name, err)
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
		return nil
	}
	if opts.DryRun {
		fmt.Fprint(opts.IO.Out, "\n"+section)
	}
	return nil
}
