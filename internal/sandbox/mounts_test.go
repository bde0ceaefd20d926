package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mount is one -v of the docker run command sandbox.sh builds.
type mount struct {
	src, dst string
	ro       bool
}

// kitRun runs the kit's sandbox.sh in dir with HOME home and a fake docker
// on PATH that records the argv of docker run, and returns the mounts of
// that command (by container path) and its arguments.
func kitRun(t *testing.T, dir, home string) (map[string]mount, []string) {
	t.Helper()
	kit := t.TempDir()
	mustWrite(t, kit, Options{})
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	fake := "#!/bin/sh\ncase \"$1\" in\nimage|network) exit 0 ;;\nrun) shift; for a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$DOCKER_ARGV\"; exit 0 ;;\nesac\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(kit, "sandbox.sh"), "--agent-arg")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+home, "DOCKER_ARGV="+argv,
		"GH_TOKEN=x", "ANTHROPIC_API_KEY=x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sandbox.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	mounts := map[string]mount{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-v" {
			continue
		}
		parts := strings.Split(args[i+1], ":")
		m := mount{src: parts[0], dst: parts[1], ro: len(parts) > 2 && parts[2] == "ro"}
		if _, dup := mounts[m.dst]; dup {
			t.Errorf("%s mounted twice", m.dst)
		}
		mounts[m.dst] = m
	}
	return mounts, args
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// sandboxRepo makes a repository with one commit, a linked worktree w of
// it (as swarm's --worktree makes), and a HOME with Claude Code's settings
// and the histories of two other projects.
func sandboxRepo(t *testing.T) (repo, wt, home string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo = filepath.Join(base, "proj.x")
	os.Mkdir(repo, 0o755)
	gitIn(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "README"), []byte("hi\n"), 0o644)
	gitIn(t, repo, "add", "README")
	gitIn(t, repo, "commit", "-q", "-m", "init")
	wt = filepath.Join(base, "proj.x-worktrees", "w")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "w", wt)
	home = filepath.Join(base, "home")
	for _, p := range []string{"other-project", "-tmp-secret"} {
		os.MkdirAll(filepath.Join(home, ".claude", "projects", p), 0o700)
	}
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{}"), 0o644)
	return repo, wt, home
}

// slug is Claude Code's name for a project's history directory.
func slug(dir string) string { return regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(dir, "-") }

func checkMounts(t *testing.T, got map[string]mount, want []mount) {
	t.Helper()
	for _, w := range want {
		if g, ok := got[w.dst]; !ok || g != w {
			t.Errorf("mount of %s: got %+v (present %v), want %+v", w.dst, g, ok, w)
		}
	}
	for dst, g := range got {
		if !slices.ContainsFunc(want, func(w mount) bool { return w.dst == dst }) {
			t.Errorf("unexpected mount %+v", g)
		}
	}
}

// TestSandboxMountsOfAWorktree (issue 16, item 3): in a linked worktree
// the agent may write its worktree, the objects, refs and reflogs a commit
// writes, and its worktree's own git directory; the repository's git
// directory (config, hooks, info, other worktrees), the pointers to it
// (commondir, gitdir, the worktree's .git file) and other projects'
// Claude histories are read-only or absent.
func TestSandboxMountsOfAWorktree(t *testing.T) {
	repo, wt, home := sandboxRepo(t)
	common := filepath.Join(repo, ".git")
	admin := filepath.Join(common, "worktrees", "w")
	history := filepath.Join(home, ".claude", "projects", slug(wt))
	gitIn(t, repo, "config", "user.name", "A U Thor")
	mounts, args := kitRun(t, wt, home)
	checkMounts(t, mounts, []mount{
		{wt, wt, false},
		{common, common, true},
		{common + "/objects", common + "/objects", false},
		{common + "/refs", common + "/refs", false},
		{common + "/refs/replace", common + "/refs/replace", true},
		{common + "/refs/notes", common + "/refs/notes", true},
		{common + "/logs", common + "/logs", false},
		{admin, admin, false},
		{admin + "/commondir", admin + "/commondir", true},
		{admin + "/gitdir", admin + "/gitdir", true},
		{admin + "/config.worktree", admin + "/config.worktree", true},
		{wt + "/.git", wt + "/.git", true},
		{filepath.Join(home, ".claude", "settings.json"), "/home/agent/.claude/settings.json", true},
		{history, "/home/agent/.claude/projects/" + slug(wt), false},
	})
	if fi, err := os.Stat(history); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("history directory %s: %v %v", history, fi, err)
	}
	// The repository's config is read-only in the container: the
	// identity commits need comes from the host.
	for _, want := range []string{"GIT_AUTHOR_NAME=A U Thor", "GIT_COMMITTER_NAME=A U Thor"} {
		if !slices.Contains(args, want) {
			t.Errorf("docker run has no -e %s: %q", want, args)
		}
	}
}

// TestSandboxMountsOfAMainCheckout: in the main checkout .git stays
// writable (HEAD and the index are at its top) but is its own mount, and
// its config, hooks, info, worktrees and modules are read-only.
func TestSandboxMountsOfAMainCheckout(t *testing.T) {
	repo, _, home := sandboxRepo(t)
	g := filepath.Join(repo, ".git")
	want := []mount{
		{repo, repo, false},
		{g, g, false},
		{g + "/config", g + "/config", true},
		{g + "/config.worktree", g + "/config.worktree", true},
		{filepath.Join(home, ".claude", "settings.json"), "/home/agent/.claude/settings.json", true},
		{filepath.Join(home, ".claude", "projects", slug(repo)), "/home/agent/.claude/projects/" + slug(repo), false},
	}
	for _, d := range []string{"hooks", "info", "worktrees", "modules", "refs/replace", "refs/notes"} {
		want = append(want, mount{g + "/" + d, g + "/" + d, true})
	}
	mounts, _ := kitRun(t, repo, home)
	checkMounts(t, mounts, want)

	// A checkout whose .git is a file naming its git directory elsewhere
	// (git init --separate-git-dir): that file is read-only too.
	base := filepath.Dir(repo)
	sep, sepGit := filepath.Join(base, "sep"), filepath.Join(base, "sep.git")
	os.Mkdir(sep, 0o755)
	gitIn(t, sep, "init", "-q", "--separate-git-dir", sepGit)
	mounts, _ = kitRun(t, sep, home)
	want = []mount{
		{sep, sep, false},
		{sepGit, sepGit, false},
		{sepGit + "/config", sepGit + "/config", true},
		{sepGit + "/config.worktree", sepGit + "/config.worktree", true},
		{sep + "/.git", sep + "/.git", true},
		{filepath.Join(home, ".claude", "settings.json"), "/home/agent/.claude/settings.json", true},
		{filepath.Join(home, ".claude", "projects", slug(sep)), "/home/agent/.claude/projects/" + slug(sep), false},
	}
	for _, d := range []string{"hooks", "info", "worktrees", "modules", "refs/replace", "refs/notes"} {
		want = append(want, mount{sepGit + "/" + d, sepGit + "/" + d, true})
	}
	checkMounts(t, mounts, want)
}

// TestSandboxMountsHoldInANamespace replays sandbox.sh's mounts with bind
// mounts in a private mount namespace (as docker makes them: parents
// first) and runs in it what an agent would: commits work, in the worktree
// and in the main checkout; writing the repository's config or hooks,
// another worktree's metadata, or a pointer to another git directory
// fails. It needs unshare and the right to mount (root, or user
// namespaces).
func TestSandboxMountsHoldInANamespace(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not on PATH")
	}
	ns := []string{"unshare", "-m", "--propagation", "private"}
	if os.Geteuid() != 0 {
		ns = []string{"unshare", "-r", "-m", "--propagation", "private"}
	}
	if out, err := exec.Command(ns[0], append(ns[1:], "true")...).CombinedOutput(); err != nil {
		t.Skipf("cannot make a mount namespace here: %v %s", err, out)
	}
	repo, wt, home := sandboxRepo(t)
	g := filepath.Join(repo, ".git")
	admin := filepath.Join(g, "worktrees", "w")
	git := "git -c user.email=t@t -c user.name=t -c core.hooksPath=/dev/null"
	cases := []struct {
		dir    string
		checks [][2]string // what, shell command; a leading ! means it must fail
	}{
		{wt, [][2]string{
			{"commit in the worktree", "echo x > new && " + git + " add new && " + git + " commit -q -m work"},
			{"make a branch", git + " branch other"},
			{"!set core.fsmonitor", git + " config core.fsmonitor /evil"},
			{"!add a hook", "touch " + g + "/hooks/post-checkout"},
			{"!write info/attributes", "echo '* filter=x' > " + g + "/info/attributes"},
			{"!rewrite commondir", "echo /evil > " + admin + "/commondir"},
			{"!write config.worktree", "echo '[core] fsmonitor = /evil' > " + admin + "/config.worktree"},
			{"!rewrite the .git file of the worktree", "echo 'gitdir: /evil' > .git"},
			{"!move the .git file of the worktree", "mv .git .git.old"},
			{"!write packed-refs", "echo x >> " + g + "/packed-refs"},
			{"!plant a replace ref", git + " replace HEAD~0 HEAD"},
			{"!write refs/replace", "echo x > " + g + "/refs/replace/x"},
			{"!add a note", git + " notes add -m x HEAD"},
		}},
		{repo, [][2]string{
			{"commit in the main checkout", "echo y > new2 && " + git + " add new2 && " + git + " commit -q -m main-work"},
			{"!set core.fsmonitor", git + " config core.fsmonitor /evil"},
			{"!add a hook", "touch .git/hooks/post-checkout"},
			{"!rewrite commondir of a worktree", "echo /evil > " + admin + "/commondir"},
			{"!add metadata of a worktree", "mkdir .git/worktrees/x"},
			{"!replace .git", "mv .git .git.old"},
			{"!write refs/replace", "echo x > .git/refs/replace/x"},
			{"!move refs/replace", "mv .git/refs/replace .git/refs/replace.old"},
		}},
	}
	for _, c := range cases {
		mounts, _ := kitRun(t, c.dir, home)
		var list []mount
		for _, m := range mounts {
			if m.src == m.dst { // the container-only paths (Claude's) are left out
				list = append(list, m)
			}
		}
		// docker mounts parents before children.
		slices.SortStableFunc(list, func(a, b mount) int {
			return strings.Count(a.dst, "/") - strings.Count(b.dst, "/")
		})
		var sh strings.Builder
		for _, m := range list {
			mode := "rw"
			if m.ro {
				mode = "ro"
			}
			// A bind of a path under a read-only mount starts read-only:
			// each mount gets its mode explicitly.
			fmt.Fprintf(&sh, "mount --bind '%s' '%s' && mount -o remount,bind,%s '%s' || exit 99\n", m.src, m.dst, mode, m.dst)
		}
		fmt.Fprintf(&sh, "cd '%s' || exit 99\n", c.dir)
		for _, ch := range c.checks {
			fmt.Fprintf(&sh, "if ( %s ) >/dev/null 2>&1; then echo 'ok %s'; else echo 'failed %s'; fi\n", ch[1], ch[0], ch[0])
		}
		out, err := exec.Command(ns[0], append(ns[1:], "sh", "-c", sh.String())...).CombinedOutput()
		if err != nil {
			t.Fatalf("in %s: %v\n%s", c.dir, err, out)
		}
		for _, ch := range c.checks {
			what, mustFail := strings.CutPrefix(ch[0], "!")
			want := "ok " + ch[0]
			if mustFail {
				want = "failed " + ch[0]
			}
			if !strings.Contains(string(out), want+"\n") {
				t.Errorf("in %s: %s: want %q, got:\n%s", c.dir, what, want, out)
			}
		}
	}
	// What the agent committed is there, on the host.
	if got := gitIn(t, wt, "log", "-1", "--format=%s"); got != "work" {
		t.Errorf("worktree HEAD after the sandboxed commit: %q", got)
	}
	if got := gitIn(t, repo, "log", "-1", "--format=%s"); got != "main-work" {
		t.Errorf("main HEAD after the sandboxed commit: %q", got)
	}
}
