package ralph_test

import (
	"os"
	"strings"
	"testing"
)

// Issue 27 item 23: ralph resume starts a loop's agent again only in a
// directory that is still the user's: one that others can write (or that
// another user made since a reboot) is refused, and the loop stays as it
// was; made private again, the resume goes on.
func TestResumeRefusesADirectoryOthersCanWrite(t *testing.T) {
	l := newLoop(t, "wd")
	l.WriteFile("PROMPT.md", "work")
	l.spawn([]string{"--prompt-file", "PROMPT.md", "--max-iterations", "3"}, l.agent("--script", "quiet")...)
	l.MustRun("ralph", "pause", "wd")
	if err := os.Chmod(l.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(l.Dir, 0o755) })
	r := l.Run("ralph", "resume", "wd")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: directory "+l.Dir+" is writable by others (mode 0777)\n") ||
		!strings.Contains(r.Stderr, "hint: chmod go-w '"+l.Dir+"'") {
		t.Fatalf("resume in a directory others can write: %s", r)
	}
	if s := l.str("status"); s != "paused" {
		t.Errorf("status after the refused resume = %q, want paused", s)
	}
	if err := os.Chmod(l.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := l.Run("ralph", "resume", "wd"); r.Code != 0 {
		t.Errorf("resume in the user's own directory: %s", r)
	}
}
