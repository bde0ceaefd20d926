package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// Worktree set-up (--worktree-setup, .worktreeinclude): what a new
// worktree gets before the agent starts in it.

// Metadata keys of a worktree worker's base: the ref its branch was made
// from as given (or the branch checked out in the base repository when
// none was), and that commit. swarm merge merges into the base branch by
// default, and swarm diff compares against it.
const (
	WorktreeBaseKey       = "worktree_base"
	WorktreeBaseCommitKey = "worktree_base_commit"
)

// Bounds of a set-up command's output: what its error shows (the last
// lines), and how much of its end is kept to find them.
const (
	setupTailLines = 15
	setupKeep      = 16 << 10
	// setupWaitDelay: a set-up command that leaves a background process
	// holding its output is not waited for longer than this once it has
	// exited itself.
	setupWaitDelay = 5 * time.Second
)

// prepareWorktree readies a worktree the spawn made or reuses: the base
// repository's included files copied in (a new worktree only), then the
// set-up command run. It returns notes for the user; an error fails the
// spawn.
func (m *Manager) prepareWorktree(p *spawnPlan, info worktree.Info, made bool) ([]string, error) {
	var notes, copied []string
	if made {
		inc, err := worktree.CopyIncluded(info.BaseRepo, info.Path)
		if err != nil {
			return nil, fmt.Errorf("failed to copy the files %s names: %w", worktree.IncludeFile, err)
		}
		copied = inc.Copied
		if len(inc.Copied) > 0 {
			notes = append(notes, fmt.Sprintf("copied %d file(s) named by %s into the worktree", len(inc.Copied), worktree.IncludeFile))
		}
		for _, s := range inc.Skipped {
			m.warn(fmt.Sprintf("%s: not copied into the worktree: %s", worktree.IncludeFile, termtext.Line(s)))
		}
	}
	if p.o.WorktreeSetup != "" {
		if err := runSetup(p.o.WorktreeSetup, info.Path, p.env); err != nil {
			if made {
				// The rollback removes this worktree: the hint makes one
				// of the same commit to run the command in by hand.
				err = hint.Wrap(err, "%s", setupRetry(p.o.WorktreeSetup, info, copied, p.env))
			}
			return nil, err
		}
	}
	return notes, nil
}

// setupRetry is the hint of a failed set-up command whose worktree the
// spawn's rollback removes: commands that work as printed, which make a
// worktree of the same commit in a new temporary directory and run the
// command there with the worker's --env, after copying in the files
// .worktreeinclude named (copied, with tar: links as links, modes kept).
func setupRetry(command string, info worktree.Info, copied []string, env map[string]string) string {
	commit := worktree.Head(info.Path)
	if commit == "" {
		commit = info.BaseCommit
	}
	if commit == "" {
		commit = "HEAD"
	}
	run := setupCommandLine(command, env)
	repo := tmux.ShellQuote(info.BaseRepo)
	copyIn := ""
	if len(copied) > 0 {
		names := make([]string, len(copied))
		for i, c := range copied {
			names[i] = tmux.ShellQuote("./" + c) // never taken for an option
		}
		copyIn = fmt.Sprintf(` && (cd %s && tar cf - %s) | tar xpf - -C "$d/wt"`, repo, strings.Join(names, " "))
	}
	return fmt.Sprintf(`the worktree was removed; run it by hand in one of the same commit to see why: d=$(mktemp -d) && git -C %s worktree add -q --detach "$d/wt" %s%s && cd "$d/wt" && %s`,
		repo, commit, copyIn, run)
}

// setupCommandLine is the shell command line that runs the set-up
// command by hand as the spawn runs it (runSetup): with the worker's
// --env, in a shell of its own. Typed into the user's shell as it is, an
// "exit 3" in it would end that shell, and what follows a ";" would run
// even when a step before it failed.
func setupCommandLine(command string, env map[string]string) string {
	run := "sh -c " + tmux.ShellQuote(command)
	if len(env) == 0 {
		return run
	}
	var words []string
	for _, kv := range EnvList(env) {
		words = append(words, tmux.ShellQuote(kv))
	}
	return "env " + strings.Join(words, " ") + " " + run
}

// runSetup runs the set-up command with sh -c in dir, with the worker's
// environment, and returns an error holding the last lines of its output
// when it fails.
func runSetup(command, dir string, env map[string]string) error {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), EnvList(env)...)
	out := &tailBuffer{max: setupKeep}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = setupWaitDelay
	err := cmd.Run()
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	how := err.Error()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		how = fmt.Sprintf("exit %d", ee.ExitCode())
	}
	msg := fmt.Sprintf("worktree setup command failed (%s): %s", how, termtext.Line(command))
	if tail := out.lastLines(setupTailLines); tail != "" {
		msg += "\nits last lines:\n" + tail
	}
	return hint.Errorf(fmt.Sprintf("run it by hand to see why: cd %s && %s", tmux.ShellQuote(dir), setupCommandLine(command, env)), "%s", msg)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// lastLines is the last n non-blank lines, each printable (termtext.Line)
// and indented.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := trimBlankTail(strings.Split(string(t.b), "\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + termtext.Line(l) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
