package stresstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// gitShim writes an executable git, dir/git, for swarm's PATH: it runs
// the real git, except that at `git worktree add` it SIGKILLs swarm (its
// parent) at the point named by mode:
//   - "before": before git runs (git never runs);
//   - "during": once git has printed its first line ("Preparing
//     worktree", after which it makes the branch) and while it goes on:
//     its output pipe then breaks, as when swarm dies, and git dies
//     removing the worktree it had begun, but not the branch;
//   - "after": after git made the branch and the worktree.
//
// With race set, the first `rev-parse --git-common-dir` (the repository
// lock, taken after the spawn planned its worktree) first makes the branch
// race itself, as another user's command could between spawn's look and
// its git worktree add.
func gitShim(t *testing.T, dir, mode, repo, race string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not on PATH")
	}
	script := fmt.Sprintf(`#!/bin/sh
real='%s'
mode='%s'
race='%s'
if [ -n "$race" ] && [ ! -e '%s/raced' ]; then
	case " $* " in *" --git-common-dir "*)
		: > '%s/raced'
		"$real" -C '%s' branch "$race"
	esac
fi
case " $* " in *" worktree add "*)
	case $mode in
	before) kill -9 $PPID; exit 1 ;;
	during)
		swarm=$PPID
		"$real" "$@" 2>&1 | { IFS= read -r line; kill -9 "$swarm"; }
		exit 1 ;;
	after)
		"$real" "$@"; rc=$?; kill -9 $PPID; exit $rc ;;
	esac
esac
exec "$real" "$@"
`, real, mode, race, dir, dir, repo)
	testenv.WriteExecutable(t, filepath.Join(dir, "git"), script)
}

// TestCrashSpawnWorktreeLeavesNoBranch (issue 16, item 15): a spawn
// --worktree SIGKILLed before, while and after git makes its branch and
// worktree is rolled back by the next command with the branch it made,
// even while the git it started still runs; a branch that existed before
// (or was made by someone else after the spawn looked) is never deleted.
func TestCrashSpawnWorktreeLeavesNoBranch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mode   string
		branch string // --branch; "pre" exists before the spawn
		race   bool   // the branch appears between spawn's look and git
	}{
		{"before git, new branch", "before", "", false},
		{"while git runs, new branch", "during", "", false},
		{"after git, new branch", "after", "", false},
		{"while git runs, existing branch", "during", "pre", false},
		{"after git, existing branch", "after", "pre", false},
		{"after git, branch made by another meanwhile", "after", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.initRepo()
			w.e.Git(w.repo, "branch", "pre")
			prePos := strings.TrimSpace(w.e.Git(w.repo, "rev-parse", "pre"))
			branch := c.branch
			if branch == "" {
				branch = "c"
			}
			race := ""
			if c.race {
				race = branch
			}
			shimDir := t.TempDir()
			gitShim(t, shimDir, c.mode, w.repo, race)
			args := []string{"spawn", "--name", "c", "--worktree"}
			if c.branch != "" {
				args = append(args, "--branch", c.branch)
			}
			args = append(append(args, "--"), w.agent()...)
			cmd, _, _ := w.startWith([]string{"PATH=" + shimDir + ":" + os.Getenv("PATH")}, args...)
			if err := cmd.Wait(); err == nil {
				t.Fatal("the spawn was not killed: it exited 0")
			}

			// The next command rolls the spawn back (after the git it
			// left running has finished).
			r := w.run("ls")
			if msg := badOutput(r); msg != "" || r.code != 0 {
				t.Fatalf("ls after the crash: %s %s", msg, r)
			}
			for _, f := range w.check(checkOptions{allowTemps: true}) {
				t.Errorf("after the crash: %s", f)
			}
			branches := strings.Fields(w.e.Git(w.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/"))
			want := []string{"main", "pre"}
			if c.race {
				want = append(want, branch)
			}
			slices.Sort(branches)
			slices.Sort(want)
			if !slices.Equal(branches, want) {
				t.Errorf("branches after the rollback: %q, want %q", branches, want)
			}
			if got := strings.TrimSpace(w.e.Git(w.repo, "rev-parse", "pre")); got != prePos {
				t.Errorf("branch pre moved from %s to %s", prePos, got)
			}
			// Everything works afterwards.
			w.must(append([]string{"spawn", "--name", "c", "--worktree", "--"}, w.agent()...)...)
			w.must("kill", "--rm-worktree", "c")
		})
	}
}

// TestCrashSpawnWorktreeRandomLeavesNoBranch SIGKILLs spawn --worktree of
// fresh names at random points (what found item 15: 6 of 25 branches
// left): every spawn the next command rolls back leaves no branch, and
// the branches of spawns that finished stay.
func TestCrashSpawnWorktreeRandomLeavesNoBranch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real git and processes")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 15))
	w := newWorld(t)
	w.initRepo()
	// A few hundred files make git's checkout take a while, so kill
	// points land inside it.
	for i := range 300 {
		w.e.WriteFile(fmt.Sprintf("f/%03d.txt", i), fmt.Sprintf("%d\n", i))
	}
	w.e.Git(w.repo, "add", ".")
	w.e.Git(w.repo, "commit", "-q", "-m", "files")
	t0 := time.Now()
	w.must(append([]string{"spawn", "--name", "n", "--worktree", "--"}, w.agent()...)...)
	normal := time.Since(t0)
	w.must("kill", "--rm-worktree", "n")
	w.must("clean", "n")
	maxMs := max(10, int(normal.Milliseconds()*12/10))

	var ta tally
	finished := []string{"main", "n"}
	for i := range 12 {
		name := fmt.Sprintf("b%02d", i)
		delay := time.Duration(2+rng.IntN(maxMs-1)) * time.Millisecond
		label := fmt.Sprintf("seed %d, try %d: SIGKILL after %v", sd, i, delay)
		cmd, _, _ := w.startWith(nil, append([]string{"spawn", "--name", name, "--worktree", "--"}, w.agent()...)...)
		time.Sleep(delay) // the kill point itself, not a wait for a condition
		if _, err := killSpawn(cmd); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if r := w.run("ls"); badOutput(r) != "" || r.code != 0 {
			ta.note(label, "ls after the crash: "+r.String())
		}
		for _, f := range w.check(checkOptions{allowTemps: true}) {
			ta.note(label, "after the crash: "+f.msg)
		}
		// A spawn that finished before its kill point keeps its worker,
		// and its branch.
		if slices.ContainsFunc(w.e.Workers(), func(r map[string]any) bool { return r["name"] == name }) {
			finished = append(finished, name)
			w.must("kill", "--rm-worktree", name)
			w.must("clean", name)
		}
		branches := strings.Fields(w.e.Git(w.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/"))
		for _, b := range branches {
			if !slices.Contains(finished, b) {
				ta.note(label, "branch "+b+" left by a rolled-back spawn")
			}
		}
	}
	ta.report(t, fmt.Sprintf("seed %d", sd))
}
