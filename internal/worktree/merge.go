package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/swarmtools/swarm/internal/hint"
)

// Merge strategies (swarm merge --strategy).
const (
	StrategyMerge  = "merge"  // a merge commit (--no-ff)
	StrategyRebase = "rebase" // the branch's commits replayed on the target
	StrategySquash = "squash" // one commit with all of the branch's changes
)

// Strategies lists the merge strategies.
var Strategies = []string{StrategyMerge, StrategyRebase, StrategySquash}

// MergeOptions is one merge of a worker's branch into a target branch.
type MergeOptions struct {
	Repo     string // the base repository
	Branch   string // the worker's branch
	Into     string // the target branch
	Strategy string
	// Worktree is the worker's worktree ("" for none): an untracked file
	// of its at a path the merge writes stops the merge.
	Worktree string
	// DryRun merges in the temporary worktree as a merge would, to tell
	// whether it conflicts, and moves no branch.
	DryRun bool
}

// MergePlan is what a merge would bring into the target: the branch's
// commits the target lacks (newest first, "abc1234 subject") and their
// diffstat.
type MergePlan struct {
	Into, IntoCommit     string
	Branch, BranchCommit string
	Commits              []string
	Diffstat             string
}

// MergeResult is a merge done (or, dry, tried).
type MergeResult struct {
	MergePlan
	// NewCommit is the target's new commit (the one it would get).
	NewCommit string
	// Checkout is the worktree the target branch is checked out in
	// (fast-forwarded there), "" when none has it.
	Checkout string
	// Leftover is why the temporary worktree could not be removed: the
	// merge (or its failure) stands all the same.
	Leftover error
}

// ErrNothingToMerge: the target has every change of the branch already.
var ErrNothingToMerge = errors.New("nothing to merge")

// ConflictError is a merge that stopped at conflicts: the files, and
// that nothing was changed.
type ConflictError struct {
	Branch, Into, Strategy string
	Files                  []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s (%s) conflicts in %d file(s): %s; nothing was changed",
		e.Branch, e.Into, e.Strategy, len(e.Files), strings.Join(e.Files, ", "))
}

// mergeConfig keeps a merge to what swarm asks of it: nothing stashed,
// no other branch moved by a rebase (update-refs), no recorded resolution
// applied unseen (rerere), no submodule checked out, no signature checked
// (which runs gpg).
var mergeConfig = []string{
	"-c", "merge.autoStash=false", "-c", "rebase.autoStash=false",
	"-c", "rebase.updateRefs=false", "-c", "rebase.autoSquash=false",
	"-c", "rerere.enabled=false", "-c", "submodule.recurse=false",
	"-c", "merge.verifySignatures=false",
}

// PlanMerge says what merging branch into into would bring: an error
// when either is not a branch, ErrNothingToMerge when into has it all.
func PlanMerge(repo, branch, into string) (MergePlan, error) {
	p := MergePlan{Into: into, Branch: branch}
	if branch == into {
		return p, fmt.Errorf("cannot merge branch %s into itself", branch)
	}
	var err error
	if p.IntoCommit, err = branchCommit(repo, into); err != nil {
		return p, err
	}
	if p.BranchCommit, err = branchCommit(repo, branch); err != nil {
		return p, err
	}
	out, err := git(repo, "log", "--no-show-signature", "--no-color", "--format=%h %s", p.IntoCommit+".."+p.BranchCommit)
	if err != nil {
		return p, err
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line != "" {
			p.Commits = append(p.Commits, line)
		}
	}
	if len(p.Commits) == 0 {
		return p, fmt.Errorf("%w: %s has every commit of %s", ErrNothingToMerge, into, branch)
	}
	p.Diffstat, err = git(repo, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--stat", p.IntoCommit+"..."+p.BranchCommit)
	return p, err
}

// branchCommit is the commit of local branch b, or an error naming it.
func branchCommit(repo, b string) (string, error) {
	if err := CheckBranch(repo, b); err != nil {
		return "", err
	}
	out, err := git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+b+"^{commit}")
	if err != nil {
		return "", hint.Errorf(fmt.Sprintf("git -C %s branch lists the branches", shellQuote(repo)), "no branch %s in %s", b, repo)
	}
	return strings.TrimSpace(out), nil
}

// Merge merges o.Branch into o.Into with o.Strategy in a temporary
// worktree of its own, under the repository lock: no checkout of the
// user's is ever left half merged. On success the target moves to the
// result: where it is checked out, by a fast-forward there (git merge
// --ff-only, which keeps local changes that it does not touch, and
// refuses to overwrite one); elsewhere by update-ref guarded by the
// commit it had. A conflict returns a *ConflictError and changes nothing.
func Merge(o MergeOptions) (res MergeResult, err error) {
	plan, err := PlanMerge(o.Repo, o.Branch, o.Into)
	res = MergeResult{MergePlan: plan}
	if err != nil {
		return res, err
	}
	ident, err := identity(o.Repo)
	if err != nil {
		return res, err
	}
	unlock, err := lockRepo(o.Repo)
	if err != nil {
		return res, err
	}
	defer unlock()
	tmp, cleanup, err := tempWorktree(o.Repo, startOf(o.Strategy, plan))
	if err != nil {
		return res, err
	}
	defer func() { res.Leftover = cleanup() }()
	if res.NewCommit, err = runStrategy(tmp, ident, o, plan); err != nil {
		return res, err
	}
	if res.NewCommit == plan.IntoCommit {
		return res, fmt.Errorf("%w: %s has every change of %s", ErrNothingToMerge, o.Into, o.Branch)
	}
	checkout, _ := branchCheckout(o.Repo, o.Into)
	if err := checkUntracked(o, checkout, plan.IntoCommit, res.NewCommit); err != nil {
		return res, err
	}
	if o.DryRun {
		return res, checkFastForward(o, checkout, plan.IntoCommit, res.NewCommit)
	}
	res.Checkout, err = moveTarget(o, plan.IntoCommit, res.NewCommit)
	return res, err
}

// startOf is the commit the temporary worktree starts at: the branch's
// for a rebase (it is replayed on the target), the target's otherwise.
func startOf(strategy string, p MergePlan) string {
	if strategy == StrategyRebase {
		return p.BranchCommit
	}
	return p.IntoCommit
}

// identity is the committer the merge's commits are made by, as -c
// settings: the user's git identity. Without one git would make up an
// address from the host name, or fail half way.
func identity(repo string) ([]string, error) {
	get := func(env, key string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		out, _ := git(repo, "config", "--get", key)
		return strings.TrimSpace(out)
	}
	name, email := get("GIT_COMMITTER_NAME", "user.name"), get("GIT_COMMITTER_EMAIL", "user.email")
	if name == "" || email == "" {
		return nil, hint.Errorf(`git config --global user.name "Your Name"; git config --global user.email you@example.com`,
			"no git identity to make the merge's commits with (user.name and user.email are not set)")
	}
	return []string{"-c", "user.name=" + name, "-c", "user.email=" + email}, nil
}

// tempWorktree adds a worktree of repo with a detached HEAD at commit, in
// a new private temporary directory, and returns it with its removal,
// which says what it could not remove.
func tempWorktree(repo, commit string) (string, func() error, error) {
	dir, err := os.MkdirTemp("", "swarm-merge-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "wt")
	cleanup := func() error {
		// git forgets the worktree once its directory is gone (prune),
		// whether or not its own remove worked.
		_, _ = git(repo, "worktree", "remove", "--force", path) // the directory decides: removed below, then pruned
		err := os.RemoveAll(dir)
		if _, perr := git(repo, "worktree", "prune"); err == nil && perr != nil {
			err = perr
		}
		if err != nil {
			return fmt.Errorf("cannot remove the temporary worktree %s: %w", path, err)
		}
		return nil
	}
	if _, err := git(repo, "worktree", "add", "--detach", "-q", path, commit); err != nil {
		return "", nil, errors.Join(fmt.Errorf("cannot make a temporary worktree to merge in: %w", err), cleanup())
	}
	return path, cleanup, nil
}

// runStrategy merges in the temporary worktree tmp and returns the
// commit it made (the target's new commit).
func runStrategy(tmp string, ident []string, o MergeOptions, p MergePlan) (string, error) {
	pre := append(append([]string{}, ident...), mergeConfig...)
	var err error
	switch o.Strategy {
	case StrategyRebase:
		_, err = git(tmp, append(pre, "rebase", "-q", "--no-gpg-sign", p.IntoCommit)...)
	case StrategySquash:
		if _, err = git(tmp, append(pre, "merge", "-q", "--squash", "--no-gpg-sign", p.BranchCommit)...); err == nil {
			err = squashCommit(tmp, pre, p)
		}
	case StrategyMerge:
		msg := fmt.Sprintf("Merge branch '%s' into %s", o.Branch, o.Into)
		_, err = git(tmp, append(pre, "merge", "-q", "--no-ff", "--no-edit", "--no-gpg-sign", "-m", msg, p.BranchCommit)...)
	default:
		return "", fmt.Errorf("unknown merge strategy '%s' (use %s)", o.Strategy, strings.Join(Strategies, ", "))
	}
	if err != nil {
		if files := conflicts(tmp); len(files) > 0 {
			return "", &ConflictError{Branch: o.Branch, Into: o.Into, Strategy: o.Strategy, Files: files}
		}
		if errors.Is(err, ErrNothingToMerge) {
			return "", err
		}
		return "", fmt.Errorf("git %s of %s into %s failed (nothing was changed): %w", o.Strategy, o.Branch, o.Into, err)
	}
	out, err := git(tmp, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// squashCommit commits what merge --squash staged, with the branch's
// commits listed in the message; nothing staged is ErrNothingToMerge.
func squashCommit(tmp string, pre []string, p MergePlan) error {
	if _, err := git(tmp, "diff", "--cached", "--quiet", "--no-ext-diff"); err == nil {
		return fmt.Errorf("%w: %s has every change of %s", ErrNothingToMerge, p.Into, p.Branch)
	}
	msg := fmt.Sprintf("Squashed branch '%s' into %s\n\n%s\n", p.Branch, p.Into, strings.Join(p.Commits, "\n"))
	_, err := git(tmp, append(pre, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", msg)...)
	return err
}

// conflicts lists the unmerged files of the worktree.
func conflicts(dir string) []string {
	out, err := git(dir, "diff", "--name-only", "--diff-filter=U", "--no-ext-diff")
	if err != nil {
		return nil
	}
	return strings.Fields(out)
}

// moveTarget moves the target branch from old to the new commit: a
// fast-forward in the worktree that has it checked out, else update-ref
// guarded by old. It returns that worktree ("" for none).
func moveTarget(o MergeOptions, old, commit string) (string, error) {
	wt, checkedOut := branchCheckout(o.Repo, o.Into)
	if checkedOut {
		// The user's checkout: with swarm's merge settings, no signature
		// checked (merge.verifySignatures runs gpg.program), and never
		// over a git-ignored file of the user's (a .env, a data/
		// directory), which git would otherwise overwrite or delete.
		args := append(append([]string{}, mergeConfig...), "merge", "-q", "--ff-only", "--no-edit",
			"--no-verify-signatures", "--no-overwrite-ignore", commit)
		if _, err := git(wt, args...); err != nil {
			if changed, untracked := blockingFiles(err.Error()); len(changed)+len(untracked) > 0 {
				return wt, blockedError(o.Into, wt, changed, untracked)
			}
			return wt, hint.Errorf(fmt.Sprintf("look at it: git -C %s status; then run swarm merge again", shellQuote(wt)),
				"%s is checked out in %s, which could not be fast-forwarded to the merge (nothing was changed): %v", o.Into, wt, err)
		}
		return wt, nil
	}
	if _, err := git(o.Repo, "update-ref", "-m", "swarm merge "+o.Branch, "refs/heads/"+o.Into, commit, old); err != nil {
		return "", fmt.Errorf("%s moved while merging (nothing was changed; run swarm merge again): %w", o.Into, err)
	}
	return "", nil
}

// blockedError is the error of a fast-forward of the checkout wt of into
// that files there stop: changed, tracked files with uncommitted changes;
// untracked, untracked or git-ignored files in the way.
func blockedError(into, wt string, changed, untracked []string) error {
	var what []string
	if len(changed) > 0 {
		what = append(what, "overwrite uncommitted changes to: "+strings.Join(changed, ", "))
	}
	if len(untracked) > 0 {
		what = append(what, "overwrite or delete files git does not track or ignores: "+strings.Join(untracked, ", "))
	}
	var fix string
	switch {
	case len(untracked) == 0:
		fix = fmt.Sprintf("commit or stash them (see them with: git -C %s status)", shellQuote(wt))
	case len(changed) == 0:
		fix = fmt.Sprintf("move them out of the way (see them with: git -C %s status --ignored)", shellQuote(wt))
	default:
		fix = fmt.Sprintf("commit or stash the changes and move the files out of the way (see them with: git -C %s status --ignored)", shellQuote(wt))
	}
	return hint.Errorf(fix+", then run swarm merge again", "%s is checked out in %s, where the merge would %s (nothing was changed)",
		into, wt, strings.Join(what, "; and "))
}

// checkFastForward is what a dry run knows of the fast-forward it does not
// make: a *hint.Error naming the files of the checkout of the target
// (checkout, "" for none) that would stop it, as moveTarget would (local
// changes to a file the merge from old to commit writes; a git-ignored
// file or directory where it writes: --no-overwrite-ignore). Untracked
// files are checkUntracked's.
func checkFastForward(o MergeOptions, checkout, old, commit string) error {
	if checkout == "" {
		return nil
	}
	if _, err := os.Stat(checkout); err != nil {
		return nil // the fast-forward fails on its own: moveTarget says why
	}
	written, err := writtenPaths(o.Repo, old, commit)
	if err != nil {
		return err
	}
	out, err := git(checkout, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "HEAD")
	if err != nil {
		return fmt.Errorf("cannot list the local changes of %s: %w", checkout, err)
	}
	changed := inTheWay(nulFields(out), written)
	out, err = git(checkout, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return fmt.Errorf("cannot list the git-ignored files of %s: %w", checkout, err)
	}
	ignored := inTheWay(nulFields(out), written)
	if len(changed)+len(ignored) == 0 {
		return nil
	}
	return blockedError(o.Into, checkout, changed, ignored)
}

// blockingFiles lists the files git's message says a checkout would
// overwrite or lose: changed, tracked files with uncommitted changes
// ("Your local changes to the following files would be overwritten");
// untracked, untracked or git-ignored ones in the way ("untracked working
// tree files would be overwritten" or "removed", "would lose untracked
// files"). git lists them one per line, indented with a tab, after its
// "error: ..." line.
func blockingFiles(msg string) (changed, untracked []string) {
	var list *[]string
	for _, line := range strings.Split(msg, "\n") {
		switch {
		case strings.HasPrefix(line, "error: "):
			list = nil
			switch {
			case strings.Contains(line, "local changes"):
				list = &changed
			case strings.Contains(line, "would be overwritten"), strings.Contains(line, "would be removed"),
				strings.Contains(line, "would lose untracked files"):
				list = &untracked
			}
		case list != nil && strings.HasPrefix(line, "\t"):
			*list = append(*list, strings.TrimPrefix(line, "\t"))
		default:
			list = nil
		}
	}
	return changed, untracked
}

// shellQuote quotes s as one word for a POSIX shell, so that a command a
// hint gives runs as printed whatever the path holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// branchCheckout is the worktree of repo that has branch checked out.
func branchCheckout(repo, branch string) (string, bool) {
	out, err := git(repo, "worktree", "list", "--porcelain")
	if err != nil {
		return "", false
	}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			cur = strings.TrimPrefix(line, "worktree ")
		case line == "branch refs/heads/"+branch:
			return cur, true
		}
	}
	return "", false
}

// Committed returns a *DirtyError when the worktree at path holds work
// its branch does not: uncommitted changes to tracked files, commits on
// no branch, a rebase under way. Untracked and git-ignored files do not
// count: a merge takes the branch's commits, never them (an untracked
// file where the merge writes stops it: checkUntracked).
func Committed(path string) error {
	out, err := git(path, "status", "--porcelain", "--untracked-files=no")
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	if err != nil {
		return fmt.Errorf("cannot check %s for uncommitted changes: %w", path, err)
	}
	d := &DirtyError{Path: path, Changes: n}
	if err := d.offBranch(path); err != nil {
		return err
	}
	if d.Changes > 0 || d.Detached || d.Rebase {
		return d
	}
	return nil
}
