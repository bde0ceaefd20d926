package ralph

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// A spawn with no command is one error wherever it is caught (a worker's
// spawn, a loop's spawn; the commands print it as it is): callers tell it
// by errors.Is, and its text is swarm.py's.
func TestSpawnWithoutACommandIsErrNoCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prompt := filepath.Join(dir, "PROMPT.md")
	if err := os.WriteFile(prompt, []byte("work\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := worker.New(filepath.Join(dir, "home"), nil)
	_, werr := m.Spawn(worker.SpawnOptions{Name: "w", Cwd: dir})
	_, lerr := Spawn(m, SpawnOptions{
		Worker: worker.SpawnOptions{Name: "w", Cwd: dir},
		Loop:   Options{PromptFile: prompt, MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Minute}},
	})
	for what, err := range map[string]error{"worker spawn": werr, "loop spawn": lerr} {
		if !errors.Is(err, worker.ErrNoCommand) || err.Error() != "no command provided (use -- command...)" {
			t.Errorf("%s without a command: %v", what, err)
		}
	}
}
