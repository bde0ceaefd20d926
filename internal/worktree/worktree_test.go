package worktree

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

func newRepo(t *testing.T) string {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "proj")
	os.Mkdir(repo, 0o755)
	run(t, repo, "git", "init", "-q", "-b", "main")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
	return repo
}

func TestCreateDirtyRemove(t *testing.T) {
	repo := newRepo(t)
	root, warns, err := RepoRoot(filepath.Join(repo))
	if err != nil || root != repo || len(warns) != 0 {
		t.Fatalf("RepoRoot = %q %v %v", root, warns, err)
	}
	path := DefaultPath(root, "w1")
	if want := filepath.Join(filepath.Dir(repo), "proj-worktrees", "w1"); path != want {
		t.Fatalf("DefaultPath = %q, want %q", path, want)
	}
	info, err := Create(root, path, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run(t, repo, "git", "branch"), "w1") {
		t.Error("branch not created")
	}
	// Reuse of the same worktree is allowed; another branch is not.
	if _, err := Create(root, path, "w1"); err != nil {
		t.Errorf("reuse: %v", err)
	}
	if _, err := Create(root, path, "other"); err == nil {
		t.Error("created over a worktree of another branch")
	}
	os.WriteFile(filepath.Join(path, "work.txt"), []byte("x"), 0o644)
	if n, _ := Changes(path); n != 1 {
		t.Errorf("Changes = %d", n)
	}
	// Removal from an unrelated directory, dirty: refused.
	old, _ := os.Getwd()
	os.Chdir(os.TempDir())
	defer os.Chdir(old)
	var de *DirtyError
	if err := Remove(info, false); !errors.As(err, &de) || de.Changes != 1 {
		t.Fatalf("Remove dirty = %v", err)
	}
	if _, err := os.Stat(filepath.Join(path, "work.txt")); err != nil {
		t.Fatal("dirty work deleted")
	}
	if err := Remove(info, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("worktree still there")
	}
	if !strings.Contains(run(t, repo, "git", "branch"), "w1") {
		t.Error("branch deleted")
	}
	// An existing branch is checked out rather than recreated.
	if _, err := Create(root, path, "w1"); err != nil {
		t.Fatalf("recreate on existing branch: %v", err)
	}
}

func TestNotRepoAndBareRepair(t *testing.T) {
	if _, _, err := RepoRoot(t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("RepoRoot outside git = %v", err)
	}
	repo := newRepo(t)
	run(t, repo, "git", "config", "core.bare", "true")
	root, warns, err := RepoRoot(repo)
	if err != nil || root != repo || len(warns) != 1 || !strings.Contains(warns[0], "core.bare") {
		t.Fatalf("repair: %q %v %v", root, warns, err)
	}
	if got := strings.TrimSpace(run(t, repo, "git", "config", "core.bare")); got != "false" {
		t.Errorf("core.bare = %s", got)
	}
}

func TestHeadAndTreeState(t *testing.T) {
	repo := newRepo(t)
	h, s := Head(repo), TreeState(repo)
	if h == "" {
		t.Fatal("no head")
	}
	if TreeState(repo) != s {
		t.Error("tree state not stable")
	}
	os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644)
	if TreeState(repo) == s {
		t.Error("untracked file not seen")
	}
	if Head(t.TempDir()) != "" {
		t.Error("head outside git")
	}
}

// A worktree whose only extra file is git-ignored (a .env with secrets)
// is not removed without force: git worktree remove would delete it.
func TestRemoveKeepsIgnoredFiles(t *testing.T) {
	repo := newRepo(t)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("secret.env\n"), 0o644)
	run(t, repo, "git", "add", ".gitignore")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "ignore")
	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(info.Path, "secret.env")
	os.WriteFile(secret, []byte("TOKEN=x\n"), 0o600)
	err = Remove(info, false)
	var dirty *DirtyError
	if !errors.As(err, &dirty) || dirty.Ignored != 1 || dirty.FirstIgnored != "secret.env" ||
		err.Error() != "worktree has 1 git-ignored file(s) that removing it would delete (e.g. secret.env)" {
		t.Fatalf("err = %v", err)
	}
	if dirty.Changes != 0 {
		t.Errorf("an ignored file counted as a change: %+v", dirty)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("secret.env lost: %v", err)
	}
	// With a change besides, both are counted and the change is named.
	os.WriteFile(filepath.Join(info.Path, "work.txt"), []byte("x"), 0o644)
	err = Remove(info, false)
	if !errors.As(err, &dirty) || dirty.Changes != 1 || dirty.Ignored != 1 || dirty.FirstIgnored != "secret.env" ||
		err.Error() != "worktree has 1 uncommitted change(s)" {
		t.Fatalf("err = %v (%+v)", err, dirty)
	}
	if err := Remove(info, true); err != nil {
		t.Fatalf("forced removal: %v", err)
	}
}

// Spawns with --worktree run at once: git fails a worktree command that
// runs while another is half done ("failed to read .git/worktrees/X/
// commondir"), so swarm's worktree changes in one repository take turns.
func TestConcurrentCreatesAndRemoves(t *testing.T) {
	repo := newRepo(t)
	const n = 12
	infos := make([]Info, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("w%02d", i)
			infos[i], errs[i] = Create(repo, DefaultPath(repo, name), name)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent creates: %v", err)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Remove(infos[i], false)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent removes: %v", err)
	}
	if out := run(t, repo, "git", "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", out)
	}
}

// Undo deletes the branch Create made only while it points where Create
// made it: commits made on it since are work, and keep it (issue 16,
// item 15: the rollback removes a branch it created, and nothing else).
func TestUndoDeletesOnlyItsUnmovedBranch(t *testing.T) {
	repo := newRepo(t)
	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil || !info.NewBranch || info.BranchCommit == "" {
		t.Fatalf("Create = %+v, %v", info, err)
	}
	run(t, info.Path, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "work")
	if err := Undo(info); err == nil || !strings.Contains(err.Error(), "branch w1 has commits made since swarm created it") {
		t.Errorf("Undo of a moved branch = %v", err)
	}
	if !branchExists(repo, "w1") {
		t.Error("Undo deleted a branch with commits of its own")
	}
	// A branch Create was about to make and git never made: no error.
	info2 := Info{Path: DefaultPath(repo, "w2"), Branch: "w2", BaseRepo: repo, NewBranch: true, BranchCommit: info.BranchCommit}
	if err := Undo(info2); err != nil {
		t.Errorf("Undo of a branch never made = %v", err)
	}
	info3, err := Create(repo, DefaultPath(repo, "w3"), "w3")
	if err != nil {
		t.Fatal(err)
	}
	if err := Undo(info3); err != nil || branchExists(repo, "w3") {
		t.Errorf("Undo of an unmoved new branch = %v, branch left: %v", err, branchExists(repo, "w3"))
	}
}

// Commits on a detached HEAD that no branch holds, and a rebase under way,
// are work git status does not show: they block a removal like
// uncommitted changes (issue 16, item 7).
func TestRemoveKeepsCommitsOnNoBranch(t *testing.T) {
	commit := func(dir, msg string) {
		run(t, dir, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", msg)
	}
	repo := newRepo(t)

	// Detached at a commit a branch holds: nothing to lose.
	info, err := Create(repo, DefaultPath(repo, "w0"), "w0")
	if err != nil {
		t.Fatal(err)
	}
	run(t, info.Path, "git", "checkout", "-q", "--detach")
	if err := Remove(info, false); err != nil {
		t.Errorf("Remove of a detached worktree with nothing of its own = %v", err)
	}

	// Two commits on a detached HEAD.
	info, err = Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	run(t, info.Path, "git", "checkout", "-q", "--detach")
	commit(info.Path, "one")
	commit(info.Path, "two")
	head := strings.TrimSpace(run(t, info.Path, "git", "rev-parse", "--short", "HEAD"))
	var dirty *DirtyError
	err = Remove(info, false)
	if !errors.As(err, &dirty) || dirty.Unsaved != 2 || !dirty.Detached || dirty.Holds() != "commits on no branch" ||
		err.Error() != "worktree has 2 commit(s) on no branch (HEAD detached at "+head+")" {
		t.Fatalf("Remove with commits on no branch = %v (%+v)", err, dirty)
	}
	// With a change besides, both are named.
	os.WriteFile(filepath.Join(info.Path, "work.txt"), []byte("x"), 0o644)
	if err := Remove(info, false); err == nil || err.Error() != "worktree has 1 uncommitted change(s), 2 commit(s) on no branch (HEAD detached at "+head+")" {
		t.Errorf("Remove with both = %v", err)
	}
	os.Remove(filepath.Join(info.Path, "work.txt"))
	// A tag saves them.
	run(t, info.Path, "git", "tag", "saved")
	if err := Remove(info, false); err != nil {
		t.Errorf("Remove once a tag holds the commits = %v", err)
	}

	// A rebase stopped at an "edit": HEAD detached at a commit the
	// branch holds, nothing for git status, the rebase's state in the
	// worktree's git directory.
	info, err = Create(repo, DefaultPath(repo, "w2"), "w2")
	if err != nil {
		t.Fatal(err)
	}
	commit(info.Path, "three")
	cmd := exec.Command("git", "-c", "user.email=t@t", "-c", "user.name=t", "rebase", "-q", "-i", "HEAD~1")
	cmd.Dir = info.Path
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1s/^pick/edit/")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rebase: %v\n%s", err, out)
	}
	err = Remove(info, false)
	if !errors.As(err, &dirty) || !dirty.Rebase || dirty.Unsaved != 0 || err.Error() != "worktree has a rebase in progress" {
		t.Fatalf("Remove during a rebase = %v (%+v)", err, dirty)
	}
	if err := Remove(info, true); err != nil {
		t.Errorf("forced removal: %v", err)
	}
}

// A repository without a commit has nothing to branch from: Create says
// so, and makes nothing.
func TestCreateInAnEmptyRepository(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "empty")
	os.Mkdir(repo, 0o755)
	run(t, repo, "git", "init", "-q", "-b", "main")
	_, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err == nil || !strings.Contains(err.Error(), "has no commit at HEAD to start branch w1 from") {
		t.Fatalf("Create in an empty repository = %v", err)
	}
	if _, err := os.Stat(DefaultPath(repo, "w1")); err == nil || branchExists(repo, "w1") {
		t.Error("Create made something")
	}
}

// A worktree directory another user made (<repo>-worktrees in a
// world-writable directory), or one group or others can write, is refused
// (issue 16, item 10): the worktrees in it could be swapped. Nothing is
// made in it. One swarm makes itself is 0755 whatever the umask.
func TestWorktreeParentOfAnotherUserIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, parent string)
		want  string
	}{
		{"another user's", func(t *testing.T, parent string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown the directory to another user (uid 65534)")
			}
			os.Mkdir(parent, 0o755)
			os.Chown(parent, 65534, 65534)
		}, "is owned by another user (uid 65534)"},
		{"world-writable", func(t *testing.T, parent string) {
			os.Mkdir(parent, 0o755)
			os.Chmod(parent, 0o777)
		}, "is writable by others (mode 0777)"},
		{"group-writable", func(t *testing.T, parent string) {
			os.Mkdir(parent, 0o755)
			os.Chmod(parent, 0o775)
		}, "is writable by others (mode 0775)"},
		{"another user's link", func(t *testing.T, parent string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to make a link of another user's (uid 65534)")
			}
			target := t.TempDir()
			os.Symlink(target, parent)
			os.Lchown(parent, 65534, 65534)
		}, "is owned by another user (uid 65534)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			parent := filepath.Join(filepath.Dir(repo), "proj-worktrees")
			tc.setup(t, parent)
			_, err := Create(repo, DefaultPath(repo, "w1"), "w1")
			if err == nil || err.Error() != "worktree directory "+parent+" "+tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("made %d entries in it", len(entries))
			}
			if strings.Contains(run(t, repo, "git", "branch"), "w1") {
				t.Errorf("the branch was made")
			}
		})
	}
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	repo := newRepo(t)
	path := DefaultPath(repo, "w1")
	if _, err := Create(repo, path, "w1"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("made the worktree directory with mode %v, %v", fi.Mode().Perm(), err)
	}
	if _, err := Create(repo, DefaultPath(repo, "w2"), "w2"); err != nil {
		t.Errorf("second worktree in it: %v", err)
	}
}
