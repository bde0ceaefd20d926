package ralph

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/state"
)

// The oldest transcripts (with their exit files) go first until the rest
// fit the budget; the current iteration's is never removed, even alone
// over budget; other files in output/ are left alone.
func TestTrimTranscriptsKeepsTheBudget(t *testing.T) {
	rs := state.NewStore(t.TempDir(), nil).Ralph("loop")
	dir := filepath.Join(rs.Dir, "output")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name string, size int) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", size)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Iterations 1..10 (9 before 10, sorted by number, not by name), 100
	// bytes each, with exit files; and a stranger.
	for i := 1; i <= 10; i++ {
		write(fmt.Sprintf("iteration-%04d.log", i), 100)
		write(fmt.Sprintf("iteration-%04d.exit", i), 2)
	}
	write("notes.txt", 5000)
	kept := func() []int {
		var out []int
		for _, tr := range transcripts(rs) {
			out = append(out, tr.iter)
		}
		return out
	}

	trimTranscripts(rs, 1000, 11)
	if got := kept(); !reflect.DeepEqual(got, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("within budget, kept %v", got)
	}
	trimTranscripts(rs, 450, 11)
	if got := kept(); !reflect.DeepEqual(got, []int{7, 8, 9, 10}) {
		t.Fatalf("budget 450: kept %v, want the newest 4", got)
	}
	for i := 1; i <= 6; i++ {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("iteration-%04d.exit", i))); !os.IsNotExist(err) {
			t.Fatalf("exit file of removed iteration %d: %v", i, err)
		}
	}
	trimTranscripts(rs, 0, 7)
	if got := kept(); !reflect.DeepEqual(got, []int{7, 8, 9, 10}) {
		t.Fatalf("the current iteration (7) is never removed, nor what follows it: kept %v", got)
	}
	trimTranscripts(rs, 0, 11)
	if got := kept(); len(got) != 0 {
		t.Fatalf("budget 0: kept %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatalf("a file that is no transcript was touched: %v", err)
	}
}
