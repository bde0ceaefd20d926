package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMergeUntrackedInTheWay (issue 27, item 8): an untracked file of the
// worker's worktree elsewhere is no reason to refuse; a nested repository
// (listed by git as its directory) where the merge writes in the target's
// checkout stops the merge, dry or not, named, with nothing changed.
func TestMergeUntrackedInTheWay(t *testing.T) {
	repo, wt := mergeRepo(t)
	commitFile(t, wt, "sub/x.txt", "worker\n")
	os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("scratch\n"), 0o644)
	if err := Committed(wt); err != nil {
		t.Errorf("an untracked file counts as uncommitted work: %v", err)
	}
	run(t, repo, "git", "init", "-q", "sub")
	os.WriteFile(filepath.Join(repo, "sub", "mine.txt"), []byte("mine\n"), 0o644)
	main := revParse(t, repo, "main")
	for _, dry := range []bool{true, false} {
		_, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge, Worktree: wt, DryRun: dry})
		var u *UntrackedError
		if !errors.As(err, &u) || u.Worker || u.Dir != repo || !slices.Equal(u.Files, []string{"sub/"}) {
			t.Errorf("Merge (dry %v) with a nested repository where it writes: %v", dry, err)
		}
	}
	if revParse(t, repo, "main") != main {
		t.Error("a merge stopped by an untracked file moved main")
	}
	os.RemoveAll(filepath.Join(repo, "sub"))
	res, err := Merge(MergeOptions{Repo: repo, Branch: "w", Into: "main", Strategy: StrategyMerge, Worktree: wt})
	if err != nil || revParse(t, repo, "main") != res.NewCommit {
		t.Fatalf("Merge with an untracked file out of its way: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "notes.txt")); err != nil {
		t.Error("the merge touched the worker's untracked file")
	}
}
