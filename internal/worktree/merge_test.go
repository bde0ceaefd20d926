package worktree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
)

// mergeRepo is a repository (main checked out, with a committer identity
// in its config) and a worker worktree on branch w made from main; main
// and w then each get a commit (a.txt on main, b.txt on w).
func mergeRepo(t *testing.T) (repo, wt string) {
	t.Helper()
	repo = newRepo(t)
	run(t, repo, "git", "config", "user.name", "Merger")
	run(t, repo, "git", "config", "user.email", "merger@example.com")
	commitFile(t, repo, "shared.txt", "base\n")
	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	commitFile(t, repo, "a.txt", "main\n")
	commitFile(t, info.Path, "b.txt", "worker\n")
	return repo, info.Path
}

func revParse(t *testing.T, dir, ref string) string {
	t.Helper()
	return strings.TrimSpace(run(t, dir, "git", "rev-parse", ref))
}

// worktreeCount is how many worktrees git lists for repo.
func worktreeCount(t *testing.T, repo string) int {
	return strings.Count(run(t, repo, "git", "worktree", "list", "--porcelain"), "worktree ")
}

// TestMergeStrategies (issue 19, item 2): each strategy lands the
// worker's commit on main, which is checked out in the repository and
// fast-forwarded there (a local change it does not touch is kept); the
// history has the strategy's shape; no temporary worktree is left; the
// worker's branch does not move.
func TestMergeStrategies(t *testing.T) {
	for _, c := range []struct {
		strategy string
		parents  int    // of main's new commit
		subject  string // its subject
	}{
		{StrategyMerge, 2, "Merge branch 'w' into main"},
		{StrategyRebase, 1, "add b.txt"},
		{StrategySquash, 1, "Squashed branch 'w' into main"},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			repo, wt := mergeRepo(t)
			oldMain, oldW := revParse(t, repo, "main"), revParse(t, wt, "HEAD")
			os.WriteFile(filepath.Join(repo, "a.txt"), []byte("local edit\n"), 0o644)
			res, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: c.strategy})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Commits) != 1 || !strings.HasSuffix(res.Commits[0], " add b.txt") || !strings.Contains(res.Diffstat, "b.txt") {
				t.Errorf("plan: %q %q", res.Commits, res.Diffstat)
			}
			if got := revParse(t, repo, "main"); got != res.NewCommit || got == oldMain {
				t.Errorf("main at %s, want the merge's %s", got, res.NewCommit)
			}
			if res.Checkout != repo {
				t.Errorf("checkout = %q, want %q", res.Checkout, repo)
			}
			parents := strings.Fields(run(t, repo, "git", "log", "-1", "--format=%P", "main"))
			subject := strings.TrimSpace(run(t, repo, "git", "log", "-1", "--format=%s", "main"))
			if len(parents) != c.parents || subject != c.subject {
				t.Errorf("main's new commit: %d parent(s), subject %q", len(parents), subject)
			}
			if committer := strings.TrimSpace(run(t, repo, "git", "log", "-1", "--format=%cn <%ce>", "main")); committer != "Merger <merger@example.com>" {
				t.Errorf("committer %q", committer)
			}
			if data, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(data) != "worker\n" {
				t.Errorf("the checkout of main was not fast-forwarded: b.txt = %q", data)
			}
			if data, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(data) != "local edit\n" {
				t.Errorf("the local edit of a.txt was lost: %q", data)
			}
			if got := revParse(t, wt, "HEAD"); got != oldW {
				t.Error("the worker's branch moved")
			}
			if n := worktreeCount(t, repo); n != 2 {
				t.Errorf("%d worktrees after the merge, want 2 (the temporary one removed)", n)
			}
			if _, err := PlanMerge(repo, "w", "main"); c.strategy == StrategyMerge && !errors.Is(err, ErrNothingToMerge) {
				t.Errorf("a second plan after a merge: %v", err)
			}
		})
	}
}

// TestMergeConflictChangesNothing (issue 19, item 2): a conflict is
// reported with its files, for every strategy, and every ref, the
// checkout and the worktree list are as they were.
func TestMergeConflictChangesNothing(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategy, func(t *testing.T) {
			repo, wt := mergeRepo(t)
			commitFile(t, repo, "shared.txt", "main's\n")
			commitFile(t, wt, "shared.txt", "worker's\n")
			refs := run(t, repo, "git", "for-each-ref")
			status := run(t, repo, "git", "status", "--porcelain")
			_, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: strategy})
			var conflict *ConflictError
			if !errors.As(err, &conflict) || strings.Join(conflict.Files, " ") != "shared.txt" {
				t.Fatalf("Merge = %v, want a conflict in shared.txt", err)
			}
			if !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("message: %v", err)
			}
			if got := run(t, repo, "git", "for-each-ref"); got != refs {
				t.Errorf("refs changed:\n%s\nwas:\n%s", got, refs)
			}
			if got := run(t, repo, "git", "status", "--porcelain"); got != status {
				t.Errorf("the checkout changed: %q", got)
			}
			if n := worktreeCount(t, repo); n != 2 {
				t.Errorf("%d worktrees, want 2", n)
			}
		})
	}
}

// TestMergeIntoBranchNotCheckedOut: a target no worktree has is moved by
// update-ref; a dry run moves nothing; an unknown target is an error.
func TestMergeIntoBranchNotCheckedOut(t *testing.T) {
	repo, _ := mergeRepo(t)
	run(t, repo, "git", "branch", "release", "main~1")
	old := revParse(t, repo, "release")
	res, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "release", Strategy: StrategyMerge, DryRun: true})
	if err != nil || res.NewCommit == "" || revParse(t, repo, "release") != old {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	res, err = Merge(MergeOptions{Repo: repo, Branch: "w", Into: "release", Strategy: StrategyMerge})
	if err != nil || res.Checkout != "" || revParse(t, repo, "release") != res.NewCommit {
		t.Fatalf("merge into release: %+v %v", res, err)
	}
	if _, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "nosuch", Strategy: StrategyMerge}); err == nil || !strings.Contains(err.Error(), "no branch nosuch") {
		t.Errorf("unknown target: %v", err)
	}
}

// TestMergeRunsNoRepositoryProgram (issue 19, item 2, with issue 16's
// rule): a merge in a repository whose configuration names a merge
// driver, hooks and a signing program runs none of them; the file the
// driver was for conflicts instead.
func TestMergeRunsNoRepositoryProgram(t *testing.T) {
	repo, wt := mergeRepo(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	prog := func(name string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\necho "+name+" >> "+marker+"\nexit 0\n"), 0o755)
		return p
	}
	commitFile(t, repo, ".gitattributes", "*.cfg merge=evil\n")
	run(t, wt, "git", "-c", "user.email=t@t", "-c", "user.name=t", "merge", "-q", "main")
	commitFile(t, repo, "x.cfg", "main\n")
	commitFile(t, wt, "x.cfg", "worker\n")
	hooks := filepath.Join(dir, "hooks")
	os.Mkdir(hooks, 0o755)
	for _, h := range []string{"pre-merge-commit", "commit-msg", "post-merge", "post-rewrite", "reference-transaction"} {
		os.Rename(prog("hook-"+h), filepath.Join(hooks, h))
	}
	for _, kv := range [][2]string{
		{"merge.evil.driver", prog("driver") + " %O %A %B"},
		{"core.hooksPath", hooks},
		{"commit.gpgSign", "true"},
		{"gpg.program", prog("gpg")},
	} {
		run(t, repo, "git", "config", kv[0], kv[1])
	}
	_, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge})
	var conflict *ConflictError
	if !errors.As(err, &conflict) || strings.Join(conflict.Files, " ") != "x.cfg" {
		t.Errorf("Merge = %v, want a conflict in x.cfg (its driver off)", err)
	}
	if data, _ := os.ReadFile(marker); len(data) > 0 {
		t.Errorf("the merge ran the repository's programs: %s", data)
	}
}

// TestMergeNeedsIdentity: without a committer identity the merge stops
// before it begins, saying how to set one.
func TestMergeNeedsIdentity(t *testing.T) {
	repo, _ := mergeRepo(t)
	run(t, repo, "git", "config", "--unset", "user.name")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_COMMITTER_NAME", "")
	_, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge})
	if err == nil || !strings.Contains(err.Error(), "no git identity") {
		t.Errorf("Merge without an identity: %v", err)
	}
}

// The temporary worktree's removal says when it fails (here git cannot
// prune: the repository is gone), rather than leave a worktree unseen.
func TestTempWorktreeCleanupSaysWhatItLeft(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tmp, cleanup, err := tempWorktree(repo, revParse(t, repo, "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	err = cleanup()
	if err == nil || !strings.HasPrefix(err.Error(), "cannot remove the temporary worktree "+tmp+": ") {
		t.Fatalf("cleanup = %v", err)
	}
	repo = newRepo(t)
	if _, cleanup, err = tempWorktree(repo, revParse(t, repo, "HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := cleanup(); err != nil {
		t.Fatalf("cleanup of a repository that is there = %v", err)
	}
}

// TestMergeKeepsIgnoredFiles (issue 27, item 21): the fast-forward in the
// user's checkout never overwrites a git-ignored file there (.env) nor
// deletes a git-ignored directory (data/) to make room for the branch's
// files: the merge stops, names both, and changes nothing.
func TestMergeKeepsIgnoredFiles(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	run(t, repo, "git", "config", "user.name", "Merger")
	run(t, repo, "git", "config", "user.email", "merger@example.com")
	commitFile(t, repo, ".gitignore", "/.env\n/data/\n")
	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(info.Path, ".env"), []byte("the agent's\n"), 0o644)
	os.WriteFile(filepath.Join(info.Path, "data"), []byte("a file\n"), 0o644)
	run(t, info.Path, "git", "add", "-f", ".env", "data")
	run(t, info.Path, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "env and data")
	os.WriteFile(filepath.Join(repo, ".env"), []byte("SECRET=mine\n"), 0o600)
	os.Mkdir(filepath.Join(repo, "data"), 0o755)
	os.WriteFile(filepath.Join(repo, "data", "big.bin"), []byte("mine\n"), 0o644)
	oldMain := revParse(t, repo, "main")

	_, err = Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge})
	if err == nil {
		t.Fatal("the merge went through over the checkout's ignored files")
	}
	if msg := err.Error(); !strings.Contains(msg, ".env") || !strings.Contains(msg, "data") || !strings.Contains(msg, "nothing was changed") {
		t.Errorf("message does not name the blocking files: %v", err)
	}
	if !strings.Contains(hint.Of(err), "swarm merge again") {
		t.Errorf("no hint to merge again: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, ".env")); string(data) != "SECRET=mine\n" {
		t.Errorf(".env overwritten: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "data", "big.bin")); string(data) != "mine\n" {
		t.Errorf("data/ deleted: %q", data)
	}
	if got := revParse(t, repo, "main"); got != oldMain {
		t.Errorf("main moved to %s", got)
	}
}

// signHead gives the commit at HEAD of dir a signature header (made up:
// it is never to be checked), as an agent can write any commit object.
func signHead(t *testing.T, dir string) {
	t.Helper()
	raw := run(t, dir, "git", "cat-file", "commit", "HEAD")
	header, body, _ := strings.Cut(raw, "\n\n")
	sig := "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
	obj := filepath.Join(t.TempDir(), "commit")
	os.WriteFile(obj, []byte(header+"\n"+sig+"\n\n"+body), 0o644)
	id := strings.TrimSpace(run(t, dir, "git", "hash-object", "-t", "commit", "-w", obj))
	run(t, dir, "git", "update-ref", "HEAD", id)
}

// TestMergeFastForwardVerifiesNoSignature (issue 27, item 24): with a
// repository's merge.verifySignatures and signature programs of its own,
// a plain fast-forward of the checkout runs the program on a signed tip
// (a rebase onto an unmoved target keeps the worker's commit, which the
// agent signed) and refuses an unsigned one (a merge commit); swarm's
// runs none and moves the target.
func TestMergeFastForwardVerifiesNoSignature(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{StrategyRebase, StrategyMerge} {
		t.Run(strategy, func(t *testing.T) {
			repo := newRepo(t)
			run(t, repo, "git", "config", "user.name", "Merger")
			run(t, repo, "git", "config", "user.email", "merger@example.com")
			info, err := Create(repo, DefaultPath(repo, "w"), "w")
			if err != nil {
				t.Fatal(err)
			}
			commitFile(t, info.Path, "b.txt", "worker\n")
			signHead(t, info.Path)
			dir := t.TempDir()
			marker := filepath.Join(dir, "ran")
			for _, name := range []string{"gpg", "gpgsm", "ssh-keygen"} {
				p := filepath.Join(dir, name)
				os.WriteFile(p, []byte("#!/bin/sh\necho "+name+" >> "+marker+"\nexit 0\n"), 0o755)
			}
			for _, kv := range [][2]string{
				{"merge.verifySignatures", "true"},
				{"gpg.program", filepath.Join(dir, "gpg")},
				{"gpg.openpgp.program", filepath.Join(dir, "gpg")},
				{"gpg.x509.program", filepath.Join(dir, "gpgsm")},
				{"gpg.ssh.program", filepath.Join(dir, "ssh-keygen")},
				{"log.showSignature", "true"},
			} {
				run(t, repo, "git", "config", kv[0], kv[1])
			}
			res, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: strategy})
			if data, _ := os.ReadFile(marker); len(data) > 0 {
				t.Errorf("the merge ran the repository's signature programs: %s", data)
			}
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if got := revParse(t, repo, "main"); got != res.NewCommit {
				t.Errorf("main at %s, want %s", got, res.NewCommit)
			}
		})
	}
}

// hintCommand is the shell command a hint gives after marker, up to end.
func hintCommand(t *testing.T, h, marker, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(h, marker)
	cmd, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("hint %q has no command after %q", h, marker)
	}
	return cmd
}

// TestMergeBlockedHintRunsAsPrinted (issue 27, item 9): a fast-forward
// the checkout's ignored files stop hints a git command that runs as
// printed in a checkout whose path holds a space and a quote.
func TestMergeBlockedHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "my 'proj")
	os.Mkdir(repo, 0o755)
	run(t, repo, "git", "init", "-q", "-b", "main")
	run(t, repo, "git", "config", "user.name", "Merger")
	run(t, repo, "git", "config", "user.email", "merger@example.com")
	commitFile(t, repo, ".gitignore", "/.env\n")
	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(info.Path, ".env"), []byte("the agent's\n"), 0o644)
	run(t, info.Path, "git", "add", "-f", ".env")
	run(t, info.Path, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "env")
	os.WriteFile(filepath.Join(repo, ".env"), []byte("SECRET=mine\n"), 0o600)

	_, err = Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge})
	if err == nil {
		t.Fatal("the merge went through over the checkout's ignored file")
	}
	cmd := hintCommand(t, hint.Of(err), "see them with: ", "), then")
	out, rerr := exec.Command("sh", "-c", cmd).CombinedOutput()
	if rerr != nil || !strings.Contains(string(out), ".env") {
		t.Errorf("the hint's command %q: %v\n%s", cmd, rerr, out)
	}
}

// TestMergeBlockedByLocalChanges: a fast-forward stopped by the user's
// uncommitted changes to a tracked file of the checkout (not an untracked
// or ignored one) says so, and hints committing or stashing them: moving
// a tracked file away is a change too, and would stop it again.
func TestMergeBlockedByLocalChanges(t *testing.T) {
	t.Parallel()
	repo, wt := mergeRepo(t)
	commitFile(t, wt, "shared.txt", "worker's\n")
	os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("the user's, uncommitted\n"), 0o644)
	oldMain := revParse(t, repo, "main")
	_, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge})
	if err == nil {
		t.Fatal("the merge went through over the checkout's local changes")
	}
	msg, h := err.Error(), hint.Of(err)
	if !strings.Contains(msg, "uncommitted changes") || !strings.Contains(msg, "shared.txt") || strings.Contains(msg, "does not track") ||
		!strings.Contains(h, "commit") || strings.Contains(h, "move them out of the way") {
		t.Errorf("message: %v\nhint: %s", msg, h)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "shared.txt")); string(data) != "the user's, uncommitted\n" {
		t.Errorf("shared.txt: %q", data)
	}
	if got := revParse(t, repo, "main"); got != oldMain {
		t.Errorf("main moved to %s", got)
	}
}

// TestMergeDryRunNamesWhatStopsTheFastForward (issue 27, items 8 and 21):
// --dry-run names what would stop the fast-forward in the checkout of the
// target, as the merge itself would: a git-ignored file (.env) or
// directory (data/) where the branch writes, a local change to a file it
// writes. It said the merge was clean, and the merge then stopped.
func TestMergeDryRunNamesWhatStopsTheFastForward(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	run(t, repo, "git", "config", "user.name", "Merger")
	run(t, repo, "git", "config", "user.email", "merger@example.com")
	commitFile(t, repo, ".gitignore", "/.env\n/data/\n")
	commitFile(t, repo, "shared.txt", "base\n")
	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(info.Path, ".env"), []byte("the agent's\n"), 0o644)
	os.WriteFile(filepath.Join(info.Path, "data"), []byte("a file\n"), 0o644)
	os.WriteFile(filepath.Join(info.Path, "shared.txt"), []byte("worker's\n"), 0o644)
	run(t, info.Path, "git", "add", "-f", ".env", "data", "shared.txt")
	run(t, info.Path, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "env, data, shared")
	os.WriteFile(filepath.Join(repo, ".env"), []byte("SECRET=mine\n"), 0o600)
	os.Mkdir(filepath.Join(repo, "data"), 0o755)
	os.WriteFile(filepath.Join(repo, "data", "big.bin"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("the user's, uncommitted\n"), 0o644)
	oldMain := revParse(t, repo, "main")

	_, err = Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge, DryRun: true})
	if err == nil {
		t.Fatal("--dry-run says the merge is clean; the merge would stop at the checkout's files")
	}
	for _, want := range []string{".env", "data", "shared.txt", "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("--dry-run does not name %s: %v", want, err)
		}
	}
	if hint.Of(err) == "" {
		t.Errorf("--dry-run's error has no hint: %v", err)
	}
	if got := revParse(t, repo, "main"); got != oldMain {
		t.Errorf("main moved to %s", got)
	}
}

// TestBaseAndBranchHintsRunAsPrinted: the hints of an unknown --base and
// of a --new-branch that exists give git commands that run as printed in
// a repository whose path holds a space and a quote.
func TestBaseAndBranchHintsRunAsPrinted(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "my 'proj")
	os.Mkdir(repo, 0o755)
	run(t, repo, "git", "init", "-q", "-b", "main")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
	run(t, repo, "git", "branch", "taken")
	_, err := Create(repo, DefaultPath(repo, "w"), "w", CreateOptions{Base: "nosuch"})
	if err == nil {
		t.Fatal("an unknown base was taken")
	}
	cmd := hintCommand(t, hint.Of(err), "(", " lists the branches)")
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil || !strings.Contains(string(out), "taken") {
		t.Errorf("the hint's %q: %v\n%s", cmd, err, out)
	}
	_, err = Create(repo, DefaultPath(repo, "taken"), "taken", CreateOptions{NewBranch: true})
	if err == nil {
		t.Fatal("an existing branch was taken as a new one")
	}
	cmd = strings.TrimSpace(hintCommand(t, hint.Of(err)+"\n", "delete the old one first: ", "\n"))
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Errorf("the hint's %q: %v\n%s", cmd, err, out)
	}
}
