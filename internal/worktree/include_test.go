package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
)

// commitFile writes and commits a file in repo.
func commitFile(t *testing.T, repo, name, content string) string {
	t.Helper()
	p := filepath.Join(repo, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "git", "add", name)
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "add "+name)
	return strings.TrimSpace(run(t, repo, "git", "rev-parse", "HEAD"))
}

// TestCreateFromBase (issue 19, item 1): a new branch starts at --base,
// not at HEAD; an unknown base is refused before anything is made, with
// how to list the branches; a note about a reused branch measures it
// against the base.
func TestCreateFromBase(t *testing.T) {
	repo := newRepo(t)
	first := commitFile(t, repo, "a.txt", "one\n")
	run(t, repo, "git", "branch", "stable")
	commitFile(t, repo, "a.txt", "two\n")

	info, err := Create(repo, DefaultPath(repo, "w"), "w", CreateOptions{Base: "stable"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Head(info.Path); got != first {
		t.Errorf("worktree HEAD = %s, want the base stable at %s", got, first)
	}
	if info.BaseCommit != first || info.Base != "stable" {
		t.Errorf("info base = %q %q", info.Base, info.BaseCommit)
	}
	if data, _ := os.ReadFile(filepath.Join(info.Path, "a.txt")); string(data) != "one\n" {
		t.Errorf("a.txt = %q", data)
	}

	_, err = Create(repo, DefaultPath(repo, "x"), "x", CreateOptions{Base: "nosuch"})
	if err == nil || !strings.Contains(err.Error(), "unknown base 'nosuch'") || !strings.Contains(hint.Of(err), "branch -a") {
		t.Errorf("unknown base: %v (hint %q)", err, hint.Of(err))
	}
	if _, err := os.Stat(DefaultPath(repo, "x")); err == nil || branchExists(repo, "x") {
		t.Error("an unknown base left a worktree or branch behind")
	}
	if _, err := Create(repo, DefaultPath(repo, "y"), "y", CreateOptions{Base: "--orphan"}); err == nil {
		t.Error("a base that reads as an option was taken")
	}

	// An existing branch is measured against the base given.
	run(t, repo, "git", "branch", "old", first)
	info, err = Create(repo, DefaultPath(repo, "old"), "old", CreateOptions{Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if note := info.Note(); !strings.Contains(note, "1 commit(s) behind main") {
		t.Errorf("note = %q", note)
	}
}

// TestCreateNewBranchRefusesExisting (issue 19, item 1): with NewBranch
// an existing branch, or a kept worktree on it, is refused and left as it
// was; without, it is reused as before.
func TestCreateNewBranchRefusesExisting(t *testing.T) {
	repo := newRepo(t)
	run(t, repo, "git", "branch", "taken")
	before := strings.TrimSpace(run(t, repo, "git", "rev-parse", "taken"))
	_, err := Create(repo, DefaultPath(repo, "taken"), "taken", CreateOptions{NewBranch: true})
	if err == nil || !strings.Contains(err.Error(), "branch taken already exists") || !strings.Contains(hint.Of(err), "branch -D taken") {
		t.Fatalf("NewBranch on an existing branch: %v (hint %q)", err, hint.Of(err))
	}
	if _, err := os.Stat(DefaultPath(repo, "taken")); err == nil {
		t.Error("a refused create made the worktree")
	}
	if got := strings.TrimSpace(run(t, repo, "git", "rev-parse", "taken")); got != before {
		t.Error("a refused create moved the branch")
	}
	info, err := Create(repo, DefaultPath(repo, "taken"), "taken")
	if err != nil || info.Reused != "branch" {
		t.Fatalf("reuse without NewBranch: %+v %v", info, err)
	}
	if _, err := Create(repo, info.Path, "taken", CreateOptions{NewBranch: true}); err == nil {
		t.Error("NewBranch reused a kept worktree")
	}
	if _, err := Create(repo, DefaultPath(repo, "fresh"), "fresh", CreateOptions{NewBranch: true}); err != nil {
		t.Errorf("NewBranch with a new branch: %v", err)
	}
}

// TestCopyIncluded (issue 19, item 1): the git-ignored files that
// .worktreeinclude names are copied into a new worktree with their modes;
// ignored files it does not name, and files it names that git does not
// ignore, are not; a symbolic link is copied as a link, never followed; a
// path that leads out of the worktree through a link checked out there is
// refused; a file the worktree already has is kept.
func TestCopyIncluded(t *testing.T) {
	repo := newRepo(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".env\n*.local\nconf/\nsecret.txt\nlink.local\nnotes\n"), 0o644)
	run(t, repo, "git", "add", ".gitignore")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "ignore")
	// At the base, "conf" is a tracked link out of the worktree: the
	// ignored conf/x.local of today's checkout must not be written there.
	run(t, repo, "git", "branch", "linked")
	wtLinked := filepath.Join(t.TempDir(), "l")
	run(t, repo, "git", "worktree", "add", "-q", wtLinked, "linked")
	os.Symlink(outside, filepath.Join(wtLinked, "conf"))
	run(t, wtLinked, "git", "add", "-f", "conf")
	run(t, wtLinked, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "conf link")
	run(t, repo, "git", "worktree", "remove", wtLinked)

	os.WriteFile(filepath.Join(repo, ".worktreeinclude"), []byte("# settings\n.env\n*.local\nconf/\ntracked.txt\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".env"), []byte("TOKEN=x\n"), 0o600)
	os.WriteFile(filepath.Join(repo, "run.local"), []byte("#!/bin/sh\n"), 0o755)
	os.Mkdir(filepath.Join(repo, "conf"), 0o755)
	os.WriteFile(filepath.Join(repo, "conf", "x.local"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "secret.txt"), []byte("not named\n"), 0o600)
	os.WriteFile(filepath.Join(outside, "target"), []byte("outside\n"), 0o644)
	os.Symlink(filepath.Join(outside, "target"), filepath.Join(repo, "link.local"))
	commitFile(t, repo, "tracked.txt", "tracked\n")

	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	inc, err := CopyIncluded(repo, info.Path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(inc.Copied, " "); got != ".env conf/x.local link.local run.local" {
		t.Errorf("copied %q", got)
	}
	for name, mode := range map[string]os.FileMode{".env": 0o600, "run.local": 0o755, "conf/x.local": 0o644} {
		fi, err := os.Lstat(filepath.Join(info.Path, name))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s in the worktree: %v %v, want mode %v", name, fi, err, mode)
		}
	}
	if target, err := os.Readlink(filepath.Join(info.Path, "link.local")); err != nil || target != filepath.Join(outside, "target") {
		t.Errorf("link.local = %q %v, want the same link", target, err)
	}
	if _, err := os.Stat(filepath.Join(info.Path, "secret.txt")); err == nil {
		t.Error("an ignored file .worktreeinclude does not name was copied")
	}

	// From the base with the link: conf/x.local is refused.
	info2, err := Create(repo, DefaultPath(repo, "w2"), "w2", CreateOptions{Base: "linked"})
	if err != nil {
		t.Fatal(err)
	}
	inc, err = CopyIncluded(repo, info2.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.local")); err == nil {
		t.Error("a copy was written out of the worktree through a checked-out link")
	}
	if len(inc.Skipped) != 1 || !strings.HasPrefix(inc.Skipped[0], "conf/x.local (") {
		t.Errorf("skipped %q, want conf/x.local", inc.Skipped)
	}

	// No .worktreeinclude: nothing.
	os.Remove(filepath.Join(repo, ".worktreeinclude"))
	if inc, err := CopyIncluded(repo, info.Path); err != nil || len(inc.Copied)+len(inc.Skipped) != 0 {
		t.Errorf("without the file: %+v %v", inc, err)
	}
}

// TestRemoveAllowsUnchangedIncludedCopies (issue 19, item 1): the copies
// CopyIncluded made do not keep a worktree from being removed while they
// are unchanged (the base repository has them); a changed one does.
func TestRemoveAllowsUnchangedIncludedCopies(t *testing.T) {
	repo := newRepo(t)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".env\n"), 0o644)
	run(t, repo, "git", "add", ".gitignore")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "ignore")
	os.WriteFile(filepath.Join(repo, ".worktreeinclude"), []byte(".env\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".env"), []byte("A=1\n"), 0o600)

	for _, c := range []struct {
		name   string
		change bool
	}{{"same", false}, {"changed", true}} {
		info, err := Create(repo, DefaultPath(repo, c.name), c.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CopyIncluded(repo, info.Path); err != nil {
			t.Fatal(err)
		}
		if c.change {
			os.WriteFile(filepath.Join(info.Path, ".env"), []byte("A=2\n"), 0o600)
		}
		err = Remove(info, false)
		var dirty *DirtyError
		if c.change != errors.As(err, &dirty) {
			t.Errorf("%s: Remove = %v", c.name, err)
		}
	}
}
