package state

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestHostsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	if hosts, err := s.Hosts(); err != nil || len(hosts) != 0 {
		t.Fatalf("no file: %v %v", hosts, err)
	}
	want := Host{Name: "gpu1", Target: "me@gpu1", Swarm: "/opt/swarm", StateRoot: "/srv/swarm", TmuxSocket: "s",
		Env: []string{"A=b c"}, SSHOptions: []string{"Port=2222"}}
	if err := s.UpdateHosts(func(h *[]Host) error { *h = append(*h, want); return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Host("gpu1")
	if err != nil || got.Target != want.Target || got.Env[0] != "A=b c" || got.SSHOptions[0] != "Port=2222" {
		t.Fatalf("got %+v %v", got, err)
	}
	if _, err := s.Host("gpu2"); !errors.Is(err, ErrNoHost) {
		t.Errorf("unknown host: %v", err)
	}
	fi, err := os.Stat(s.HostsPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("hosts.json mode %v %v, want 0600", fi.Mode(), err)
	}
}

// Concurrent adds under the lock all land.
func TestHostsConcurrentUpdates(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Go(func() {
			name := "h" + strings.Repeat("x", i)
			if err := s.UpdateHosts(func(h *[]Host) error { *h = append(*h, Host{Name: name, Target: "t"}); return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if hosts, err := s.Hosts(); err != nil || len(hosts) != 20 {
		t.Errorf("%d hosts, %v; want 20", len(hosts), err)
	}
}

func TestHostsFileRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		err   string
	}{
		{"broken JSON", func(t *testing.T, p string) { os.WriteFile(p, []byte(`{"hosts": [`), 0o600) }, "invalid hosts file"},
		{"unknown key", func(t *testing.T, p string) {
			os.WriteFile(p, []byte(`{"hosts": [{"name": "a", "tagret": "x"}]}`), 0o600)
		}, "unknown field"},
		{"twice", func(t *testing.T, p string) {
			os.WriteFile(p, []byte(`{"hosts": [{"name": "a", "target": "x"}, {"name": "a", "target": "y"}]}`), 0o600)
		}, "is there twice"},
		{"symlink", func(t *testing.T, p string) { os.Symlink("/etc/passwd", p) }, "symbolic link"},
		{"fifo", func(t *testing.T, p string) { mkfifo(t, p) }, "not a regular file"},
		{"writable by others", func(t *testing.T, p string) {
			os.WriteFile(p, []byte(`{"hosts": []}`), 0o600)
			os.Chmod(p, 0o666)
		}, "writable by others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			os.MkdirAll(s.Root, 0o700)
			tc.setup(t, s.HostsPath())
			before, _ := os.Lstat(s.HostsPath())
			if _, err := s.Hosts(); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Hosts: %v, want %q", err, tc.err)
			}
			err := s.UpdateHosts(func(h *[]Host) error { *h = nil; return nil })
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("UpdateHosts: %v, want %q", err, tc.err)
			}
			after, _ := os.Lstat(s.HostsPath())
			if before.Mode() != after.Mode() || before.Size() != after.Size() {
				t.Errorf("a refused update changed the file: %v -> %v", before.Mode(), after.Mode())
			}
		})
	}
}
