package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worker"
)

type ralphSetOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
	Set  ralph.Settings
}

func newCmdRalphSet(f *factory, runF func(*ralphSetOptions) error) *cobra.Command {
	opts := &ralphSetOptions{IO: f.IO, Manager: f.Manager}
	var maxIter int
	var inactivity, maxTime time.Duration
	var maxCost float64
	var maxTokens int64
	cmd := &cobra.Command{
		Use:   "set NAME [--max-iterations M] [--inactivity-timeout T] [--max-time D] [--max-cost USD] [--max-tokens N]",
		Short: "Change a loop's iteration cap, inactivity timeout, time, cost or token budget while it runs",
		Long: `Change a running (or paused, or ended) loop's settings. The monitor picks them
up at its next decision: a new cap or time budget when the current iteration
ends (a cost or token budget also at its next poll), a new inactivity timeout
from the next iteration on. Raising the cap of a loop that ended at it lets
swarm ralph resume continue it.`,
		Example: `  swarm ralph set builder --max-iterations 80
  swarm ralph set builder --max-time 10h --inactivity-timeout 5m
  swarm ralph set builder --max-cost 20`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			fs := cmd.Flags()
			if fs.Changed("max-iterations") {
				opts.Set.MaxIterations = &maxIter
			}
			if fs.Changed("inactivity-timeout") {
				opts.Set.InactivityTimeout = &inactivity
			}
			if fs.Changed("max-time") {
				opts.Set.MaxTime = &maxTime
			}
			if fs.Changed("max-cost") {
				opts.Set.MaxCost = &maxCost
			}
			if fs.Changed("max-tokens") {
				opts.Set.MaxTokens = &maxTokens
			}
			if opts.Set == (ralph.Settings{}) {
				return usagef("give at least one of --max-iterations, --inactivity-timeout, --max-time, --max-cost, --max-tokens")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRalphSet(opts)
		},
	}
	fs := cmd.Flags()
	intVar(fs, &maxIter, "max-iterations", 0, 1, noMax, "the new iteration cap")
	durationVar(fs, &inactivity, "inactivity-timeout", 0, minInactivity, "the new inactivity timeout")
	durationVar(fs, &maxTime, "max-time", 0, 0, "the new time budget of the whole loop (0: none)")
	costVar(fs, &maxCost, "max-cost", "the new cost budget of the whole loop, in US dollars (0: none)")
	tokensVar(fs, &maxTokens, "max-tokens", "the new token budget of the whole loop (0: none)")
	return cmd
}

func runRalphSet(opts *ralphSetOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	st, err := ralph.SetLoop(m, opts.Name, opts.Set)
	if err != nil {
		return ralphError(opts.IO, err)
	}
	budget := "none"
	if st.MaxTime.Duration > 0 {
		budget = duration.Words(st.MaxTime.Duration)
	}
	// swarm.py's line, then the budgets it did not have, when set.
	var more string
	if st.MaxCost > 0 {
		more += ", cost budget " + ralph.FormatCost(st.MaxCost)
	}
	if st.MaxTokens > 0 {
		more += fmt.Sprintf(", token budget %d", st.MaxTokens)
	}
	fmt.Fprintf(opts.IO.Out, "set ralph loop %s: max iterations %d, inactivity timeout %ds, time budget %s%s\n",
		opts.Name, st.MaxIterations, st.InactivityTimeout.Int(), budget, more)
	return nil
}
