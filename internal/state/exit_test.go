package state

import (
	"os"
	"testing"
	"time"
)

// A process worker's exit record: read back as written, 0600; never
// read through a symlink or from a file that is not one; and the end of
// a later process is not overwritten by an earlier one's.
func TestProcessExit(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if _, ok := s.ProcessExit("w"); ok {
		t.Fatal("an exit record with no file")
	}
	ended := Timestamp{time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)}
	first := ProcessExit{PID: 100, StartTicks: 500, ExitCode: 3, Ended: ended}
	if err := WriteProcessExit(s.ExitPath("w"), first); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.ProcessExit("w"); !ok || got.PID != 100 || got.StartTicks != 500 || got.ExitCode != 3 || !got.Ended.Equal(ended.Time) {
		t.Errorf("read back %+v, %v; want %+v", got, ok, first)
	}
	if fi, err := os.Stat(s.ExitPath("w")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode of the exit record: %v, %v", fi.Mode(), err)
	}

	later := ProcessExit{PID: 200, StartTicks: 900, ExitCode: 0, Ended: ended}
	if err := WriteProcessExit(s.ExitPath("w"), later); err != nil {
		t.Fatal(err)
	}
	if err := WriteProcessExit(s.ExitPath("w"), first); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ProcessExit("w"); got.PID != 200 {
		t.Errorf("an earlier process's end replaced a later one's: %+v", got)
	}

	if err := s.RemoveProcessExit("w"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveProcessExit("w"); err != nil {
		t.Errorf("removing a missing record: %v", err)
	}
	target := s.ExitPath("real")
	if err := WriteProcessExit(target, first); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.ExitPath("link")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ProcessExit("link"); ok {
		t.Error("an exit record read through a symlink")
	}
	if err := os.Mkdir(s.ExitPath("dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ProcessExit("dir"); ok {
		t.Error("a directory read as an exit record")
	}
}
