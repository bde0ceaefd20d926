package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Concurrent hooks append whole lines, never interleaved, and the reader
// returns complete lines only, from where it stopped.
func TestAppendEventConcurrentWholeLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := fmt.Sprintf(`{"n":%d,"pad":%q}`, i, strings.Repeat("x", 3000+i))
			if err := AppendEvent(path, []byte(line), false); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lines, next, err := ReadEvents(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 20 || next != EventsSize(path) {
		t.Fatalf("%d lines up to %d of %d bytes; want 20 up to the end", len(lines), next, EventsSize(path))
	}
	for _, l := range lines {
		if !bytes.HasPrefix(l, []byte(`{"n":`)) || !bytes.HasSuffix(l, []byte(`x"}`)) {
			t.Fatalf("broken line %.60q", l)
		}
	}
	// A partial line (a hook still writing) waits for the next read.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"half":`)
	f.Close()
	more, after, _ := ReadEvents(path, next)
	if len(more) != 0 || after != next {
		t.Errorf("read %q up to %d; want nothing until the line ends", more, after)
	}
}

// The cap: routine lines stop short of it, urgent ones (a turn's end)
// still go in, and nothing goes past it.
func TestAppendEventCap(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	big := make([]byte, MaxEventsFile-eventsReserve-100)
	for i := range big {
		big[i] = 'a'
	}
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"event":"PreToolUse","tool":"` + strings.Repeat("b", 200) + `"}`)
	if err := AppendEvent(path, line, false); !errors.Is(err, ErrEventsFull) {
		t.Errorf("routine line past the reserve: %v, want ErrEventsFull", err)
	}
	if err := AppendEvent(path, []byte(`{"event":"Stop"}`), true); err != nil {
		t.Errorf("urgent line in the reserve: %v", err)
	}
	full := make([]byte, MaxEventsFile-10)
	os.WriteFile(path, full, 0o600)
	if err := AppendEvent(path, []byte(`{"event":"Stop"}`), true); !errors.Is(err, ErrEventsFull) {
		t.Errorf("urgent line past the cap: %v, want ErrEventsFull", err)
	}
	if err := AppendEvent(path, []byte("two\nlines"), true); err == nil {
		t.Error("a line with a newline was taken")
	}
}

// The events file is a state file: never written through a symbolic link.
func TestAppendEventRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	path := filepath.Join(dir, "events.jsonl")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := AppendEvent(path, []byte(`{"event":"Stop"}`), true); err == nil {
		t.Error("appended through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("the link's target changed: %q", b)
	}
}

// An events file cut or replaced below the reader's offset (a new
// session's) is read from its start, never from the middle of a line.
func TestReadEventsAfterTheFileShrank(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ev.jsonl")
	for _, l := range []string{`{"event":"a"}`, `{"event":"b"}`, `{"event":"c"}`} {
		if err := AppendEvent(path, []byte(l), false); err != nil {
			t.Fatal(err)
		}
	}
	_, off, err := ReadEvents(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"event":"new"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, next, err := ReadEvents(path, off)
	if err != nil || len(lines) != 1 || string(lines[0]) != `{"event":"new"}` || next != int64(len(`{"event":"new"}`)+1) {
		t.Fatalf("after the file shrank: %q, next %d, %v", lines, next, err)
	}
}
