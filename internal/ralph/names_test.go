package ralph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Loop names reach paths: no ralph command may act outside ralph/NAME.
func TestRalphCommandsRejectPathNames(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// A bystander file next to the state root, and a worker record.
	precious := filepath.Join(filepath.Dir(e.Home), "precious.txt")
	os.WriteFile(precious, []byte("keep me"), 0o644)
	e.MustRun("spawn", "--name", "w", "--", "sleep", "300")
	before, _ := os.ReadFile(filepath.Join(e.Home, "state.json"))
	for _, args := range [][]string{
		{"ralph", "clean", "../.."}, {"ralph", "clean", ".."}, {"ralph", "clean", "."},
		{"ralph", "pause", ".."}, {"ralph", "resume", ".."}, {"ralph", "status", ".."},
		{"ralph", "run", "../escape"}, {"ralph", "stop", "../x"}, {"ralph", "logs", ".."},
		{"ralph", "wait", ".."}, {"ralph", "run", "fresh"}, {"ralph", "clean", "fresh"},
	} {
		r := e.Run(args...)
		if r.Code == 0 || !strings.HasPrefix(r.Stderr, "swarm: error: ") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me" {
		t.Fatal("a file outside the state root was removed")
	}
	after, err := os.ReadFile(filepath.Join(e.Home, "state.json"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("state.json changed:\n%s", after)
	}
	for _, p := range []string{filepath.Join(e.Home, "escape"), filepath.Join(e.Home, "ralph", "fresh")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s created", p)
		}
	}
	e.MustRun("kill", "w")
}
