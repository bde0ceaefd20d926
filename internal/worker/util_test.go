package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// failingWriter is a reader that went away (a closed pipe).
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// Following a log ends with the write's error once no one reads it, as
// the process it follows lives on.
func TestFollowEndsWhenTheWriteFails(t *testing.T) {
	t.Parallel()
	m, _, dir := newFake(t)
	path := filepath.Join(dir, "out.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.followFile(ctx, path, os.Getpid(), failingWriter{}, 10*time.Millisecond) }()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Written until the follower has seeked to the end and read some.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil || err.Error() != "broken pipe" {
				t.Fatalf("followFile = %v, want the write's error", err)
			}
			return
		case <-tick.C:
			if _, err := f.WriteString("line\n"); err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("followFile went on writing to a reader that is gone")
		}
	}
}
