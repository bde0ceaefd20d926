package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree returns every file under root with its content, mode and mtime, to
// show that an operation wrote nothing.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		// A directory's mtime changes with every temp file made and
		// removed in it; its entries are compared one by one instead.
		desc := fi.Mode().String()
		if fi.Mode().IsRegular() {
			desc += fmt.Sprintf(" %d", fi.ModTime().UnixNano())
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, d := range after {
		if before[p] != d {
			t.Errorf("%s changed %s", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed %s", what, p)
		}
	}
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func addWorker(name string) func(*Registry) error {
	return func(r *Registry) error {
		r.Workers = append(r.Workers, Worker{Name: name, Status: StatusRunning})
		return nil
	}
}

func names(reg *Registry) []string {
	var out []string
	for _, w := range reg.Workers {
		out = append(out, w.Name)
	}
	return out
}

func loopState() *Ralph {
	return &Ralph{WorkerName: "loop", PromptFile: "/p", MaxIterations: 3, Status: RalphRunning}
}

// Directories swarm creates are 0700 whatever the umask.
func TestNewStateDirsArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := filepath.Join(t.TempDir(), "parent", "home")
	s := NewStore(root, nil)
	if err := s.Update(addWorker("w")); err != nil {
		t.Fatal(err)
	}
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	if err := rs.Log("START", "iteration 1/3"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(root), root, filepath.Join(root, "ralph"), rs.Dir} {
		if p := perm(t, d); p != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, p)
		}
	}
	for _, f := range []string{filepath.Join(root, "state.json"), rs.StatePath(), rs.LogPath()} {
		if p := perm(t, f); p != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, p)
		}
	}
}

// An existing directory keeps its mode; one writable by others gets one
// warning per command, naming it.
func TestExistingStateDirKeepsItsModeAndWarnsOnce(t *testing.T) {
	s, warnings := newStore(t)
	ralphDir := filepath.Join(s.Root, "ralph")
	if err := os.Mkdir(ralphDir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.Root, 0o777)
	os.Chmod(ralphDir, 0o770)
	for i := 0; i < 2; i++ {
		if err := s.Update(addWorker(fmt.Sprintf("w%d", i))); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(); err != nil {
			t.Fatal(err)
		}
		rs := s.Ralph("loop")
		if err := rs.Create(loopState()); err != nil {
			t.Fatal(err)
		}
		if _, err := rs.Update(func(*Ralph) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := rs.Log("PAUSE", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if p := perm(t, s.Root); p != 0o777 {
		t.Errorf("root mode %v, want 0777 left alone", p)
	}
	if p := perm(t, ralphDir); p != 0o770 {
		t.Errorf("ralph dir mode %v, want 0770 left alone", p)
	}
	want := []string{
		fmt.Sprintf("state directory %s is writable by others (chmod 700 %s)", s.Root, s.Root),
		fmt.Sprintf("state directory %s is writable by others (chmod 700 %s)", ralphDir, ralphDir),
	}
	if strings.Join(*warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q\nwant %q", *warnings, want)
	}
	// The next command warns again.
	var again []string
	NewStore(s.Root, func(m string) { again = append(again, m) }).Load()
	if len(again) != 1 || again[0] != want[0] {
		t.Errorf("second command's warnings = %q", again)
	}
}

// A symlinked SWARM_HOME works, and neither it nor its target is chmodded.
func TestSymlinkedStateRootIsUsedNotChmodded(t *testing.T) {
	target := t.TempDir()
	os.Chmod(target, 0o755)
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	s := NewStore(link, func(m string) { warnings = append(warnings, m) })
	if err := s.Update(addWorker("w")); err != nil {
		t.Fatal(err)
	}
	if err := s.Ralph("loop").Create(loopState()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if p := perm(t, target); p != 0o755 {
		t.Errorf("target mode %v, want 0755", p)
	}
	if _, err := os.Stat(filepath.Join(target, "state.json")); err != nil {
		t.Errorf("state.json not written through the link: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	os.Chmod(target, 0o777)
	s2 := NewStore(link, func(m string) { warnings = append(warnings, m) })
	if err := s2.Update(addWorker("w2")); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, target); p != 0o777 {
		t.Errorf("target mode %v, want 0777 left alone", p)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], link+" is writable by others") {
		t.Errorf("warnings = %q", warnings)
	}
}

// WriteFileAtomic also writes project files (PROMPT.md): their directory
// must keep its mode.
func TestWriteFileAtomicKeepsParentMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	if err := WriteFileAtomic(filepath.Join(dir, "PROMPT.md"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, dir); p != 0o755 {
		t.Errorf("dir mode %v, want 0755", p)
	}
	if p := perm(t, filepath.Join(dir, "PROMPT.md")); p != 0o600 {
		t.Errorf("file mode %v, want 0600", p)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "new", "f"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, filepath.Join(dir, "new")); p != 0o700 {
		t.Errorf("new dir mode %v, want 0700", p)
	}
}

// Temp files of a killed writer are removed by the next locked write once
// they are stale; a fresh one (a live writer's) and other files stay.
func TestStaleTempFilesAreSwept(t *testing.T) {
	s, _ := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	stale := time.Now().Add(-2 * staleTempAge)
	recent := time.Now().Add(-staleTempAge / 2)
	files := map[string]time.Time{
		".state.json.111.tmp":            stale,  // swept
		".state.json.222.tmp":            recent, // a live writer's
		".state.json.abc.tmp":            stale,  // not a name CreateTemp makes
		".other.json.333.tmp":            stale,  // another file's
		"state.json.444.tmp":             stale,  // swarm.py's temp name
		".state.json.corrupted.777.tmp":  stale,  // not state.json's
		".state.json.888.tmp.something":  stale,  // not a temp name
		".state.json.99999999999999.tmp": stale,  // swept
	}
	swept := []string{".state.json.111.tmp", ".state.json.99999999999999.tmp"}
	for _, dir := range []string{s.Root, rs.Dir} {
		for name, mtime := range files {
			p := filepath.Join(dir, name)
			writeFile(t, p, "partial")
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	staleDir := filepath.Join(s.Root, ".state.json.999.tmp")
	os.Mkdir(staleDir, 0o700)
	os.Chtimes(staleDir, stale, stale)
	if err := s.Update(addWorker("w")); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Update(func(*Ralph) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{s.Root, rs.Dir} {
		for name := range files {
			_, err := os.Stat(filepath.Join(dir, name))
			wantGone := contains(swept, name)
			if gone := errors.Is(err, fs.ErrNotExist); gone != wantGone {
				t.Errorf("%s/%s: removed=%v, want %v", filepath.Base(dir), name, gone, wantGone)
			}
		}
	}
	if _, err := os.Stat(staleDir); err != nil {
		t.Errorf("a directory with a temp name was removed: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// failWrites makes every write of the package fail with ENOSPC halfway,
// as on a full disk.
func failWrites(t *testing.T) {
	t.Helper()
	orig := writeAll
	writeAll = func(f *os.File, data []byte) error {
		f.Write(data[:len(data)/2])
		return syscall.ENOSPC
	}
	t.Cleanup(func() { writeAll = orig })
}

func noTemps(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("temp file left: %s/%s", dir, e.Name())
			}
		}
	}
}

// On a full disk every method returns the error, and the previous file
// stays intact and readable.
func TestFullDiskLeavesPreviousFileIntact(t *testing.T) {
	s, _ := newStore(t)
	rs := s.Ralph("loop")
	if err := s.Update(addWorker("w1")); err != nil {
		t.Fatal(err)
	}
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	before := tree(t, s.Root)
	failWrites(t)
	errs := map[string]error{
		"Update":          s.Update(addWorker("w2")),
		"Create":          rs.Create(loopState()),
		"Log":             rs.Log("START", "x"),
		"WriteFileAtomic": WriteFileAtomic(filepath.Join(s.Root, "state.json"), []byte("{}")),
	}
	_, errs["ralph Update"] = rs.Update(func(st *Ralph) error { st.CurrentIteration = 9; return nil })
	for name, err := range errs {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s: err = %v, want ENOSPC", name, err)
		}
	}
	after := tree(t, s.Root)
	delete(after, rs.LogPath()) // Log created the file it failed to write
	sameTree(t, "failed writes", before, after)
	noTemps(t, s.Root, rs.Dir)
	if reg, err := s.Load(); err != nil || strings.Join(names(reg), ",") != "w1" {
		t.Errorf("Load after failures: %v %v", reg, err)
	}
	if st, err := rs.Load(); err != nil || st.CurrentIteration != 0 {
		t.Errorf("ralph Load after failures: %+v %v", st, err)
	}
}
