package state

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// An env file holds the entries exactly (spaces, '=', newlines in
// values), is private, and is gone once taken.
func TestEnvFileIsTakenOnce(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	env := []string{"K=a b", "K2=a=b\nc", "EMPTY="}
	path, err := s.WriteEnvFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(path) != s.EnvDir() {
		t.Fatalf("%s: %v %v", path, fi.Mode(), err)
	}
	got, err := TakeEnvFile(path)
	if err != nil || !slices.Equal(got, env) {
		t.Fatalf("TakeEnvFile = %q, %v; want %q", got, err, env)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	if _, err := TakeEnvFile(path); err == nil {
		t.Error("a file taken twice")
	}
	if _, err := s.WriteEnvFile([]string{"K=a\x00b"}); err == nil {
		t.Error("an entry with a NUL was written")
	}
}

// Only a private regular file of this user is read: not a symlink to one,
// not one others may read, not a FIFO (which would block).
func TestTakeEnvFileRefusesWhatSwarmDidNotWrite(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	real, err := s.WriteEnvFile([]string{"K=v"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "link.env")
	os.Symlink(real, link)
	wide := filepath.Join(dir, "wide.env")
	os.WriteFile(wide, []byte("K=v"), 0o644)
	os.Chmod(wide, 0o644)
	fifo := filepath.Join(dir, "fifo.env")
	mkfifo(t, fifo)
	for _, p := range []string{link, wide, fifo, dir} {
		if env, err := TakeEnvFile(p); err == nil {
			t.Errorf("%s taken: %q", p, env)
		}
	}
	if _, err := os.Stat(real); err != nil {
		t.Errorf("the symlink's target was removed: %v", err)
	}
}

// A file no wrapper took (its spawn killed) is swept by a later write
// once it is old.
func TestStaleEnvFilesAreSwept(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	old, _ := s.WriteEnvFile([]string{"K=old"})
	fresh, _ := s.WriteEnvFile([]string{"K=fresh"})
	past := time.Now().Add(-envFileStale - time.Minute)
	os.Chtimes(old, past, past)
	if _, err := s.WriteEnvFile([]string{"K=new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("stale env file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh env file swept: %v", err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}
