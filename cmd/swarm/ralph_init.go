package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/templates"
)

func newRalphInitCmd(e *env) *cobra.Command {
	var force bool
	var name string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a starter PROMPT.md in the current directory",
		Example: `  swarm ralph init
  swarm ralph init --template promise --force`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := templates.Ralph(name)
			if err != nil {
				return fail(1, "%v", err)
			}
			_, statErr := os.Stat("PROMPT.md")
			exists := statErr == nil
			if exists && !force {
				return fail(1, "PROMPT.md already exists (use --force to overwrite)")
			}
			if err := state.WriteFileAtomic("PROMPT.md", []byte(text)); err != nil {
				return fail(1, "cannot write PROMPT.md: %v", err)
			}
			os.Chmod("PROMPT.md", 0o644)
			if exists {
				fmt.Fprintln(e.io.Out, "created PROMPT.md (overwritten)")
			} else {
				fmt.Fprintln(e.io.Out, "created PROMPT.md")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing PROMPT.md")
	cmd.Flags().StringVar(&name, "template", templates.DefaultRalph, "template to use (see: swarm ralph template --list)")
	return cmd
}

func newRalphTemplateCmd(e *env) *cobra.Command {
	var list bool
	cmd := &cobra.Command{
		Use:   "template [NAME]",
		Short: "Print a prompt template (default: the minimal one)",
		Example: `  swarm ralph template > BUILD_PROMPT.md
  swarm ralph template plan
  swarm ralph template --list`,
		Args: argsRange(0, 1, "at most one template name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				for _, n := range templates.RalphNames() {
					fmt.Fprintln(e.io.Out, n)
				}
				return nil
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			text, err := templates.Ralph(name)
			if err != nil {
				return fail(1, "%v", err)
			}
			fmt.Fprint(e.io.Out, text)
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the template names")
	return cmd
}
