package ralph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Symbolic links planted at an iteration's output and exit files are
// never followed (issue 16, item 2): the loop makes both files afresh, so
// the files the links pointed to are neither truncated nor appended to.
func TestLoopOutputFilesNeverFollowSymlinks(t *testing.T) {
	l := newLoop(t, "out")
	l.WriteFile("PROMPT.md", "work")
	args := append([]string{"ralph", "spawn", "--name", "out", "--prompt-file", "PROMPT.md", "--no-worktree", "--no-run",
		"--max-iterations", "1", "--restart-delay", "100ms", "--"}, l.agent("--script", "print hello-output;exit 0")...)
	l.MustRun(args...)
	out := filepath.Join(l.Home, "ralph", "out", "output")
	os.MkdirAll(out, 0o700)
	victims := map[string]string{}
	for _, name := range []string{"iteration-0001.log", "iteration-0001.exit"} {
		victim := filepath.Join(l.Dir, "..", "victim-"+name)
		os.WriteFile(victim, []byte("precious\n"), 0o600)
		if err := os.Symlink(victim, filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
		victims[name] = victim
	}
	l.MustRun("ralph", "run", "out")
	l.waitEnded(60 * time.Second)
	for name, victim := range victims {
		if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
			t.Errorf("%s's link target now holds %q", name, data)
		}
		if fi, err := os.Lstat(filepath.Join(out, name)); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is not a regular 0600 file: %v %v", name, fi, err)
		}
	}
	if log := l.RalphLog("out"); !strings.Contains(log, "[END] iteration 1 exit=0") {
		t.Errorf("log:\n%s", log)
	}
	if r := l.MustRun("ralph", "logs", "out", "--iteration", "1"); !strings.Contains(r.Stdout, "hello-output") {
		t.Errorf("iteration output: %q", r.Stdout)
	}
}

// A loop's output directory that is a symbolic link is refused: nothing
// is written where it points.
func TestLoopOutputDirSymlinkIsRefused(t *testing.T) {
	l := newLoop(t, "outdir")
	l.WriteFile("PROMPT.md", "work")
	args := append([]string{"ralph", "spawn", "--name", "outdir", "--prompt-file", "PROMPT.md", "--no-worktree", "--no-run",
		"--max-iterations", "1", "--"}, l.agent("--script", "print hello-output;exit 0")...)
	l.MustRun(args...)
	elsewhere := t.TempDir()
	out := filepath.Join(l.Home, "ralph", "outdir", "output")
	os.RemoveAll(out)
	if err := os.Symlink(elsewhere, out); err != nil {
		t.Fatal(err)
	}
	l.Run("ralph", "run", "outdir")
	l.waitEnded(60 * time.Second)
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("files were made through the link: %v", entries)
	}
	if log := l.RalphLog("outdir"); !strings.Contains(log, out+" is a symbolic link") {
		t.Errorf("log does not say why:\n%s", log)
	}
}

// config.json's on_exit hook is not run from a file another user owns
// (issue 16, item 2: it ran as the victim, root). A loop spawn refuses
// such a file before making anything (it is checked like a bad one); one
// that became another user's after the spawn is skipped at the loop's
// end: the loop's own --on-exit still runs, and the monitor log says why
// the global one did not.
func TestForeignConfigHookIsNotRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown config.json to another user (uid 65534)")
	}
	l := newLoop(t, "fh")
	l.WriteFile("PROMPT.md", "work")
	pwned := filepath.Join(l.Dir, "..", "pwned")
	own := filepath.Join(l.Dir, "..", "own")
	os.MkdirAll(l.Home, 0o700)
	config := filepath.Join(l.Home, "config.json")
	if err := os.WriteFile(config, []byte(`{"on_exit": "touch `+pwned+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(config, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	foreign := "config file " + config + " is owned by another user (uid 65534)"
	args := []string{"spawn", "--name", "fh", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "1", "--on-exit", "touch " + own, "--"}
	r := l.Run(append(args, l.agent("--script", "exit 0")...)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, foreign) || l.Run("ls", "--format", "names").Stdout != "" {
		t.Fatalf("spawn with another user's config.json: %s", r)
	}
	// Made another user's after the spawn (the monitor reads it at the end).
	if err := os.Chown(config, 0, 0); err != nil {
		t.Fatal(err)
	}
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "1", "--on-exit", "touch " + own, "--no-run"}, l.agent("--script", "exit 0")...)
	if err := os.Chown(config, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// In the foreground the loop's own lines go to the command's output.
	run := l.Run("ralph", "run", "fh")
	if out := run.Stdout + run.Stderr; !strings.Contains(out, "global on-exit hook not run: "+foreign) {
		t.Errorf("the loop did not say the hook was not run: %s", run)
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("the loop's own --on-exit did not run: %v", err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("another user's on_exit hook ran")
	}
}
