// Package worktree creates and removes the git worktrees workers run in.
//
// A worker's worktree lives at <repo-parent>/<repo>-worktrees/<name> on a
// branch named after the worker. Every git command runs with -C against an
// explicit directory, so removal works from any current directory, and
// runs none of the programs the repository's configuration names (git.go).
// Removal refuses to delete uncommitted work unless forced. Branches are
// kept: they hold the work.
package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/swarmtools/swarm/internal/hint"
)

// Info is where a worktree is and what it belongs to.
type Info struct {
	Path     string
	Branch   string
	BaseRepo string
	// NewBranch is set by Create when it made the branch (so undoing the
	// creation may delete it), BranchCommit to the commit it made it at:
	// Undo deletes the branch only while it still points there.
	NewBranch    bool
	BranchCommit string
	// Reused tells what Create found: an existing worktree or branch, at
	// commit Commit, Behind commits behind the base repository's HEAD
	// (and Ahead commits of its own). Fresh: Create moved it to HEAD.
	Reused        string // "", "worktree" or "branch"
	Commit        string
	Behind, Ahead int
	Fresh         bool
	// Base is the ref a new branch starts from, as given ("" for the
	// base repository's HEAD), BaseCommit the commit it named.
	Base       string
	BaseCommit string
}

// baseName is how a note names the base: "HEAD" or the ref given.
func (i Info) baseName() string {
	if i.Base == "" {
		return "HEAD"
	}
	return i.Base
}

// baseRef is what git is given for the base.
func (i Info) baseRef() string {
	if i.BaseCommit != "" {
		return i.BaseCommit
	}
	return "HEAD"
}

// Note says in words what Create did with an existing branch, for the
// user ("" for a new branch).
func (i Info) Note() string {
	switch {
	case i.Reused == "":
		return ""
	case i.Fresh:
		return fmt.Sprintf("reset existing branch %s to %s (%s)", i.Branch, i.baseName(), i.Commit)
	}
	base := i.baseName()
	where := "up to date with " + base
	if i.Behind > 0 || i.Ahead > 0 {
		where = fmt.Sprintf("%d commit(s) behind %s, %d ahead", i.Behind, base, i.Ahead)
		if i.Ahead == 0 {
			where = fmt.Sprintf("%d commit(s) behind %s", i.Behind, base)
		}
	}
	what := "branch"
	if i.Reused == "worktree" {
		what = "worktree on branch"
	}
	return fmt.Sprintf("using existing %s %s at %s (%s)", what, i.Branch, i.Commit, where)
}

// describeBranch fills Commit, Behind and Ahead for an existing branch.
func (i *Info) describeBranch() {
	if out, err := git(i.BaseRepo, "rev-parse", "--short", i.Branch); err == nil {
		i.Commit = strings.TrimSpace(out)
	}
	if out, err := git(i.BaseRepo, "rev-list", "--left-right", "--count", i.baseRef()+"..."+i.Branch); err == nil {
		_, _ = fmt.Sscanf(strings.TrimSpace(out), "%d %d", &i.Behind, &i.Ahead) // git's own two numbers; unread they stay 0, as when git fails
	}
}

// CreateOptions changes how Create treats an existing branch.
type CreateOptions struct {
	// Fresh moves an existing branch to the base repository's HEAD, when
	// that loses nothing: no commits of its own, no uncommitted work.
	Fresh bool
	// BeforeNewBranch, if set, is called with the commit a new branch is
	// to be made at, under the repository lock, before git runs: a caller
	// that records it there can undo the branch after a crash (git may
	// have made the branch when it died). An error stops Create.
	BeforeNewBranch func(commit string) error
	// Base is the branch, tag or commit a new branch starts from (and
	// Fresh moves an existing one to); "" is the base repository's HEAD.
	Base string
	// NewBranch refuses an existing branch (or worktree) instead of
	// continuing on it: the work must start from Base.
	NewBranch bool
}

// ResolveBase returns the commit base names in repo ("" is HEAD). A base
// that is no commit there is an error that says how to list the refs.
func ResolveBase(repo, base string) (string, error) {
	ref := base
	if ref == "" {
		ref = "HEAD"
	}
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("invalid base '%s'", base)
	}
	out, err := git(repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		if base == "" {
			return "", fmt.Errorf("%s has no commit at HEAD to start a branch from (commit something first)", repo)
		}
		return "", hint.Errorf(fmt.Sprintf("give a branch, tag or commit of the repository (git -C %s branch -a lists the branches)", shellQuote(repo)),
			"unknown base '%s' in %s", base, repo)
	}
	return strings.TrimSpace(out), nil
}

// CurrentBranch is the branch checked out in dir, or "" (a detached
// HEAD, no repository).
func CurrentBranch(dir string) string {
	out, err := git(dir, "symbolic-ref", "--short", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// errBranchExists refuses an existing branch under NewBranch.
func errBranchExists(repo, branch string) error {
	return hint.Errorf(fmt.Sprintf("pick another --branch, or delete the old one first: git -C %s branch -D %s", shellQuote(repo), branch),
		"branch %s already exists (refusing to reuse it: a new branch was asked for)", branch)
}

// ErrNotRepo is returned when a directory is not inside a git work tree.
var ErrNotRepo = errors.New("not in a git repository")

// DirtyError reports work in a worktree that removing it would lose, which
// blocks a removal.
type DirtyError struct {
	Path    string
	Changes int
	// Ignored counts git-ignored files (a .env, say): git worktree remove
	// deletes them silently, so they block a removal too. FirstIgnored
	// names one.
	Ignored      int
	FirstIgnored string
	// Detached is set when the worktree's HEAD is on no branch. Unsaved
	// then counts the commits reachable from it and from no branch, tag
	// or remote-tracking branch, which git status does not show and no
	// ref keeps once the worktree is gone; Head is that HEAD (short).
	Detached bool
	Unsaved  int
	Head     string
	// Rebase is set while a rebase (or git am) is under way in it.
	Rebase bool
	// Nested counts the populated nested repositories (gitlinks in the
	// index: submodules, or a repository an agent made and added) that
	// removing it would delete; FirstNested names one. Their content is
	// never looked into (see statusArgs), so any counts.
	Nested      int
	FirstNested string
}

func (e *DirtyError) Error() string {
	var parts []string
	if e.Changes > 0 {
		parts = append(parts, fmt.Sprintf("%d uncommitted change(s)", e.Changes))
	}
	if e.Unsaved > 0 {
		parts = append(parts, fmt.Sprintf("%d commit(s) on no branch (HEAD detached at %s)", e.Unsaved, e.Head))
	}
	if e.Rebase {
		parts = append(parts, "a rebase in progress")
	}
	if e.Nested > 0 {
		parts = append(parts, fmt.Sprintf("a nested git repository (%s) that removing it would delete", e.FirstNested))
		if e.Nested > 1 {
			parts[len(parts)-1] = fmt.Sprintf("%d nested git repositories (e.g. %s) that removing it would delete", e.Nested, e.FirstNested)
		}
	}
	if len(parts) == 0 && e.Ignored > 0 {
		return fmt.Sprintf("worktree has %d git-ignored file(s) that removing it would delete (e.g. %s)", e.Ignored, e.FirstIgnored)
	}
	return "worktree has " + strings.Join(parts, ", ")
}

// status runs git status --porcelain --ignored once in a worktree and
// returns how many entries are changes (what Changes counts: uncommitted
// changes and untracked files) and the git-ignored entries (directories as
// one entry each).
func status(path string) (changes int, ignored []string, err error) {
	out, err := git(path, "status", "--porcelain", "--ignored")
	if err != nil {
		return 0, nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "!! "); ok {
			ignored = append(ignored, name)
		} else if strings.TrimSpace(line) != "" {
			changes++
		}
	}
	return changes, ignored, nil
}

// RepoRoot returns the top of the git work tree containing dir. It repairs
// a core.bare=true wrongly set on a non-bare repository (which breaks every
// worktree command) and reports that it did so in warnings.
func RepoRoot(dir string) (root string, warnings []string, err error) {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		if gitDir, gerr := git(dir, "rev-parse", "--git-dir"); gerr == nil {
			bare, _ := git(dir, "config", "--get", "core.bare")
			if strings.TrimSpace(bare) == "true" {
				gd := strings.TrimSpace(gitDir)
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(dir, gd)
				}
				if filepath.Base(gd) == ".git" {
					if _, ferr := git(dir, "config", "core.bare", "false"); ferr == nil {
						warnings = append(warnings, fmt.Sprintf("core.bare was set to true in %s; set it back to false", filepath.Dir(gd)))
						out, err = git(dir, "rev-parse", "--show-toplevel")
					}
				}
			}
		}
		if err != nil {
			return "", warnings, ErrNotRepo
		}
	}
	return strings.TrimSpace(out), warnings, nil
}

// DefaultPath is <repo-parent>/<repo-name>-worktrees/<name>.
func DefaultPath(repoRoot, name string) string {
	return filepath.Join(filepath.Dir(repoRoot), filepath.Base(repoRoot)+"-worktrees", name)
}

// Create adds a worktree at path on branch, creating the branch from the
// base (the current HEAD unless CreateOptions.Base) or checking out an
// existing one (refused with CreateOptions.NewBranch). If path already is
// a worktree of this repository on that branch (a worktree kept because
// it had uncommitted work), it is reused.
func Create(repoRoot, path, branch string, o ...CreateOptions) (Info, error) {
	unlock, err := lockRepo(repoRoot)
	if err != nil {
		return Info{}, err
	}
	defer unlock()
	if err := ensureParent(filepath.Dir(path)); err != nil {
		return Info{}, err
	}
	var opt CreateOptions
	if len(o) > 0 {
		opt = o[0]
	}
	fresh := opt.Fresh
	info := Info{Path: path, Branch: branch, BaseRepo: repoRoot, Base: opt.Base}
	if opt.Base != "" {
		if info.BaseCommit, err = ResolveBase(repoRoot, opt.Base); err != nil {
			return Info{}, err
		}
	}
	if existing, ok := findWorktree(repoRoot, path); ok {
		if existing != branch {
			return Info{}, fmt.Errorf("%s is already a worktree on branch %s", path, existing)
		}
		if opt.NewBranch {
			return Info{}, errBranchExists(repoRoot, branch)
		}
		info.Reused = "worktree"
		info.describeBranch()
		if fresh {
			return info, info.freshen(path)
		}
		return info, nil
	}
	if _, err := os.Stat(path); err == nil {
		return Info{}, fmt.Errorf("%s already exists", path)
	}
	if branchExists(repoRoot, branch) {
		if opt.NewBranch {
			return Info{}, errBranchExists(repoRoot, branch)
		}
		info.Reused = "branch"
		info.describeBranch()
		if fresh {
			if err := info.freshen(""); err != nil {
				return Info{}, err
			}
		}
		_, err = git(repoRoot, "worktree", "add", path, branch)
	} else {
		err = info.addWithNewBranch(opt.BeforeNewBranch)
	}
	if err != nil {
		return Info{}, err
	}
	return info, nil
}

// addWithNewBranch makes the worktree on a new branch at the base (the
// base repository's HEAD unless Base was given), telling before first
// where it makes the branch. A failed git worktree add may have made the
// branch: it is deleted again.
func (i *Info) addWithNewBranch(before func(commit string) error) error {
	if i.BaseCommit == "" {
		head, err := git(i.BaseRepo, "rev-parse", "--verify", "HEAD^{commit}")
		if err != nil {
			return fmt.Errorf("%s has no commit at HEAD to start branch %s from (commit something first)", i.BaseRepo, i.Branch)
		}
		i.BaseCommit = strings.TrimSpace(head)
	}
	i.BranchCommit = i.BaseCommit
	if before != nil {
		if err := before(i.BranchCommit); err != nil {
			return err
		}
	}
	if _, err := git(i.BaseRepo, "worktree", "add", "-b", i.Branch, i.Path, i.BranchCommit); err != nil {
		return errors.Join(err, deleteBranch(i.BaseRepo, i.Branch, i.BranchCommit))
	}
	i.NewBranch = true
	return nil
}

// ensureParent makes dir, the directory worktrees are put in, 0755 (made
// by the user, whatever the umask), or checks the one that is there: it
// must be the user's and not writable by group or others. Another user
// can make <repo>-worktrees first in a world-writable directory (/tmp)
// and then swap the worktrees in it; a sticky /tmp above it is fine, the
// directory itself must be the user's. A symbolic link is judged by what
// it points to, and must be the user's own link.
func ensureParent(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	made := os.Mkdir(dir, 0o755)
	if made != nil && !errors.Is(made, fs.ErrExist) {
		return made
	}
	link, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("worktree directory %s is not a directory", dir)
	}
	if made == nil {
		// Just made here: the umask may have left it group-writable.
		return os.Chmod(dir, 0o755)
	}
	for _, f := range []fs.FileInfo{link, fi} {
		if st, ok := f.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
			return hint.Errorf("remove it (another user may have made it to swap the worktrees in it), or put the worktree elsewhere with --worktree-dir",
				"worktree directory %s is owned by another user (uid %d)", dir, st.Uid)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return hint.Errorf(fmt.Sprintf("chmod go-w %s, or put the worktree elsewhere with --worktree-dir", shellQuote(dir)),
			"worktree directory %s is writable by others (mode %04o)", dir, perm)
	}
	return nil
}

// freshen moves the existing branch to the base (the base repository's
// HEAD unless Base was given), in the worktree wt when it has one,
// refusing when that would lose work.
func (i *Info) freshen(wt string) error {
	if i.Ahead > 0 {
		return fmt.Errorf("branch %s has %d commit(s) of its own; --fresh-branch would drop them (merge or delete the branch first)", i.Branch, i.Ahead)
	}
	head, err := git(i.BaseRepo, "rev-parse", i.baseRef())
	if err != nil {
		return err
	}
	head = strings.TrimSpace(head)
	if wt == "" {
		_, err = git(i.BaseRepo, "branch", "-f", i.Branch, head)
	} else {
		if n, cerr := Changes(wt); cerr != nil || n > 0 {
			return fmt.Errorf("the worktree %s has uncommitted changes; --fresh-branch would drop them", wt)
		}
		_, err = git(wt, "reset", "-q", "--hard", head)
	}
	if err == nil {
		i.Fresh, i.Behind = true, 0
		if out, rerr := git(i.BaseRepo, "rev-parse", "--short", head); rerr == nil {
			i.Commit = strings.TrimSpace(out)
		}
	}
	return err
}

func branchExists(repo, branch string) bool {
	_, err := git(repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// CheckBranch refuses a branch name git would not take (git check-ref-format
// --branch), so that a name such as "--orphan" never reaches git as an
// option.
func CheckBranch(repo, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("invalid branch name '%s'", branch)
	}
	if _, err := git(repo, "check-ref-format", "--branch", branch); err != nil {
		return fmt.Errorf("invalid branch name '%s'", branch)
	}
	return nil
}

// findWorktree reports the branch of the registered worktree at path.
func findWorktree(repo, path string) (string, bool) {
	out, err := git(repo, "worktree", "list", "--porcelain")
	if err != nil {
		return "", false
	}
	want := canonical(path)
	var cur string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			cur = canonical(strings.TrimPrefix(line, "worktree "))
		case strings.HasPrefix(line, "branch ") && cur == want:
			return strings.TrimPrefix(line, "branch refs/heads/"), true
		case line == "detached" && cur == want:
			return "(detached)", true
		}
	}
	return "", false
}

func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// Undo removes a worktree Create just made (or began to make: a path that
// does not exist is fine), and its branch if Create made that too: a
// failed or crashed spawn leaves nothing behind. force removes it with
// what the spawn put in it since (copied files, a set-up command's).
func Undo(info Info, force ...bool) error {
	if err := Remove(info, len(force) > 0 && force[0]); err != nil {
		return err
	}
	if !info.NewBranch {
		return nil
	}
	unlock, err := lockRepo(info.BaseRepo)
	if err != nil {
		return err
	}
	defer unlock()
	return deleteBranch(info.BaseRepo, info.Branch, info.BranchCommit)
}

// deleteBranch deletes a branch Create made at commit, unless it has moved
// since (it holds work) or a worktree has it checked out (git branch -D
// refuses that). A branch git never made is no error.
func deleteBranch(repo, branch, commit string) error {
	if !branchExists(repo, branch) {
		return nil
	}
	if commit != "" {
		out, err := git(repo, "rev-parse", "--verify", "refs/heads/"+branch)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != commit {
			return fmt.Errorf("branch %s has commits made since swarm created it; kept", branch)
		}
	}
	_, err := git(repo, "branch", "-D", branch)
	return err
}

// Changes returns how many entries git status --porcelain lists for the
// worktree: uncommitted changes and untracked files.
func Changes(path string) (int, error) {
	out, err := git(path, "status", "--porcelain")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n, nil
}

// Remove deletes the worktree, running git against its base repository so
// it works from any directory. Work it holds (uncommitted changes,
// git-ignored files, commits on no branch, a rebase under way) blocks
// removal with a *DirtyError unless force is set. The branch is kept. A
// worktree whose directory is already gone is pruned.
func Remove(info Info, force bool) error {
	unlock, lockErr := lockRepo(info.BaseRepo)
	if _, err := os.Stat(info.Path); errors.Is(err, os.ErrNotExist) {
		// Nothing to remove; the base repository may be gone too.
		if lockErr == nil {
			_, _ = git(info.BaseRepo, "worktree", "prune") // best effort: the base repository may be gone too
			unlock()
		}
		return nil
	}
	if lockErr != nil {
		return lockErr
	}
	defer unlock()
	if !force {
		if err := checkClean(info.Path, info.BaseRepo); err != nil {
			return err
		}
	}
	args := []string{"worktree", "remove", info.Path}
	if force {
		args = []string{"worktree", "remove", "--force", info.Path}
	}
	if _, err := git(info.BaseRepo, args...); err != nil {
		return err
	}
	// Remove the <repo>-worktrees directory once it is empty.
	_ = os.Remove(filepath.Dir(info.Path)) // fails while it holds other worktrees, as it should
	return nil
}

// Head returns the commit the directory's HEAD points at, or "" outside git.
func Head(dir string) string {
	out, err := git(dir, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// TreeState summarises the working tree (status and diff against HEAD) so
// that two calls return the same string exactly when nothing changed.
func TreeState(dir string) string {
	status, err := git(dir, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return ""
	}
	diff, _ := git(dir, "diff", "--no-ext-diff", "--no-textconv", "HEAD")
	return status + "\x00" + diff
}
