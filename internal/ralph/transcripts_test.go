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

// OutputTail is the end of the last iteration's output as text: the
// current iteration's, else the newest kept; a long output is read from
// its end only, from a line's start.
func TestOutputTailIsTheLastIterationsText(t *testing.T) {
	t.Parallel()
	rs := state.NewStore(t.TempDir(), nil).Ralph("loop")
	if _, _, err := OutputTail(rs, 5); err == nil {
		t.Error("no state: no error")
	}
	if err := rs.Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "loop"}, LoopProgress: state.LoopProgress{Status: state.RalphStopped, CurrentIteration: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OutputTail(rs, 5); err == nil || err.Error() != "no output kept for 'loop'" {
		t.Errorf("nothing kept: %v", err)
	}
	write := func(iter int, text string) {
		if err := os.MkdirAll(filepath.Dir(outputPath(rs, iter)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(outputPath(rs, iter), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1, "first\r\n")
	write(2, "one\r\n\x1b[32mtwo\x1b[0m\r\n10%\r100%\r\nthree\r\n\x1b]7777;swarm-end\x07")
	iter, text, err := OutputTail(rs, 3)
	if iter != 2 || text != "two\n100%\nthree" || err != nil {
		t.Errorf("no output of iteration 3: iteration %d, %q, %v; want 2's last 3 lines", iter, text, err)
	}
	long := strings.Repeat("x", outputTailBytes) + "\nend of a long line\n"
	write(3, "beginning\n"+long+"last\n")
	iter, text, err = OutputTail(rs, 1000)
	lines := strings.Split(text, "\n")
	if iter != 3 || err != nil || lines[0] != "end of a long line" || lines[len(lines)-1] != "last" {
		t.Errorf("long output: iteration %d, %v, lines %d, first %.30q", iter, err, len(lines), lines[0])
	}
}
