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
	dryRun bool
	file   string
	force  bool
}

func newInitCmd(e *env) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Teach agents in this project to use swarm (adds a section to AGENTS.md or CLAUDE.md)",
		Example: `  swarm init
  swarm init --file CLAUDE.md --dry-run`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error { return runInit(e, o) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would change, change nothing")
	cmd.Flags().StringVar(&o.file, "file", "", "instructions file (default: AGENTS.md, or CLAUDE.md if only that exists)")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace an existing swarm section")
	return cmd
}

func runInit(e *env, o *initOptions) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fail(1, "%v", err)
	}
	path := o.file
	if path == "" {
		path = instructions.DefaultFile(cwd)
	} else if b := filepath.Base(path); b != "AGENTS.md" && b != "CLAUDE.md" {
		return usagef("invalid --file '%s' (use AGENTS.md or CLAUDE.md)", o.file)
	}
	name := filepath.Base(path)
	if o.file != "" {
		name = o.file
	}
	section := templates.AgentsSection()
	var outcome instructions.Outcome
	if o.dryRun {
		outcome, _, err = instructions.Plan(path, section, o.force)
	} else {
		outcome, err = instructions.Apply(path, section, o.force)
	}
	if err != nil {
		return fail(1, "cannot update %s: %v", name, err)
	}
	prefix := ""
	if o.dryRun {
		prefix = "would: "
	}
	switch outcome {
	case instructions.Created:
		fmt.Fprintf(e.io.Out, "%sCreated %s\n", prefix, name)
	case instructions.Added:
		fmt.Fprintf(e.io.Out, "%sAdded swarm instructions to %s\n", prefix, name)
	case instructions.Updated:
		fmt.Fprintf(e.io.Out, "%sUpdated swarm instructions in %s\n", prefix, name)
	case instructions.Present:
		fmt.Fprintf(e.io.Err, "swarm: %s already contains swarm instructions\n", name)
		return nil
	}
	if o.dryRun {
		fmt.Fprint(e.io.Out, "\n"+section)
	}
	return nil
}
