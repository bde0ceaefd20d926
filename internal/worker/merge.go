package worker

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// MergeOptions is swarm merge's choice: the target branch ("": the
// worker's base), the strategy, and whether to only look.
type MergeOptions struct {
	Into     string
	Strategy string
	DryRun   bool
}

// Merge merges worker name's branch into its base branch (or o.Into) in
// a temporary worktree (worktree.Merge). A worker whose loop holds it
// (running, paused, waiting), or whose worktree holds uncommitted work,
// is refused: the merge would take a branch that is still changing, or
// leave work behind.
func (m *Manager) Merge(name string, o MergeOptions) (worktree.MergeResult, error) {
	w, into, err := m.mergeTarget(name, o.Into)
	if err != nil {
		return worktree.MergeResult{}, err
	}
	if o.Strategy == "" {
		o.Strategy = worktree.StrategyMerge
	}
	res, err := worktree.Merge(worktree.MergeOptions{
		Repo: w.Worktree.BaseRepo, Branch: w.Worktree.Branch, Into: into, Strategy: o.Strategy, DryRun: o.DryRun,
		Worktree: w.Worktree.Path,
	})
	if res.Leftover != nil {
		m.warn(res.Leftover.Error())
	}
	var conflict *worktree.ConflictError
	if errors.As(err, &conflict) {
		err = hint.Wrap(err, "%s", conflictFix(w, conflict))
	}
	var untracked *worktree.UntrackedError
	if errors.As(err, &untracked) {
		err = hint.Wrap(err, "%s", untrackedFix(w, untracked))
	}
	return res, err
}

// untrackedFix is the hint of a merge stopped by untracked files: in the
// worker's worktree, commit them on its branch (then they are merged);
// in the target's checkout, move them out of the way.
func untrackedFix(w *state.Worker, u *worktree.UntrackedError) string {
	dir := tmux.ShellQuote(u.Dir)
	files := make([]string, len(u.Files))
	for i, f := range u.Files {
		files[i] = tmux.ShellQuote(f)
	}
	if u.Worker {
		return fmt.Sprintf("commit them on branch %s to merge them (git -C %s add -- %s && git -C %s commit -m 'add untracked files'), or remove them, then: swarm merge %s",
			w.Worktree.Branch, dir, strings.Join(files, " "), dir, w.Name)
	}
	return fmt.Sprintf("look at them (git -C %s status), move them elsewhere or delete them, then: swarm merge %s", dir, w.Name)
}

// conflictFix is the hint of a merge that conflicts: the commands that
// bring the target into the worker's branch in its worktree (made again
// from the branch when it is gone), where the conflicts are resolved and
// committed; the next swarm merge is then clean. A rebase strategy
// rebases the branch instead.
func conflictFix(w *state.Worker, c *worktree.ConflictError) string {
	path := tmux.ShellQuote(w.Worktree.Path)
	// Branch names may hold what a shell reads (git allows ' ; $ & in
	// them): quoted in the commands, as printed in the text.
	branch, into := tmux.ShellQuote(c.Branch), tmux.ShellQuote(c.Into)
	var steps []string
	if _, err := os.Stat(w.Worktree.Path); errors.Is(err, os.ErrNotExist) {
		steps = append(steps, fmt.Sprintf("git -C %s worktree add %s %s", tmux.ShellQuote(w.Worktree.BaseRepo), path, branch))
	}
	if c.Strategy == worktree.StrategyRebase {
		steps = append(steps, fmt.Sprintf("git -C %s rebase %s", path, into))
		return fmt.Sprintf("rebase the branch on %s and resolve the conflicts there: %s (fix each file, git -C %s add it, git -C %s rebase --continue), then: swarm merge %s",
			c.Into, strings.Join(steps, " && "), path, path, w.Name)
	}
	steps = append(steps, fmt.Sprintf("git -C %s merge %s", path, into))
	return fmt.Sprintf("merge %s into the branch and resolve the conflicts there: %s (fix each file, then git -C %s commit -am %s), then: swarm merge %s",
		c.Into, strings.Join(steps, " && "), path, tmux.ShellQuote("merge "+c.Into), w.Name)
}

// mergeTarget checks that worker name can be merged now and returns its
// record and the branch to merge into.
func (m *Manager) mergeTarget(name, into string) (*state.Worker, string, error) {
	w, err := m.Get(name)
	if err != nil {
		return nil, "", err
	}
	if w.Worktree == nil {
		return nil, "", hint.Errorf("swarm merge takes the branch of a worker spawned with --worktree",
			"worker '%s' has no worktree: nothing to merge", name)
	}
	if m.Hooks != nil {
		if status := m.Hooks.LoopHolds(name); status != "" {
			return nil, "", hint.Errorf(fmt.Sprintf("wait for it to end (swarm ralph wait %s) or stop it (swarm kill %s), then merge", name, name),
				"worker '%s' has a ralph loop that is %s: its branch is still changing", name, status)
		}
	}
	if err := checkCommitted(w); err != nil {
		return nil, "", err
	}
	if into == "" {
		if into, err = baseBranch(w); err != nil {
			return nil, "", err
		}
	}
	return w, into, nil
}

// checkCommitted refuses a worker whose worktree holds work its branch
// does not have, with the command that shows it. A worktree that is gone
// has none: its branch is merged as it is.
func checkCommitted(w *state.Worker) error {
	path := w.Worktree.Path
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	err := worktree.Committed(path)
	var d *worktree.DirtyError
	if !errors.As(err, &d) {
		return err
	}
	see := fmt.Sprintf("see it: git -C %s status; commit it on branch %s, then merge", tmux.ShellQuote(path), w.Worktree.Branch)
	switch {
	case d.Changes > 0:
		return hint.Errorf(see, "worker '%s' has %d uncommitted change(s) in its worktree %s", w.Name, d.Changes, path)
	case d.Rebase:
		return hint.Errorf(see, "worker '%s' has a rebase in progress in its worktree %s", w.Name, path)
	}
	return hint.Errorf(fmt.Sprintf("see it: git -C %s status; put the work on its branch (git -C %s checkout -B %s), then merge",
		tmux.ShellQuote(path), tmux.ShellQuote(path), w.Worktree.Branch),
		"worker '%s' has its worktree %s on no branch (HEAD detached%s)", w.Name, path, unsavedText(d))
}

func unsavedText(d *worktree.DirtyError) string {
	if d.Unsaved == 0 {
		return ""
	}
	return fmt.Sprintf(", %d commit(s) on no branch", d.Unsaved)
}

// baseBranch is the branch a worker's work goes back to: the base its
// worktree was made from when that is a branch, else (an older record)
// the branch the base repository has checked out.
func baseBranch(w *state.Worker) (string, error) {
	base, _ := w.Metadata[WorktreeBaseKey].(string)
	repo := w.Worktree.BaseRepo
	if base == "" {
		if base = worktree.CurrentBranch(repo); base == "" {
			return "", hint.Errorf("give the branch to merge into: --into BRANCH",
				"worker '%s' has no base branch recorded, and %s has no branch checked out", w.Name, repo)
		}
		return base, nil
	}
	if strings.HasPrefix(base, "refs/heads/") || worktree.IsBranch(repo, base) {
		return strings.TrimPrefix(base, "refs/heads/"), nil
	}
	return "", hint.Errorf("give the branch to merge into: --into BRANCH",
		"worker '%s' was made from %s, which is not a branch", w.Name, base)
}

// Diff writes worker name's changes against its base: the commits of its
// branch since it left the base, and (when its worktree is there) what
// is not committed yet; stat gives the diffstat instead.
func (m *Manager) Diff(name string, stat bool) (string, error) {
	w, err := m.Get(name)
	if err != nil {
		return "", err
	}
	if w.Worktree == nil {
		return "", hint.Errorf("swarm diff shows the branch of a worker spawned with --worktree",
			"worker '%s' has no worktree", name)
	}
	base, _ := w.Metadata[WorktreeBaseKey].(string)
	if base == "" || !worktree.IsCommit(w.Worktree.BaseRepo, base) {
		base, _ = w.Metadata[WorktreeBaseCommitKey].(string)
	}
	if base == "" {
		if base = worktree.CurrentBranch(w.Worktree.BaseRepo); base == "" {
			return "", fmt.Errorf("worker '%s' has no base recorded, and %s has no branch checked out", name, w.Worktree.BaseRepo)
		}
	}
	return worktree.Diff(w.Worktree.BaseRepo, w.Worktree.Path, w.Worktree.Branch, base, stat)
}

// Untracked lists the untracked files of worker name's worktree (not
// git-ignored ones): what swarm diff does not show and swarm merge leaves
// out. None when the worker has no worktree, or it is gone or on another
// branch (the diff is then of the branch alone).
func (m *Manager) Untracked(name string) ([]string, error) {
	w, err := m.Get(name)
	if err != nil || w.Worktree == nil {
		return nil, err
	}
	path := w.Worktree.Path
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || worktree.CurrentBranch(path) != w.Worktree.Branch {
		return nil, nil
	}
	return worktree.Untracked(path)
}
