package state

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// One spawn lock per loop name, taken without waiting: a second taker is
// told ErrSpawnBusy until the first lets go; the lock file is beside the
// loop's directory, so removing the loop (a replace does) leaves the lock
// held.
func TestSpawnLockIsExclusiveAndOutlivesTheLoop(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	rs := s.Ralph("loop")
	release, err := rs.TryLockSpawn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Create(&Ralph{LoopConfig: LoopConfig{WorkerName: "loop"}}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ralph("loop").TryLockSpawn(); !errors.Is(err, ErrSpawnBusy) {
		t.Fatalf("a second spawn lock of the loop: %v, want ErrSpawnBusy", err)
	}
	other, err := s.Ralph("other").TryLockSpawn()
	if err != nil {
		t.Fatalf("another loop's spawn lock: %v", err)
	}
	other()
	release()
	again, err := s.Ralph("loop").TryLockSpawn()
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if fi, err := os.Stat(filepath.Join(s.Root, "ralph", "loop.spawn.lock")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi, err)
	}
	if names, _ := s.RalphNames(); len(names) != 0 {
		t.Errorf("a lock file listed as a loop: %v", names)
	}
	if _, err := s.Ralph("../x").TryLockSpawn(); err == nil {
		t.Error("an invalid name took a lock")
	}
}
