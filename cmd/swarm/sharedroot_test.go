package main

// Black-box tests of issue 16: a state root others can write (item 2) and
// swarm init through a symbolic link (item 8).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// srRunBounded runs swarm in dir with a deadline and, when memLimitKB is
// set, a cap on its address space (ulimit -v): a swarm that reads a FIFO
// or /dev/zero as a state file must show up as a failed test, not as a
// hung suite or a machine out of memory.
// boundedKB is the address space the bounded runs get: far above what
// swarm needs (a Go program reserves a few hundred MiB of address space
// at start, more under load; 1 GiB was seen to fail at start), far below
// what reading /dev/zero whole would take.
const boundedKB = 4 << 20

func srRunBounded(t *testing.T, e *testenv.Env, dir string, memLimitKB int, args ...string) (testenv.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv := append([]string{e.Swarm}, args...)
	if memLimitKB > 0 {
		argv = append([]string{"sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, memLimitKB)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = e.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("swarm %v did not return within 20s (stderr %q)", args, errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return testenv.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}, took
}

// A state root that group or others can write (SWARM_HOME=/tmp/..., a
// team directory) is refused by every command, which exits 1 and changes
// nothing in it; SWARM_TRUST_SHARED_ROOT=1 accepts it.
func TestSharedStateRootIsRefused(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(e.Home, 0o777)
	want := "swarm: error: state root " + e.Home + " is writable by others (mode 0777)\n" +
		"hint: chmod 700 " + e.Home + ", use another SWARM_HOME, or set SWARM_TRUST_SHARED_ROOT=1 if everyone who can write it is trusted to run commands as you\n"
	for _, args := range [][]string{
		{"ls"},
		{"spawn", "--name", "w", "--tmux", "--", "sleep", "300"},
		{"spawn", "--name", "p", "--", "sleep", "300"},
		{"ralph", "ls"},
		{"heartbeat", "list"},
		{"top", "--once"},
	} {
		wkExpect(t, strings.Join(args, " "), e.Run(args...), 1, "", want)
	}
	if entries, _ := os.ReadDir(e.Home); len(entries) != 0 {
		t.Errorf("a refused root got %d entries", len(entries))
	}
	if fi, _ := os.Stat(e.Home); fi.Mode().Perm() != 0o777 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
	shared := *e
	shared.Extra = append(append([]string{}, e.Extra...), "SWARM_TRUST_SHARED_ROOT=1")
	shared.MustRun("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	if got := wkNames(t, &shared); len(got) != 1 || got[0] != "w" {
		t.Errorf("opted in: ls = %q", got)
	}
}

// A state root another user owns is refused (chown needs root: CI runs
// as root).
func TestStateRootOfAnotherUserIsRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown the state root to another user (uid 65534)")
	}
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(e.Home, 65534, 65534)
	r := e.Run("spawn", "--name", "w", "--tmux", "--", "sleep", "300")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "swarm: error: state root "+e.Home+" is owned by another user (uid 65534)\nhint: use a SWARM_HOME of your own") {
		t.Errorf("spawn in another user's root: %s", r)
	}
	if entries, _ := os.ReadDir(e.Home); len(entries) != 0 {
		t.Errorf("a refused root got %d entries", len(entries))
	}
}

// Symbolic links planted at swarm's files in the state root are never
// followed: the command fails naming the link, and the file it points to
// is neither created nor written.
func TestPlantedSymlinksInStateRootAreNotFollowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		file string // under the state root
		args []string
	}{
		{"process log", "logs/p.stdout.log", []string{"spawn", "--name", "p", "--", "sh", "-c", "echo secret-output"}},
		{"state.lock", "state.lock", []string{"spawn", "--name", "w", "--tmux", "--", "sleep", "300"}},
		{"state.json", "state.json", []string{"ls"}},
	} {
		for _, exists := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/target exists %v", tc.name, exists), func(t *testing.T) {
				t.Parallel()
				e := testenv.New(t)
				link := filepath.Join(e.Home, tc.file)
				os.MkdirAll(filepath.Dir(link), 0o700)
				victim := filepath.Join(t.TempDir(), "victim")
				if exists {
					os.WriteFile(victim, []byte("precious\n"), 0o600)
				}
				if err := os.Symlink(victim, link); err != nil {
					t.Fatal(err)
				}
				r := e.Run(tc.args...)
				if r.Code != 1 || !strings.Contains(r.Stderr, link+" is a symbolic link\nhint: ") {
					t.Errorf("%s", r)
				}
				data, err := os.ReadFile(victim)
				if exists && string(data) != "precious\n" {
					t.Errorf("the link's target now holds %q", data)
				}
				if !exists && err == nil {
					t.Errorf("the link's target was created, holding %q", data)
				}
			})
		}
	}
}

// state.json linked to /dev/zero is refused at once, not read until memory
// runs out (the run is capped at 1 GiB of address space, so a swarm that
// reads it fails here instead of exhausting the machine).
func TestStateJSONToDevZeroIsRefused(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	os.MkdirAll(e.Home, 0o700)
	state := filepath.Join(e.Home, "state.json")
	if err := os.Symlink("/dev/zero", state); err != nil {
		t.Fatal(err)
	}
	// Before testenv's cleanup, which reads state.json.
	t.Cleanup(func() { os.Remove(state) })
	r, _ := srRunBounded(t, e, e.Dir, boundedKB, "ls")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "swarm: error: state file "+state+" is a symbolic link\n") {
		t.Errorf("ls: %s", r)
	}
}

// A FIFO as state.json makes ls fail at once with an error: it never waits
// for a writer that never comes.
func TestStateJSONFIFODoesNotHangLs(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	os.MkdirAll(e.Home, 0o700)
	state := filepath.Join(e.Home, "state.json")
	if err := syscall.Mkfifo(state, 0o600); err != nil {
		t.Fatal(err)
	}
	// Before testenv's cleanup, which reads state.json.
	t.Cleanup(func() { os.Remove(state) })
	r, took := srRunBounded(t, e, e.Dir, 0, "ls")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "swarm: error: state file "+state+" is not a regular file (a named pipe)\n") {
		t.Errorf("ls: %s", r)
	}
	if took > 10*time.Second {
		t.Errorf("ls took %v", took)
	}
}

// swarm init never reads or writes through a symbolic link: a CLAUDE.md
// linked to a private key is refused, and the key is not copied into the
// project; one linked to /dev/zero is refused, not read.
func TestInitThroughSymlinkIsRefused(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY\n"), 0o600)
	for _, tc := range []struct {
		name, file, target string
		args               []string
	}{
		{"key via --file", "CLAUDE.md", secret, []string{"init", "--file", "CLAUDE.md"}},
		{"key by default", "AGENTS.md", secret, []string{"init"}},
		{"key with --force", "AGENTS.md", secret, []string{"init", "--force"}},
		{"dev zero", "AGENTS.md", "/dev/zero", []string{"init"}},
		{"dev zero dry run", "CLAUDE.md", "/dev/zero", []string{"init", "--dry-run", "--file", "CLAUDE.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			link := filepath.Join(dir, tc.file)
			if err := os.Symlink(tc.target, link); err != nil {
				t.Fatal(err)
			}
			r, _ := srRunBounded(t, e, dir, boundedKB, tc.args...)
			shown := link
			if len(tc.args) > 1 && tc.args[len(tc.args)-2] == "--file" {
				shown = tc.file // as the user named it
			}
			want := "swarm: error: cannot update " + tc.file + ": file " + shown + " is a symbolic link\nhint: "
			if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) {
				t.Errorf("%s", r)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("init left %d files", len(entries))
			}
			if data, _ := os.ReadFile(secret); string(data) != "PRIVATE KEY\n" {
				t.Errorf("the key now holds %q", data)
			}
		})
	}
}
