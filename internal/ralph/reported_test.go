package ralph

// Errors that were once dropped without a word: each is now returned, or
// said as a warning (docs/development.md, "Errors").

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
	"github.com/swarmtools/swarm/internal/worker"
)

// undoSpawn is a loop spawn on a fake tmux server that fails once its
// worker is made: it asks for --require-change outside a repository, or
// (no MonitorCommand) cannot start its monitor.
func undoSpawn(t *testing.T, requireChange bool, before func(home string)) (*worker.Manager, error) {
	t.Helper()
	dir := t.TempDir() // no repository
	home := filepath.Join(dir, "home")
	prompt := filepath.Join(dir, "PROMPT.md")
	if err := os.WriteFile(prompt, []byte("work\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := tmuxtest.New()
	m := worker.New(home, nil)
	m.TmuxFor = func(tmux.Server) worker.Tmux { return srv }
	if before != nil {
		before(home)
	}
	_, err := Spawn(m, SpawnOptions{
		Worker: worker.SpawnOptions{Name: "w", Command: []string{"sh"}, Cwd: dir},
		Loop: Options{PromptFile: prompt, MaxIterations: 1, RequireChange: requireChange,
			InactivityTimeout: state.WholeSeconds{Duration: time.Minute}},
	})
	return m, err
}

// An undo with nothing left to fail says no more than why the spawn
// failed, and leaves nothing: no record, no loop.
func TestSpawnUndoneSaysOnlyWhyItFailed(t *testing.T) {
	t.Parallel()
	for _, requireChange := range []bool{true, false} {
		m, err := undoSpawn(t, requireChange, nil)
		want := "cannot start the ralph monitor: no program to run" // no MonitorCommand
		if requireChange {
			want = "--require-change needs a git repository"
		}
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("require-change %v: spawn = %v, want only %q", requireChange, err, want)
		}
		if reg, lerr := m.Store.Load(); lerr != nil || len(reg.Workers) != 0 {
			t.Errorf("require-change %v: records left: %+v %v", requireChange, reg, lerr)
		}
		if m.Store.Ralph("w").Exists() {
			t.Errorf("require-change %v: loop state left", requireChange)
		}
	}
}

// An undo that cannot do everything says so after the spawn's error:
// here the DONE line of the killed loop cannot be written (a directory
// where iterations.log goes).
func TestSpawnReportsAnUndoThatFailsAfterTheMonitor(t *testing.T) {
	t.Parallel()
	_, err := undoSpawn(t, false, func(home string) {
		if err := os.MkdirAll(filepath.Join(home, "ralph", "w", "iterations.log", "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	})
	if err == nil {
		t.Fatal("spawn succeeded")
	}
	first, rest, _ := strings.Cut(err.Error(), "\n")
	if !strings.Contains(first, "cannot start the ralph monitor: no program to run") {
		t.Errorf("first line %q: the spawn's error comes first", first)
	}
	if !strings.HasPrefix(rest, "and undoing the spawn failed: ") || !strings.Contains(rest, "iterations.log") {
		t.Errorf("the failed undo is not reported: %q", err)
	}
}

// failingWriter is a reader that went away (a closed pipe).
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// ralph logs (the events, the last n of them) ends with the write's error
// when no one reads.
func TestEventsReportAFailedWrite(t *testing.T) {
	t.Parallel()
	rs := state.NewStore(filepath.Join(t.TempDir(), "home"), nil).Ralph("w")
	if err := rs.Log(EventStart, "iteration 1/3"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 5} {
		if err := Events(context.Background(), rs, n, false, failingWriter{}); err == nil || err.Error() != "broken pipe" {
			t.Errorf("Events(n=%d) to a closed pipe = %v", n, err)
		}
	}
}

// A kill that cannot mark the loop killed says so (its monitor may start
// another iteration), and stops the worker all the same.
func TestBeforeKillWarnsWhenItCannotMarkTheLoop(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	var warned []string
	m := worker.New(home, func(msg string) { warned = append(warned, msg) })
	// A state file that cannot be read or written: a directory.
	if err := os.MkdirAll(filepath.Join(m.Store.Ralph("w").StatePath(), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := NewHooks(m).BeforeKill(&state.Worker{Name: "w"}); err != nil {
		t.Fatalf("BeforeKill = %v", err)
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "cannot mark the ralph loop of 'w' killed (its monitor may start another iteration): ") {
		t.Fatalf("warnings %q", warned)
	}
}

// A prompt file that cannot be read says why, after swarm.py's text, and
// keeps the cause: here a path through a regular file (ENOTDIR), which
// is not "not found" and which root cannot read either.
func TestReadPromptSaysWhyItCannotRead(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "PROMPT.md")
	_, err := readPrompt(path)
	want := "cannot read prompt file: " + path + ": not a directory"
	if err == nil || err.Error() != want {
		t.Fatalf("readPrompt = %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("readPrompt's error %q lost its cause", err)
	}
}

// At spawn the prompt's errors name the path as the user gave it, and
// keep their cause.
func TestValidateKeepsThePromptErrorsCause(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{PromptFile: filepath.Join(file, "PROMPT.md"), MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Minute}}
	err := o.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "cannot read prompt file: ") {
		t.Fatalf("Validate = %v", err)
	}
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Validate's error %q lost its cause", err)
	}
}
