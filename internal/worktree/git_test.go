package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hostileRepo makes a repository whose own configuration names programs
// at every place git looks for one: core.fsmonitor, hooks (in
// core.hooksPath and in .git/hooks), filter drivers (one named with "=",
// one marked required), diff.external and a textconv driver, with
// .gitattributes applying them to a tracked file. Each program appends its
// name to the returned marker file.
func hostileRepo(t *testing.T) (repo, marker string) {
	t.Helper()
	repo = newRepo(t)
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	payload := func(name string) string {
		p := filepath.Join(dir, name)
		// A filter must pass the content through; the others' output is
		// ignored.
		script := "#!/bin/sh\necho " + name + " >> " + marker + "\ncat\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := filepath.Join(dir, "hooks")
	os.Mkdir(hooks, 0o755)
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-commit", "post-index-change"} {
		os.Rename(payload("hook-"+h), filepath.Join(hooks, h))
	}
	cfg := [][2]string{
		{"core.fsmonitor", payload("fsmonitor")},
		{"core.hooksPath", hooks},
		{"filter.evil.clean", payload("clean")},
		{"filter.evil.smudge", payload("smudge")},
		{"filter.evil.required", "true"},
		{"filter.a=b.process", payload("process")},
		{"filter.a=b.smudge", payload("smudge2")},
		{"diff.external", payload("extdiff")},
		{"diff.evil.textconv", payload("textconv")},
		{"diff.evil.command", payload("diffcmd")},
	}
	// Committed before the configuration is set: only swarm's own
	// commands are under test.
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.txt filter=evil diff=evil\n*.dat filter=a=b\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "b.dat"), []byte("b\n"), 0o644)
	run(t, repo, "git", "add", ".")
	run(t, repo, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "hostile")
	for _, kv := range cfg {
		run(t, repo, "git", "config", kv[0], kv[1])
	}
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-commit", "post-index-change"} {
		data, _ := os.ReadFile(filepath.Join(hooks, h))
		os.WriteFile(filepath.Join(repo, ".git", "hooks", h), data, 0o755)
	}
	os.Remove(marker)
	return repo, marker
}

func ranPrograms(marker string) string {
	data, _ := os.ReadFile(marker)
	return strings.Join(strings.Fields(string(data)), " ")
}

// TestGitRunsNoRepositoryProgram (issue 16, item 3): every git command
// swarm runs (create a worktree, check it for changes, the loop's
// --require-change state, remove it, delete its branch) starts none of
// the programs the repository's own configuration names.
func TestGitRunsNoRepositoryProgram(t *testing.T) {
	repo, marker := hostileRepo(t)
	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(info.Path, "a.txt")); string(data) != "a\n" {
		t.Errorf("a.txt checked out as %q", data)
	}
	// Changed files make status and diff read them (clean filter,
	// textconv, external diff).
	os.WriteFile(filepath.Join(info.Path, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(info.Path, "b.dat"), []byte("changed\n"), 0o644)
	if Head(info.Path) == "" || TreeState(info.Path) == "" {
		t.Error("Head or TreeState failed")
	}
	if n, err := Changes(info.Path); n != 2 || err != nil {
		t.Errorf("Changes = %d, %v", n, err)
	}
	if err := Remove(info, false); err == nil {
		t.Error("a dirty worktree was removed")
	}
	if err := Remove(info, true); err != nil {
		t.Fatalf("remove: %v", err)
	}
	info2, err := Create(repo, DefaultPath(repo, "w2"), "w2")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := Undo(info2); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got := ranPrograms(marker); got != "" {
		t.Errorf("swarm's git commands ran the repository's programs: %s", got)
	}
}

// The user's own filter drivers (global configuration, as git-lfs
// installs itself) still apply; and with SWARM_GIT_TRUST_REPO=1 the
// repository's hooks run too.
func TestGitKeepsUserFiltersAndTrustOptIn(t *testing.T) {
	repo, marker := hostileRepo(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	smudge := filepath.Join(t.TempDir(), "upper")
	os.WriteFile(smudge, []byte("#!/bin/sh\ntr a-z A-Z\n"), 0o755)
	os.WriteFile(global, []byte("[filter \"upper\"]\n\tsmudge = "+smudge+"\n"), 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.up filter=upper\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "c.up"), []byte("lower\n"), 0o644)
	if _, err := git(repo, "add", "."); err != nil {
		t.Fatal(err)
	}
	if _, err := git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "upper"); err != nil {
		t.Fatal(err)
	}
	os.Remove(marker)

	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(info.Path, "c.up")); string(data) != "LOWER\n" {
		t.Errorf("the user's global smudge filter did not run: c.up = %q", data)
	}
	if got := ranPrograms(marker); got != "" {
		t.Errorf("ran the repository's programs: %s", got)
	}

	t.Setenv(TrustRepoEnv, "1")
	if _, err := Create(repo, DefaultPath(repo, "w2"), "w2"); err != nil {
		t.Fatal(err)
	}
	if got := ranPrograms(marker); !strings.Contains(got, "hook-post-checkout") {
		t.Errorf("with %s=1 the repository's post-checkout hook did not run (ran: %q)", TrustRepoEnv, got)
	}
}

// TestOnlyGitGoRunsGit keeps every git command swarm runs going through
// runGit (and so through safeArgs): no other non-test source starts git.
func TestOnlyGitGoRunsGit(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	starts := regexp.MustCompile(`exec\.Command(Context)?\(\s*(ctx,\s*)?"git"`)
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("internal", "worktree", "git.go") || strings.HasPrefix(rel, filepath.Join("internal", "testenv")+"/") {
			return nil
		}
		data, _ := os.ReadFile(path)
		if starts.Match(data) {
			t.Errorf("%s starts git itself: run it through internal/worktree (git.go)", rel)
		}
		return nil
	})
}

// nestedRepo makes, in the worktree at wt, what a sandboxed agent can: a
// repository of its own at sub whose configuration names a clean filter
// (which appends to the returned marker) that its .gitattributes applies,
// recorded in wt's index as a gitlink and committed there, with a
// .gitmodules asking git to look inside it (ignore = none). Its file is
// then changed, so a status that looked inside would run the filter.
func nestedRepo(t *testing.T, wt string) (marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	clean := filepath.Join(dir, "clean")
	os.WriteFile(clean, []byte("#!/bin/sh\necho nested-clean >> "+marker+"\ncat\n"), 0o755)
	sub := filepath.Join(wt, "sub")
	os.Mkdir(sub, 0o755)
	run(t, sub, "git", "init", "-q")
	os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "f"), []byte("x\n"), 0o644)
	run(t, sub, "git", "config", "filter.evil.clean", clean)
	run(t, sub, "git", "add", ".")
	run(t, sub, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "nested")
	os.WriteFile(filepath.Join(wt, ".gitmodules"), []byte("[submodule \"sub\"]\n\tpath = sub\n\tignore = none\n"), 0o644)
	run(t, wt, "git", "add", "sub", ".gitmodules")
	run(t, wt, "git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "gitlink")
	os.WriteFile(filepath.Join(sub, "f"), []byte("changed\n"), 0o644)
	os.Remove(marker)
	return marker
}

// TestNestedRepositoryRunsNoFilter (issue 27, item 20): a nested
// repository the agent recorded in its worktree's index, with a clean
// filter of its own, is never looked into by swarm's status and diff
// (which would run the filter as the user); and being there, populated,
// it keeps the worktree from removal as uncommitted work does.
func TestNestedRepositoryRunsNoFilter(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	marker := nestedRepo(t, info.Path)
	if TreeState(info.Path) == "" {
		t.Error("TreeState failed")
	}
	if n, err := Changes(info.Path); n != 0 || err != nil {
		t.Errorf("Changes = %d, %v; want 0 (the nested repository's content is not looked at)", n, err)
	}
	if _, err := Diff(repo, info.Path, "w1", "main", false); err != nil {
		t.Errorf("Diff: %v", err)
	}
	var dirty *DirtyError
	err = Remove(info, false)
	if !errors.As(err, &dirty) || dirty.Nested != 1 || dirty.FirstNested != "sub" || dirty.Holds() != "a nested git repository" ||
		err.Error() != "worktree has a nested git repository (sub) that removing it would delete" {
		t.Errorf("Remove = %v, want it kept for its nested repository", err)
	}
	if _, err := os.Stat(filepath.Join(info.Path, "sub", "f")); err != nil {
		t.Errorf("the nested repository is gone: %v", err)
	}
	if got := ranPrograms(marker); got != "" {
		t.Errorf("swarm's git commands ran the nested repository's filter: %s", got)
	}
	if err := Remove(info, true); err != nil {
		t.Errorf("forced remove: %v", err)
	}
	if got := ranPrograms(marker); got != "" {
		t.Errorf("the forced remove ran the nested repository's filter: %s", got)
	}
}

// TestReplaceRefsAreIgnored (issue 27, item 25): a replace ref planted
// for the base branch's tip (refs/replace/<tip>, which an agent can write:
// refs are shared by all worktrees) does not change what a new worktree
// checks out, what its branch starts at, or what swarm diffs.
func TestReplaceRefsAreIgnored(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tip := commitFile(t, repo, "a.txt", "real\n")
	run(t, repo, "git", "checkout", "-q", "-b", "evil")
	evil := commitFile(t, repo, "a.txt", "planted\n")
	run(t, repo, "git", "checkout", "-q", "main")
	run(t, repo, "git", "branch", "-D", "evil")
	run(t, repo, "git", "update-ref", "refs/replace/"+tip, evil)
	if got := strings.TrimSpace(run(t, repo, "git", "show", "main:a.txt")); got != "planted" {
		t.Fatalf("the replace ref is not in effect for plain git: main:a.txt = %q", got)
	}
	info, err := Create(repo, DefaultPath(repo, "w1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(info.Path, "a.txt")); string(data) != "real\n" {
		t.Errorf("the new worktree checked out the replacement: a.txt = %q", data)
	}
	if n, err := Changes(info.Path); n != 0 || err != nil {
		t.Errorf("Changes = %d, %v", n, err)
	}
	if d, err := Diff(repo, info.Path, "w1", "main", false); d != "" || err != nil {
		t.Errorf("Diff = %q, %v; want none", d, err)
	}
}
