package main

// Black-box tests of issue 19, item 2: swarm merge and swarm diff.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// lcMergeEnv is a repository (main checked out) with a branch "stable"
// and a process worker w spawned with --worktree --base stable, whose
// worktree has one commit of its own (b.txt).
func lcMergeEnv(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	e := testenv.New(t)
	e.InitRepo()
	e.Git(e.Dir, "config", "user.name", "Merger")
	e.Git(e.Dir, "config", "user.email", "merger@example.com")
	e.Git(e.Dir, "branch", "stable")
	e.MustRun("spawn", "--name", "w", "--worktree", "--base", "stable", "--", "sleep", "300")
	wt := wkWorktreePath(e, "w")
	os.WriteFile(filepath.Join(wt, "b.txt"), []byte("worker\n"), 0o644)
	e.Git(wt, "add", "b.txt")
	e.Git(wt, "commit", "-qm", "add b.txt")
	return e, wt
}

// TestMergeCommand: swarm merge refuses uncommitted work with the command
// that shows it; --dry-run shows the commits and diffstat and changes
// nothing; the merge goes into the worker's --base (stable), not the
// branch checked out; diff shows the change; a second merge has nothing
// to merge.
func TestMergeCommand(t *testing.T) {
	t.Parallel()
	e, wt := lcMergeEnv(t)
	// A change to a tracked file (an untracked one does not count: see
	// TestMergeUntrackedFiles).
	os.WriteFile(filepath.Join(wt, "README"), []byte("uncommitted\n"), 0o644)
	wkExpect(t, "merge with uncommitted work", e.Run("merge", "w"), 1, "",
		"swarm: error: worker 'w' has 1 uncommitted change(s) in its worktree "+wt+"\n"+
			"hint: see it: git -C '"+wt+"' status; commit it on branch w, then merge\n")
	e.Git(wt, "checkout", "-q", "README")

	diff := e.MustRun("diff", "w")
	if !strings.Contains(diff.Stdout, "+++ b/b.txt\n") || !strings.Contains(diff.Stdout, "+worker\n") {
		t.Errorf("swarm diff:\n%s", diff.Stdout)
	}
	if r := e.MustRun("diff", "w", "--stat"); !strings.Contains(r.Stdout, "b.txt | 1 +") {
		t.Errorf("swarm diff --stat: %q", r.Stdout)
	}

	stable := strings.TrimSpace(e.Git(e.Dir, "rev-parse", "stable"))
	r := e.MustRun("merge", "w", "--dry-run")
	plan := regexp.MustCompile(`^would merge w \(branch w, 1 commit\(s\)\) into stable by merge:\n  [0-9a-f]+ add b.txt\n b.txt \| 1 \+\n 1 file changed, 1 insertion\(\+\)\ndry run: merges cleanly \(stable would move [0-9a-f]{12} -> [0-9a-f]{12}\); nothing was changed\n$`)
	if !plan.MatchString(r.Stdout) || r.Stderr != "" {
		t.Errorf("merge --dry-run: %s", r)
	}
	if got := strings.TrimSpace(e.Git(e.Dir, "rev-parse", "stable")); got != stable {
		t.Error("--dry-run moved stable")
	}

	r = e.MustRun("merge", "w")
	if !regexp.MustCompile(`\nmerged w into stable: [0-9a-f]{12} -> [0-9a-f]{12}\n$`).MatchString(r.Stdout) {
		t.Errorf("merge: %s", r)
	}
	if got := e.Git(e.Dir, "show", "stable:b.txt"); got != "worker\n" {
		t.Errorf("stable's b.txt: %q", got)
	}
	if wkExists(filepath.Join(e.Dir, "b.txt")) {
		t.Error("the merge touched the checkout of main")
	}
	wkExpect(t, "merge again", e.Run("merge", "w"), 0, "w: nothing to merge: stable has every commit of w\n", "")
}

// TestMergeCommandConflictAndLoop: a conflict exits 1 listing the file
// and leaves the target as it was; a worker whose ralph loop runs is
// refused; a worker without a worktree is refused.
func TestMergeCommandConflictAndLoop(t *testing.T) {
	t.Parallel()
	e, wt := lcMergeEnv(t)
	e.Git(e.Dir, "checkout", "-q", "stable")
	e.WriteFile("b.txt", "stable's\n")
	e.Git(e.Dir, "add", "b.txt")
	e.Git(e.Dir, "commit", "-qm", "stable b.txt")
	before := e.Git(e.Dir, "for-each-ref")
	r := e.Run("merge", "w", "--strategy", "rebase")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: merging w into stable (rebase) conflicts in 1 file(s): b.txt; nothing was changed\n") {
		t.Errorf("conflicting merge: %s", r)
	}
	if e.Git(e.Dir, "for-each-ref") != before || e.Git(e.Dir, "status", "--porcelain") != "" {
		t.Error("a conflicting merge changed a ref or the checkout")
	}
	if n := strings.Count(e.Git(e.Dir, "worktree", "list"), "\n"); n != 2 {
		t.Errorf("%d worktrees after a conflict, want 2", n)
	}
	_ = wt

	prompt := e.WriteFile("PROMPT.md", "work\n")
	e.MustRun("ralph", "spawn", "--name", "loop", "--prompt-file", prompt, "--", e.Agent, "--script", "quiet")
	wkExpect(t, "merge of a running loop", e.Run("merge", "loop"), 1, "",
		"swarm: error: worker 'loop' has a ralph loop that is running: its branch is still changing\n"+
			"hint: wait for it to end (swarm ralph wait loop) or stop it (swarm kill loop), then merge\n")
	e.MustRun("kill", "loop")

	e.MustRun("spawn", "--name", "plain", "--", "sleep", "300")
	wkExpect(t, "merge without a worktree", e.Run("merge", "plain"), 1, "",
		"swarm: error: worker 'plain' has no worktree: nothing to merge\nhint: swarm merge takes the branch of a worker spawned with --worktree\n")
}

// TestMergeConflictHintResolves (issue 27, item 9): a conflicting merge
// prints a hint whose commands, run as printed, bring the conflict into
// the worker's worktree; once resolved and committed as the hint says,
// swarm merge is clean. For a rebase, the hint rebases the branch; with
// the worktree gone, it makes it again first.
func TestMergeConflictHintResolves(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"merge", "rebase"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			e, wt := lcMergeEnv(t)
			e.Git(e.Dir, "checkout", "-q", "stable")
			e.WriteFile("b.txt", "stable's\n")
			e.Git(e.Dir, "add", "b.txt")
			e.Git(e.Dir, "commit", "-qm", "stable b.txt")
			if strategy == "rebase" {
				// The worker's worktree is gone: the hint makes it again.
				e.Git(e.Dir, "worktree", "remove", wt)
			}
			r := e.Run("merge", "w", "--strategy", strategy)
			hintLine := ""
			for _, l := range strings.Split(r.Stderr, "\n") {
				if h, ok := strings.CutPrefix(l, "hint: "); ok {
					hintLine = h
				}
			}
			if r.Code != 1 || hintLine == "" {
				t.Fatalf("conflicting merge without a hint: %s", r)
			}
			// "...there: CMDS (fix each file, ...), then: swarm merge w"
			_, rest, _ := strings.Cut(hintLine, "there: ")
			cmds, fix, ok := strings.Cut(rest, " (fix each file")
			if !ok || !strings.HasSuffix(hintLine, "then: swarm merge w") {
				t.Fatalf("hint: %q", hintLine)
			}
			sh := exec.Command("sh", "-c", cmds)
			sh.Dir = t.TempDir()
			out, err := sh.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "CONFLICT") {
				t.Fatalf("the hint's commands %q did not stop at the conflict: %v\n%s", cmds, err, out)
			}
			os.WriteFile(filepath.Join(wt, "b.txt"), []byte("both\n"), 0o644)
			if strategy == "rebase" {
				e.Git(wt, "add", "b.txt")
				c := exec.Command("git", "-C", wt, "-c", "core.editor=true", "rebase", "--continue")
				c.Env = append(os.Environ(), "GIT_EDITOR=true")
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("rebase --continue: %v\n%s", err, out)
				}
			} else {
				// The commit command as the hint prints it.
				commit := strings.TrimPrefix(fix, ", then ")
				commit, _, _ = strings.Cut(commit, "), then:")
				if out, err := exec.Command("sh", "-c", commit).CombinedOutput(); err != nil {
					t.Fatalf("the hint's commit %q: %v\n%s", commit, err, out)
				}
			}
			r = e.Run("merge", "w", "--strategy", strategy)
			if r.Code != 0 || !strings.Contains(r.Stdout, "merged w into stable") {
				t.Fatalf("merge after resolving as the hint says: %s", r)
			}
			if got := e.Git(e.Dir, "show", "stable:b.txt"); got != "both\n" {
				t.Errorf("stable's b.txt after the resolved merge: %q", got)
			}
		})
	}
}

// TestMergeUntrackedFiles (issue 27, item 8): untracked files in the
// worker's worktree are not merged and do not stop swarm merge; swarm
// diff lists them. One at a path the merge writes stops it, named, with
// nothing changed: in the checkout of the target (the fast-forward would
// overwrite it) and in the worker's worktree (its uncommitted version
// would be left out). --dry-run names it too.
func TestMergeUntrackedFiles(t *testing.T) {
	t.Parallel()
	e, wt := lcMergeEnv(t)
	// The branch also deletes README, which the worker then makes again
	// without committing it.
	e.Git(wt, "rm", "-q", "README")
	e.Git(wt, "commit", "-qm", "drop README")
	os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("scratch\n"), 0o644)
	os.MkdirAll(filepath.Join(wt, "tmp"), 0o755)
	os.WriteFile(filepath.Join(wt, "tmp", "out.log"), []byte("log\n"), 0o644)

	for _, args := range [][]string{{"diff", "w"}, {"diff", "w", "--stat"}} {
		r := e.MustRun(args...)
		if !strings.HasSuffix(r.Stdout, "untracked files (not in the diff; swarm merge leaves them out):\n?? notes.txt\n?? tmp/out.log\n") {
			t.Errorf("swarm %s does not list the untracked files:\n%s", strings.Join(args, " "), r.Stdout)
		}
	}

	e.Git(e.Dir, "checkout", "-q", "stable")
	e.WriteFile("b.txt", "mine, untracked\n")
	before := e.Git(e.Dir, "for-each-ref")
	for _, dry := range []bool{true, false} {
		args := []string{"merge", "w"}
		if dry {
			args = append(args, "--dry-run")
		}
		r := e.Run(args...)
		if r.Code != 1 || !strings.Contains(r.Stdout, " w (branch w, 2 commit(s)) into stable by merge:") ||
			!strings.Contains(r.Stderr, "swarm: error: 1 untracked file(s) in the checkout of the target "+e.Dir+" at paths the merge would write: b.txt; nothing was changed\n"+
				"hint: look at them (git -C '"+e.Dir+"' status), move them elsewhere or delete them, then: swarm merge w\n") {
			t.Errorf("swarm %s with an untracked b.txt in the target's checkout: %s", strings.Join(args, " "), r)
		}
	}
	if e.Git(e.Dir, "for-each-ref") != before || wkRead(t, filepath.Join(e.Dir, "b.txt")) != "mine, untracked\n" {
		t.Error("a merge stopped by an untracked file changed a ref or the file")
	}
	os.Remove(filepath.Join(e.Dir, "b.txt"))

	os.WriteFile(filepath.Join(wt, "README"), []byte("the worker's own\n"), 0o644)
	r := e.Run("merge", "w", "--dry-run")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: 1 untracked file(s) in the worker's worktree "+wt+" at paths the merge would write: README; nothing was changed\n"+
		"hint: commit them on branch w to merge them (git -C '"+wt+"' add -- 'README' && git -C '"+wt+"' commit -m 'add untracked files'), or remove them, then: swarm merge w\n") {
		t.Errorf("merge --dry-run with an untracked README where the merge deletes it: %s", r)
	}
	// Both at once: a dry run names every file in the way.
	e.WriteFile("b.txt", "mine, untracked\n")
	r = e.Run("merge", "w", "--dry-run")
	if r.Code != 1 || !strings.Contains(r.Stderr, "in the worker's worktree "+wt+" at paths the merge would write: README;") ||
		!strings.Contains(r.Stderr, "\n1 untracked file(s) in the checkout of the target "+e.Dir+" at paths the merge would write: b.txt;") {
		t.Errorf("merge --dry-run with untracked files in both places: %s", r)
	}
	os.Remove(filepath.Join(e.Dir, "b.txt"))
	os.Remove(filepath.Join(wt, "README"))

	r = e.Run("merge", "w")
	if r.Code != 0 || !strings.Contains(r.Stdout, "merged w into stable") {
		t.Fatalf("merge with untracked files elsewhere: %s", r)
	}
	if got := e.Git(e.Dir, "ls-tree", "-r", "--name-only", "stable"); got != "b.txt\n" {
		t.Errorf("stable's files after the merge: %q (the untracked files are not merged)", got)
	}
	if !wkExists(filepath.Join(wt, "notes.txt")) {
		t.Error("the merge touched the worker's untracked file")
	}
}
