package worker

import (
	"strings"
	"testing"
)

// A dead pane of a 200x50 window: its last words in the top rows, blank
// rows, tmux's dead-pane line at the bottom. The blank rows are not part
// of the last n lines.
func TestLastLinesSkipsTheBlankRowsAboveTheDeadPaneLine(t *testing.T) {
	screen := "Fake Agent v1.0\nfirst words\nlast words\n" + strings.Repeat("\n", 46) + "Pane is dead (status 3, Thu Nov 26 18:48:43 2026)\n"
	want := "first words\nlast words\nPane is dead (status 3, Thu Nov 26 18:48:43 2026)\n"
	if got := lastLines(screen, 3); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := lastLines("a\n\nb\n\n\n", 30); got != "a\n\nb\n" {
		t.Fatalf("blank lines inside the output went: %q", got)
	}
}
