package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

type mergeOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name  string
	Merge worker.MergeOptions // --into, --strategy, --dry-run
}

func newCmdMerge(f *factory, runF func(*mergeOptions) error) *cobra.Command {
	opts := &mergeOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "merge NAME",
		Short: "Merge a worker's branch into its base branch, in a temporary worktree",
		Long: `Merge a worktree worker's branch into the branch it was made from (--base, else
the branch checked out when it was spawned), or into --into BRANCH. It shows
the commits and the diffstat that land, then merges in a temporary worktree of
its own, so no checkout of yours is ever left half merged; the target branch
moves only once the merge succeeded (fast-forwarded where it is checked out).
A conflict lists the files and changes nothing, with the commands that resolve
it. A worker whose ralph loop has not ended, or whose worktree holds
uncommitted changes to tracked files, is refused. Untracked files are not
merged and stop nothing, unless one sits at a path the merge writes (named).`,
		Example: `  swarm merge fixer --dry-run
  swarm merge fixer
  swarm merge fixer --into release --strategy squash`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runMerge(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Merge.Into, "into", "", "branch to merge into (default: the worker's base branch)")
	enumVar(fs, &opts.Merge.Strategy, "strategy", worktree.StrategyMerge, worktree.Strategies,
		"merge (a merge commit), rebase (the commits replayed on the target) or squash (one commit)")
	fs.BoolVar(&opts.Merge.DryRun, "dry-run", false, "show what would land and whether it conflicts; change nothing")
	return cmd
}

func runMerge(opts *mergeOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	res, err := m.Merge(opts.Name, opts.Merge)
	if errors.Is(err, worktree.ErrNothingToMerge) {
		fmt.Fprintf(opts.IO.Out, "%s: %s\n", opts.Name, termtext.Line(err.Error()))
		return nil
	}
	if res.Into != "" && len(res.Commits) > 0 {
		printMergePlan(opts.IO.Out, opts.Name, res.MergePlan, opts.Merge.Strategy, opts.Merge.DryRun)
	}
	if err != nil {
		return workerError(err, exitFail)
	}
	newCommit := shortCommit(res.NewCommit)
	if opts.Merge.DryRun {
		fmt.Fprintf(opts.IO.Out, "dry run: merges cleanly (%s would move %s -> %s); nothing was changed\n",
			res.Into, shortCommit(res.IntoCommit), newCommit)
		return nil
	}
	where := ""
	if res.Checkout != "" {
		where = " (fast-forwarded in " + termtext.Line(res.Checkout) + ")"
	}
	fmt.Fprintf(opts.IO.Out, "merged %s into %s: %s -> %s%s\n", opts.Name, res.Into, shortCommit(res.IntoCommit), newCommit, where)
	return nil
}

// printMergePlan prints what a merge brings: the commits (newest first)
// and the diffstat.
func printMergePlan(w io.Writer, name string, p worktree.MergePlan, strategy string, dry bool) {
	verb := "merging"
	if dry {
		verb = "would merge"
	}
	fmt.Fprintf(w, "%s %s (branch %s, %d commit(s)) into %s by %s:\n", verb, name, p.Branch, len(p.Commits), p.Into, strategy)
	for _, c := range p.Commits {
		fmt.Fprintf(w, "  %s\n", termtext.Line(c))
	}
	for _, l := range strings.Split(strings.TrimRight(p.Diffstat, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(w, "%s\n", termtext.Line(l))
		}
	}
}

// shortCommit is a commit's first 12 hex digits.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

type diffOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
	Stat bool
	Raw  bool
}

func newCmdDiff(f *factory, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show a worktree worker's changes against its base",
		Long: `Show what a worktree worker changed since its branch left its base: its commits
and, while its worktree is there, what it has not committed yet (tracked files;
untracked ones are listed after it: swarm merge leaves them out). Text an agent wrote is
printed without control characters; --raw prints git's output as it is (to pipe
into git apply).`,
		Example: `  swarm diff fixer
  swarm diff fixer --stat
  swarm diff fixer --raw | git apply --check`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runDiff(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Stat, "stat", false, "only the diffstat")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "print git's output byte for byte (control characters included)")
	return cmd
}

func runDiff(opts *diffOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	out, err := m.Diff(opts.Name, opts.Stat)
	if err != nil {
		return workerError(err, exitFail)
	}
	untracked, err := m.Untracked(opts.Name)
	if err != nil {
		return workerError(err, exitFail)
	}
	if !opts.Raw {
		out = plainLines(out)
	}
	if _, err = io.WriteString(opts.IO.Out, out); err != nil || len(untracked) == 0 {
		return err
	}
	// Listed after the diff; with --raw on stderr, so that what goes to
	// git apply stays git's output alone.
	w := opts.IO.Out
	if opts.Raw {
		w = opts.IO.Err
	}
	fmt.Fprintf(w, "untracked files (not in the diff; swarm merge leaves them out):\n")
	for _, f := range untracked {
		fmt.Fprintf(w, "?? %s\n", termtext.Line(f))
	}
	return nil
}

// plainLines makes every line of s printable (termtext.Line), keeping
// the line breaks: a diff of agent-written files may hold escape
// sequences that would drive the terminal.
func plainLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		lines[i] = termtext.Line(body)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}
