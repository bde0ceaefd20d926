package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A symbolic link planted at any of swarm's files in the state root is
// never followed (issue 16, item 2): the operation fails naming the link,
// and the file it points to is neither created, truncated nor appended to.
func TestStateFilesNeverFollowSymlinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		file func(s *Store) string
		op   func(s *Store) error
	}{
		{"state.lock", func(s *Store) string { return filepath.Join(s.Root, "state.lock") },
			func(s *Store) error { return s.Update(addWorker("w")) }},
		{"state.json", func(s *Store) string { return filepath.Join(s.Root, "state.json") },
			func(s *Store) error { _, err := s.Load(); return err }},
		{"ralph state.lock", func(s *Store) string { return filepath.Join(s.Ralph("loop").Dir, "state.lock") },
			func(s *Store) error { _, err := s.Ralph("loop").Update(func(*Ralph) error { return nil }); return err }},
		{"iterations.log", func(s *Store) string { return s.Ralph("loop").LogPath() },
			func(s *Store) error { return s.Ralph("loop").Log("PAUSE", "x") }},
		{"delivered prompt", func(s *Store) string { return s.Ralph("loop").DeliveredPromptPath() },
			func(s *Store) error { _, err := s.Ralph("loop").LoadDelivered(); return err }},
		{"heartbeat", func(s *Store) string { return s.Heartbeats().Path("w") },
			func(s *Store) error { _, err := s.Heartbeats().Load("w"); return err }},
		{"config.json", func(s *Store) string { return s.ConfigPath() },
			func(s *Store) error { _, err := s.Config(); return err }},
	} {
		for _, exists := range []bool{false, true} {
			name := tc.name + "/new target"
			if exists {
				name = tc.name + "/existing target"
			}
			t.Run(name, func(t *testing.T) {
				s, _ := newStore(t)
				if err := s.Ralph("loop").Create(loopState()); err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(s.Heartbeats().Dir(), 0o700)
				victim := filepath.Join(t.TempDir(), "victim")
				if exists {
					writeFile(t, victim, "precious\n")
				}
				link := tc.file(s)
				os.Remove(link)
				if err := os.Symlink(victim, link); err != nil {
					t.Fatal(err)
				}
				err := tc.op(s)
				if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), link+" is a symbolic link") {
					t.Errorf("err = %v, want the link refused", err)
				}
				data, rerr := os.ReadFile(victim)
				switch {
				case !exists && rerr == nil:
					t.Errorf("the link's target was created")
				case exists && string(data) != "precious\n":
					t.Errorf("the link's target now holds %q", data)
				}
			})
		}
	}
}

// A state file larger than MaxFileSize is refused with an error, not read.
func TestStateFileReadsAreBounded(t *testing.T) {
	old := MaxFileSize
	MaxFileSize = 1 << 10
	defer func() { MaxFileSize = old }()
	s, _ := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	big := `{"workers": [` + strings.Repeat(" ", 2<<10) + `]}`
	writeFile(t, path, big)
	_, err := s.Load()
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), fmt.Sprintf("is too large (%d bytes; at most 1024)", len(big))) {
		t.Errorf("load: err = %v", err)
	}
	if err := s.Update(addWorker("w")); !errors.Is(err, ErrUnsafe) {
		t.Errorf("update: err = %v", err)
	}
	if readFile(t, path) != big {
		t.Errorf("the file was changed")
	}
}

// A FIFO (or a device) where a state file belongs is refused at once: the
// read never waits for a writer that never comes.
func TestStateJSONFIFODoesNotHang(t *testing.T) {
	s, _ := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	fifos := []string{filepath.Join(s.Root, "state.json"), rs.StatePath(), filepath.Join(s.Root, "state.lock"), rs.LogPath()}
	for _, p := range fifos {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan []error, 1)
	go func() {
		var errs []error
		_, err := s.Load()
		errs = append(errs, err)
		errs = append(errs, s.Update(addWorker("w")))
		_, err = rs.Load()
		errs = append(errs, err)
		errs = append(errs, rs.Log("PAUSE", "x"))
		done <- errs
	}()
	select {
	case errs := <-done:
		for i, err := range errs {
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "is not a regular file (a named pipe)") {
				t.Errorf("operation %d: err = %v", i, err)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO state file hung")
	}
}

// A file of another user's, or one others can write, in a root of the
// user's own is refused; the opt-in accepts it, symlinks still not.
func TestStateFileWritableByOthersIsRefused(t *testing.T) {
	s, _ := newStore(t)
	if err := s.Update(addWorker("w")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Root, "state.json")
	os.Chmod(path, 0o666)
	want := "state file " + path + " is writable by others (mode 0666)"
	if _, err := s.Load(); err == nil || err.Error() != want {
		t.Errorf("load: err = %v, want %q", err, want)
	}
	t.Setenv(TrustSharedRootEnv, "1")
	if reg, err := s.Load(); err != nil || len(reg.Workers) != 1 {
		t.Errorf("opted in: %v %v", reg, err)
	}
}

// config.json's on_exit hook is read only from a file the user owns and
// nobody else can write, even in a root the user opted in to sharing.
func TestForeignConfigHookIsNotRead(t *testing.T) {
	s, _ := newStore(t)
	writeFile(t, s.ConfigPath(), `{"on_exit": "touch /tmp/pwned"}`)
	if c, err := s.Config(); err != nil || c.OnExit == "" {
		t.Fatalf("own config: %+v %v", c, err)
	}
	os.Chmod(s.ConfigPath(), 0o620)
	t.Setenv(TrustSharedRootEnv, "1")
	c, err := s.Config()
	if !errors.Is(err, ErrUnsafe) || c.OnExit != "" {
		t.Errorf("group-writable config: %+v %v", c, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown config.json to another user (uid 65534)")
	}
	os.Chmod(s.ConfigPath(), 0o600)
	os.Chown(s.ConfigPath(), 65534, 65534)
	c, err = s.Config()
	if !errors.Is(err, ErrUnsafe) || c.OnExit != "" || !strings.Contains(err.Error(), "is owned by another user (uid 65534)") {
		t.Errorf("another user's config: %+v %v", c, err)
	}
}
