package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// messages renders actions as the lines swarm prints.
func messages(actions []Action) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Message())
	}
	return out
}

func mustWrite(t *testing.T, dir string, o Options) []Action {
	t.Helper()
	actions, err := Write(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return actions
}

// snapshot records every file in dir with its mode and content, to prove
// that a run changed nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, _ := e.Info()
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = info.Mode().String() + "\n" + string(data)
	}
	return out
}

func TestWriteCreatesKitWithModes(t *testing.T) {
	dir := t.TempDir()
	got := messages(mustWrite(t, dir, Options{}))
	want := []string{"Created sandbox.sh", "Created Dockerfile.sandbox", "Created setup-sandbox-network.sh",
		"Created teardown-sandbox-network.sh", "Created ORCHESTRATOR.md", "Created PROMPT.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages:\n got %q\nwant %q", got, want)
	}
	for _, f := range Files() {
		info, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != f.Mode {
			t.Errorf("%s mode %v, want %v", f.Name, info.Mode().Perm(), f.Mode)
		}
		if strings.HasSuffix(f.Name, ".sh") && f.Mode&0o111 != 0o111 {
			t.Errorf("%s is not executable", f.Name)
		}
		data, _ := os.ReadFile(filepath.Join(dir, f.Name))
		kit, _ := Content(f.Name)
		if string(data) != string(kit) || len(data) == 0 {
			t.Errorf("%s: content differs from the kit", f.Name)
		}
	}
	// No temporary files left behind.
	if n := len(snapshot(t, dir)); n != len(Files()) {
		t.Errorf("%d files in dir, want %d", n, len(Files()))
	}
}

func TestWriteIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, Options{})
	before := snapshot(t, dir)
	for _, o := range []Options{{}, {Force: true}, {DryRun: true}, {DryRun: true, Force: true}} {
		for _, a := range mustWrite(t, dir, o) {
			want := Kept
			if o.Force && !isUserOwned(a.File) {
				want = UpToDate
			}
			if a.Result != want {
				t.Errorf("%+v: %s: %s", o, a.File, a.Message())
			}
		}
		if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
			t.Errorf("%+v changed the files", o)
		}
	}
	a := mustWrite(t, dir, Options{})[0]
	if a.Message() != "swarm: sandbox.sh already exists, skipping" {
		t.Errorf("message %q", a.Message())
	}
}

func isUserOwned(name string) bool {
	for _, f := range Files() {
		if f.Name == name {
			return f.UserOwned
		}
	}
	return false
}

func TestDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	got := messages(mustWrite(t, dir, Options{DryRun: true}))
	if len(got) != len(Files()) || got[0] != "Would create sandbox.sh" || got[5] != "Would create PROMPT.md" {
		t.Errorf("dry run: %q", got)
	}
	if s := snapshot(t, dir); len(s) != 0 {
		t.Errorf("dry run wrote %v", s)
	}
}

func TestUserChangesKeptUnlessForced(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, Options{})
	mine := "# my own\n"
	for _, name := range []string{"sandbox.sh", "PROMPT.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(mine), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		return string(data)
	}
	mustWrite(t, dir, Options{})
	if read("sandbox.sh") != mine || read("PROMPT.md") != mine {
		t.Fatal("a user's file was overwritten without --force")
	}
	dry := mustWrite(t, dir, Options{Force: true, DryRun: true})
	if dry[0].Message() != "Would update sandbox.sh" || read("sandbox.sh") != mine {
		t.Errorf("force dry run: %q", messages(dry))
	}
	forced := mustWrite(t, dir, Options{Force: true})
	if forced[0].Message() != "Updated sandbox.sh" || forced[5].Message() != "swarm: PROMPT.md already exists, skipping" {
		t.Errorf("force: %q", messages(forced))
	}
	kit, _ := Content("sandbox.sh")
	info, _ := os.Stat(filepath.Join(dir, "sandbox.sh"))
	if read("sandbox.sh") != string(kit) || info.Mode().Perm() != 0o755 {
		t.Error("force did not restore sandbox.sh and its mode")
	}
	if read("PROMPT.md") != mine {
		t.Error("force replaced the user's PROMPT.md")
	}
}

func TestSymlinkIsNeverReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, "sandbox.sh")); err != nil {
		t.Fatal(err)
	}
	a := mustWrite(t, dir, Options{Force: true})[0]
	if a.Result != Kept {
		t.Errorf("symlink: %s", a.Message())
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("wrote through a dangling symlink")
	}
}

func TestFailureRollsBack(t *testing.T) {
	failHook = func(name string) error {
		if name == "ORCHESTRATOR.md" {
			return errors.New("disk full")
		}
		return nil
	}
	defer func() { failHook = nil }()
	// Fresh project: the files created before the failure are removed.
	dir := t.TempDir()
	if _, err := Write(dir, Options{}); err == nil || !strings.Contains(err.Error(), "ORCHESTRATOR.md: disk full") {
		t.Fatalf("err = %v", err)
	}
	if s := snapshot(t, dir); len(s) != 0 {
		t.Errorf("files left after a failed write: %v", s)
	}
	// Forced update: a replaced file gets its old content and mode back.
	dir = t.TempDir()
	mine := filepath.Join(dir, "sandbox.sh")
	os.WriteFile(mine, []byte("# mine\n"), 0o700)
	if _, err := Write(dir, Options{Force: true}); err == nil {
		t.Fatal("no error")
	}
	data, _ := os.ReadFile(mine)
	info, _ := os.Stat(mine)
	if string(data) != "# mine\n" || info.Mode().Perm() != 0o700 {
		t.Errorf("sandbox.sh after rollback: %q %v", data, info.Mode())
	}
	if s := snapshot(t, dir); len(s) != 1 {
		t.Errorf("files left after a failed write: %v", s)
	}
}

// A rollback that cannot put a file back says so with the write's error:
// here the file made first has become a directory with something in it.
func TestFailedRollbackIsReported(t *testing.T) {
	dir := t.TempDir()
	failHook = func(name string) error {
		if name == "ORCHESTRATOR.md" {
			if err := os.Remove(filepath.Join(dir, "sandbox.sh")); err != nil {
				t.Error(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "sandbox.sh", "x"), 0o700); err != nil {
				t.Error(err)
			}
			return errors.New("disk full")
		}
		return nil
	}
	defer func() { failHook = nil }()
	_, err := Write(dir, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	first, rest, _ := strings.Cut(err.Error(), "\n")
	if !strings.HasSuffix(first, "ORCHESTRATOR.md: disk full") {
		t.Errorf("first line %q: the write's error comes first", first)
	}
	if !strings.Contains(rest, "and what was written before it could not all be put back: ") || !strings.Contains(rest, "sandbox.sh") {
		t.Errorf("the failed rollback is not reported: %q", err)
	}
}

// scripts writes the kit's shell scripts into a temporary directory.
func scripts(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	mustWrite(t, dir, Options{})
	var out []string
	for _, f := range Files() {
		if strings.HasSuffix(f.Name, ".sh") {
			out = append(out, filepath.Join(dir, f.Name))
		}
	}
	return out
}

func TestScriptsParse(t *testing.T) {
	for _, path := range scripts(t) {
		if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", filepath.Base(path), err, out)
		}
		data, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(data), "#!/usr/bin/env bash\n") || !strings.Contains(string(data), "\nset -euo pipefail\n") {
			t.Errorf("%s: want a bash shebang and set -euo pipefail", filepath.Base(path))
		}
	}
}

func TestScriptsPassShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck not on PATH (apt-get install shellcheck): the sandbox scripts were not linted")
	}
	for _, path := range scripts(t) {
		if out, err := exec.Command("shellcheck", "--severity=style", path).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", filepath.Base(path), err, out)
		}
	}
}
