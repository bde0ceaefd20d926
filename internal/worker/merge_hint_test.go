package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worktree"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestConflictFixQuotesBranches (issue 27, item 9): the conflict hint's
// commands run as printed when the target branch's name holds characters
// a shell reads ("rel'ease;x", which git allows) and the worktree's path a
// space: they bring the target into the worker's branch and stop at the
// conflict, and its commit command commits the resolution.
func TestConflictFixQuotesBranches(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "my proj")
	os.Mkdir(repo, 0o755)
	gitT(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "f"), []byte("base\n"), 0o644)
	gitT(t, repo, "add", "f")
	gitT(t, repo, "commit", "-qm", "base")
	into := "rel'ease;x"
	gitT(t, repo, "branch", into)
	wt := filepath.Join(base, "my wt")
	gitT(t, repo, "worktree", "add", "-q", "-b", "w", wt)
	os.WriteFile(filepath.Join(wt, "f"), []byte("worker\n"), 0o644)
	gitT(t, wt, "commit", "-qam", "worker")
	gitT(t, repo, "checkout", "-q", into)
	os.WriteFile(filepath.Join(repo, "f"), []byte("target\n"), 0o644)
	gitT(t, repo, "commit", "-qam", "target")

	w := &state.Worker{Name: "w", Worktree: &state.WorktreeInfo{BaseRepo: repo, Path: wt, Branch: "w"}}
	h := conflictFix(w, &worktree.ConflictError{Branch: "w", Into: into, Strategy: worktree.StrategyMerge, Files: []string{"f"}})
	_, rest, _ := strings.Cut(h, "there: ")
	cmds, fix, ok := strings.Cut(rest, " (fix each file")
	if !ok {
		t.Fatalf("hint: %q", h)
	}
	out, err := exec.Command("sh", "-c", cmds).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CONFLICT") {
		t.Fatalf("the hint's commands %q did not stop at the conflict: %v\n%s", cmds, err, out)
	}
	os.WriteFile(filepath.Join(wt, "f"), []byte("both\n"), 0o644)
	commit := strings.TrimPrefix(fix, ", then ")
	commit, _, _ = strings.Cut(commit, "), then:")
	c := exec.Command("sh", "-c", commit)
	c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the hint's commit %q: %v\n%s", commit, err, out)
	}
	if got := gitT(t, wt, "log", "-1", "--format=%s"); got != "merge "+into+"\n" {
		t.Errorf("the resolution was committed as %q", got)
	}
	if st := gitT(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("left after the hint's commit: %q", st)
	}
}

// TestSetupRetryKeepsTheUserShell (issue 27, item 9): a failed
// --worktree-setup's hint, pasted into the user's shell, runs the command
// in a shell of its own, as the spawn ran it (sh -c): a command that ends
// with "exit 3" ends that shell, not the user's, and the rest of what the
// user typed still runs.
func TestSetupRetryKeepsTheUserShell(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "my proj")
	os.Mkdir(repo, 0o755)
	gitT(t, repo, "init", "-q", "-b", "main")
	gitT(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	head := strings.TrimSpace(gitT(t, repo, "rev-parse", "HEAD"))
	info := worktree.Info{BaseRepo: repo, Path: filepath.Join(base, "gone"), BaseCommit: head}
	h := setupRetry("echo in-setup; exit 3", info, nil, nil)
	_, retry, ok := strings.Cut(h, "to see why: ")
	if !ok {
		t.Fatalf("hint: %q", h)
	}
	sh := exec.Command("sh", "-c", retry+"\necho user-shell-still-here")
	sh.Dir = t.TempDir()
	out, _ := sh.CombinedOutput()
	if !strings.Contains(string(out), "in-setup") || !strings.Contains(string(out), "user-shell-still-here") {
		t.Errorf("the hint %q, typed into a shell, ended it:\n%s", retry, out)
	}
}

// TestSetupHintInAReusedWorktree (issue 27, item 9): a set-up command that
// fails in a worktree the spawn reused (which stays) hints running it
// there as the spawn did: with the worker's --env, in a shell of its own.
func TestSetupHintInAReusedWorktree(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "it's here")
	os.Mkdir(dir, 0o755)
	err := runSetup(`echo "var=$SETUP_VAR"; exit 3`, dir, map[string]string{"SETUP_VAR": "it's v"})
	if err == nil {
		t.Fatal("a failing set-up command succeeded")
	}
	_, retry, ok := strings.Cut(hint.Of(err), "to see why: ")
	if !ok {
		t.Fatalf("hint: %q", hint.Of(err))
	}
	sh := exec.Command("sh", "-c", retry+"\necho user-shell-still-here")
	sh.Dir = t.TempDir()
	out, _ := sh.CombinedOutput()
	if !strings.Contains(string(out), "var=it's v") || !strings.Contains(string(out), "user-shell-still-here") {
		t.Errorf("the hint %q, typed into a shell:\n%s", retry, out)
	}
}
