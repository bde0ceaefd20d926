package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

type lsOptions struct {
	format string
	status string
	tag    string
}

func newLsCmd(e *env) *cobra.Command {
	o := &lsOptions{}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List workers with their live status",
		Example: `  swarm ls
  swarm ls --status running --format names
  swarm ls --format json | jq '.[] | select(.metadata.ralph == true)'`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error { return runLs(e, o) },
	}
	cmd.Flags().StringVar(&o.format, "format", "table", "output format: table, json or names")
	cmd.Flags().StringVar(&o.status, "status", "all", "show only running, stopped or all workers")
	cmd.Flags().StringVar(&o.tag, "tag", "", "show only workers with this tag")
	return cmd
}

func runLs(e *env, o *lsOptions) error {
	if err := oneOf("--format", o.format, "table", "json", "names"); err != nil {
		return err
	}
	if err := oneOf("--status", o.status, "running", "stopped", "all"); err != nil {
		return err
	}
	live, err := e.manager().List()
	if err != nil {
		return fail(1, "%v", err)
	}
	var shown []worker.Live
	for _, l := range live {
		if o.status != "all" && l.Status != o.status {
			continue
		}
		if o.tag != "" && !contains(l.Tags, o.tag) {
			continue
		}
		shown = append(shown, l)
	}
	switch o.format {
	case "json":
		records := make([]state.Worker, 0, len(shown))
		for _, l := range shown {
			records = append(records, l.Worker)
		}
		return printJSON(e, records)
	case "names":
		for _, l := range shown {
			fmt.Fprintln(e.io.Out, l.Name)
		}
		return nil
	}
	if len(shown) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(e.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tPID/WINDOW\tSTARTED\tWORKTREE\tTAG")
	for _, l := range shown {
		where := "-"
		if l.Tmux != nil {
			where = l.Tmux.Session + ":" + l.Tmux.Window
		} else if l.PID != nil {
			where = fmt.Sprint(*l.PID)
		}
		wt := "-"
		if l.Worktree != nil {
			wt = l.Worktree.Path
		}
		tags := "-"
		if len(l.Tags) > 0 {
			tags = strings.Join(l.Tags, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Name, l.Status, where, age(l.Started), wt, tags)
	}
	return tw.Flush()
}

func age(t state.Timestamp) string {
	if t.IsZero() {
		return "-"
	}
	return duration.Age(time.Since(t.Time))
}

func printJSON(e *env, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintln(e.io.Out, string(data))
	return nil
}

func oneOf(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return usagef("invalid %s '%s' (use %s)", flag, value, strings.Join(allowed, ", "))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
