package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
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
	return &Ralph{LoopConfig: LoopConfig{WorkerName: "loop", PromptFile: "/p", MaxIterations: 3}, LoopProgress: LoopProgress{Status: RalphRunning}}
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

// A state root or a directory in it that group or others can write is
// refused (issue 16, item 2): every operation fails naming it, its mode is
// left alone and nothing is written in it. The opt-in lets it be used.
func TestStateDirWritableByOthersIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode func(root, ralphDir string)
		bad  func(root, ralphDir string) string
	}{
		{"root", func(root, _ string) { os.Chmod(root, 0o777) },
			func(root, _ string) string { return "state root " + root + " is writable by others (mode 0777)" }},
		{"group", func(root, _ string) { os.Chmod(root, 0o770) },
			func(root, _ string) string { return "state root " + root + " is writable by others (mode 0770)" }},
		{"subdirectory", func(_, ralphDir string) { os.Chmod(ralphDir, 0o772) },
			func(_, ralphDir string) string {
				return "state directory " + ralphDir + " is writable by others (mode 0772)"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings := newStore(t)
			if err := s.Update(addWorker("w0")); err != nil {
				t.Fatal(err)
			}
			rs := s.Ralph("loop")
			if err := rs.Create(loopState()); err != nil {
				t.Fatal(err)
			}
			ralphDir := filepath.Dir(rs.Dir)
			tc.mode(s.Root, ralphDir)
			before := tree(t, s.Root)
			want := tc.bad(s.Root, ralphDir)
			ops := map[string]func() error{
				"ralph load":   func() error { _, err := rs.Load(); return err },
				"ralph update": func() error { _, err := rs.Update(func(*Ralph) error { return nil }); return err },
				"ralph create": func() error { return s.Ralph("other").Create(loopState()) },
				"ralph log":    func() error { return rs.Log("PAUSE", "x") },
			}
			if tc.name != "subdirectory" {
				ops["load"] = func() error { _, err := s.Load(); return err }
				ops["update"] = func() error { return s.Update(addWorker("w1")) }
				ops["config"] = func() error { _, err := s.Config(); return err }
				ops["heartbeat"] = func() error {
					_, err := s.Heartbeats().Update("w0", func(*Heartbeat) (*Heartbeat, error) { return &Heartbeat{WorkerName: "w0"}, nil })
					return err
				}
			}
			for name, op := range ops {
				err := op()
				if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: err = %v, want %q", name, err, want)
				}
				if h := hint.Of(err); !strings.Contains(h, "chmod 700") || !strings.Contains(h, TrustSharedRootEnv+"=1") {
					t.Errorf("%s: hint = %q", name, h)
				}
			}
			sameTree(t, "a refused operation", before, tree(t, s.Root))
			if len(*warnings) != 0 {
				t.Errorf("warnings = %q", *warnings)
			}
			// Opted in, the same root works, and its mode is still left alone.
			t.Setenv(TrustSharedRootEnv, "1")
			if err := s.Update(addWorker("w1")); err != nil {
				t.Fatal(err)
			}
			if _, err := rs.Update(func(*Ralph) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if p := perm(t, s.Root); p&othersWrite == 0 && tc.name != "subdirectory" {
				t.Errorf("root mode %v was changed", p)
			}
		})
	}
}

// A state root another user owns is refused, with nothing created in it;
// so is a directory or file of another user's in a root of one's own.
// chown needs root (CI runs as root).
func TestStateRootOfAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a directory to another user (uid 65534)")
	}
	const nobody = 65534
	s, _ := newStore(t)
	if err := os.Chown(s.Root, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("state root %s is owned by another user (uid %d)", s.Root, nobody)
	err := s.Update(addWorker("w"))
	if !errors.Is(err, ErrUnsafe) || err.Error() != want {
		t.Fatalf("update: err = %v, want %q", err, want)
	}
	if _, err := s.Load(); err == nil || err.Error() != want {
		t.Errorf("load: err = %v", err)
	}
	if err := s.Ralph("loop").Create(loopState()); err == nil || err.Error() != want {
		t.Errorf("ralph create: err = %v", err)
	}
	if entries, _ := os.ReadDir(s.Root); len(entries) != 0 {
		t.Errorf("refused root got %d entries", len(entries))
	}

	mine, _ := newStore(t)
	if err := mine.Update(addWorker("w")); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(mine.Root, "state.json")
	os.Chown(state, nobody, nobody)
	if _, err := mine.Load(); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "state file "+state+" is owned by another user") {
		t.Errorf("load of another user's state.json: err = %v", err)
	}
	os.Chown(state, 0, 0)
	rs := mine.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	os.Chown(rs.Dir, nobody, nobody)
	if _, err := rs.Load(); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "state directory "+rs.Dir+" is owned by another user") {
		t.Errorf("load from another user's loop directory: err = %v", err)
	}
}

// A symlinked SWARM_HOME works, and neither it nor its target is chmodded;
// a target others can write is refused like any such root.
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
	if err := s2.Update(addWorker("w2")); err == nil || !strings.Contains(err.Error(), link+" is writable by others") {
		t.Errorf("update under a target others can write: err = %v", err)
	}
	if p := perm(t, target); p != 0o777 {
		t.Errorf("target mode %v, want 0777 left alone", p)
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
		".delivered-prompt.txt.555.tmp":  stale,  // swept by SaveDelivered
		".delivered-prompt.txt.666.tmp":  recent, // kept
		".state.json.corrupted.777.tmp":  stale,  // not state.json's
		".state.json.888.tmp.something":  stale,  // not a temp name
		".state.json.99999999999999.tmp": stale,  // swept
	}
	swept := []string{".state.json.111.tmp", ".delivered-prompt.txt.555.tmp", ".state.json.99999999999999.tmp"}
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
	if _, _, err := rs.SaveDelivered("prompt"); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{s.Root, rs.Dir} {
		for name := range files {
			_, err := os.Stat(filepath.Join(dir, name))
			wantGone := contains(swept, name) && (dir == rs.Dir || !strings.HasPrefix(name, ".delivered"))
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
	if _, _, err := rs.SaveDelivered("first"); err != nil {
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
	_, _, errs["SaveDelivered"] = rs.SaveDelivered("second")
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

func sidecarLines(t *testing.T, path string) []sidecarEntry {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sidecarEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e sidecarEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("sidecar line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// checkWarnings checks that the warnings given start with prefixes, and
// clears them.
func checkWarnings(t *testing.T, warnings *[]string, prefixes ...string) {
	t.Helper()
	ok := len(*warnings) == len(prefixes)
	for i := 0; ok && i < len(prefixes); i++ {
		ok = strings.HasPrefix((*warnings)[i], prefixes[i])
	}
	if !ok {
		t.Errorf("warnings = %q\nwant prefixes %q", *warnings, prefixes)
	}
	*warnings = nil
}

// Reads never change the state, not even for a corrupt file or invalid
// records: they return what they can, with warnings. The one file a read
// may add is the backup of a corrupt registry (state.json.corrupted, as
// swarm.py's ls makes), which holds exactly what state.json holds.
func TestReadsNeverWrite(t *testing.T) {
	cases := map[string]struct{ registry, ralph string }{
		"garbage":  {"{garbage", "{garbage"},
		"invalid":  {`{"workers": [{"name": ""}, {"name": "ok"}, {"name": "ok"}]}`, `{"worker_name": "loop", "max_iterations": "ten"}`},
		"not JSON": {"\x00\x01", "[]"},
		"legacy":   {`[{"name": "ok"}]`, `{"worker_name": "loop", "prompt_file": "/p", "delivered_prompt": "old"}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, warnings := newStore(t)
			rs := s.Ralph("loop")
			if err := rs.Create(loopState()); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(addWorker("ok")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(s.Root, "state.json"), c.registry)
			writeFile(t, rs.StatePath(), c.ralph)
			before := tree(t, s.Root)
			if _, err := s.Load(); err != nil {
				t.Errorf("Load: %v", err)
			}
			s.Get("ok")
			if _, err := NewStore(s.Root, nil).Ralph("loop").Load(); err != nil {
				t.Errorf("ralph Load: %v", err)
			}
			if err := rs.View(func(*Ralph) {}); err != nil {
				t.Errorf("View: %v", err)
			}
			rs.LoadDelivered()
			s.RalphNames()
			after := tree(t, s.Root)
			backup := filepath.Join(s.Root, "state.json.corrupted")
			if b, ok := after[backup]; ok {
				if _, had := before[backup]; !had && !strings.HasSuffix(b, " "+c.registry) {
					t.Errorf("the backup holds %q, not the corrupt file", b)
				}
				if _, had := before[backup]; !had {
					delete(after, backup)
				}
			}
			sameTree(t, "a read", before, after)
			if name != "legacy" && len(*warnings) == 0 {
				t.Error("no warning")
			}
		})
	}
}

// invalidRecords is a state.json whose records 2 to 9 are invalid on their
// own; records 1 and 10 are good.
var invalidRecords = []string{
	`{"name": "good", "status": "running"}`,
	`{"name": ""}`,
	`{"name": "../evil"}`,
	`{"name": "good", "status": "duplicate"}`,
	`{"name": "typed", "pid": "not a number"}`,
	`{"name": "when", "started": 1e13}`,
	`5`,
	`null`,
	`{"status": "running"}`,
	`{"name": "other", "cmd": ["a"]}`,
}

const invalidFirst, invalidLast = 2, 9

func writeInvalidRecords(t *testing.T) (*Store, *[]string, string) {
	t.Helper()
	s, warnings := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	writeFile(t, path, `{"workers": [`+strings.Join(invalidRecords, ",\n")+`]}`)
	return s, warnings, path
}

// A record that is invalid on its own is left out by a read, with a
// warning naming it, and the others load.
func TestInvalidRecordsAreLeftOutOnRead(t *testing.T) {
	s, warnings, path := writeInvalidRecords(t)
	reg, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := names(reg); strings.Join(got, ",") != "good,other" || reg.Workers[0].Status != "running" {
		t.Fatalf("loaded %q (%+v)", got, reg.Workers)
	}
	want := map[int]string{
		2: "ignoring invalid worker record 2 in " + path + ": no name",
		3: `ignoring invalid worker record 3 (name "../evil") in ` + path + `: invalid worker name '../evil'`,
		4: `ignoring invalid worker record 4 (name "good") in ` + path + `: duplicate name (record 1 has it too)`,
		5: `ignoring invalid worker record 5 (name "typed") in ` + path + `: json: cannot unmarshal`,
		6: `ignoring invalid worker record 6 (name "when") in ` + path + `: started is out of range`,
		7: "ignoring invalid worker record 7 in " + path + ": json: cannot unmarshal number",
		8: "ignoring invalid worker record 8 in " + path + ": no name",
		9: "ignoring invalid worker record 9 in " + path + ": no name",
	}
	if len(*warnings) != len(want) {
		t.Fatalf("warnings = %q", *warnings)
	}
	for n := invalidFirst; n <= invalidLast; n++ {
		if got := (*warnings)[n-invalidFirst]; !strings.HasPrefix(got, want[n]) {
			t.Errorf("warning = %q, want %q...", got, want[n])
		}
	}
	s.Load()
	if len(*warnings) != len(want) {
		t.Errorf("a second read warned again: %q", (*warnings)[len(want):])
	}
}

// The next write moves each invalid record to state.json.rejected, once,
// with one warning naming it.
func TestInvalidRecordsAreMovedOnWrite(t *testing.T) {
	s, warnings, path := writeInvalidRecords(t)
	if err := s.Update(addWorker("new")); err != nil {
		t.Fatal(err)
	}
	reg, _ := s.Load()
	if got := names(reg); strings.Join(got, ",") != "good,other,new" {
		t.Errorf("after the write: %q", got)
	}
	moved := invalidLast - invalidFirst + 1
	lines := sidecarLines(t, path+rejectedSuffix)
	if len(lines) != moved || len(*warnings) != moved {
		t.Fatalf("sidecar %d lines, warnings %q; want %d", len(lines), *warnings, moved)
	}
	for i, line := range lines {
		n := invalidFirst + i
		var want bytes.Buffer
		json.Compact(&want, []byte(invalidRecords[n-1]))
		if string(line.Record) != want.String() || line.File != "state.json" || line.RejectedAt.IsZero() {
			t.Errorf("sidecar line %d = %+v, want record %s", i, line, want.String())
		}
		w := (*warnings)[i]
		if !strings.HasPrefix(w, fmt.Sprintf("moved invalid worker record %d", n)) || !strings.Contains(w, "to "+path+rejectedSuffix) {
			t.Errorf("warning %q", w)
		}
	}
	if err := s.Update(addWorker("newer")); err != nil {
		t.Fatal(err)
	}
	if n := len(sidecarLines(t, path+rejectedSuffix)); n != moved || len(*warnings) != moved {
		t.Errorf("second write: %d sidecar lines, warnings %q", n, *warnings)
	}
}

// Backups of corrupt files never overwrite an earlier backup, and never
// follow a symlink planted under the next name.
func TestCorruptBackupsAreNeverOverwritten(t *testing.T) {
	s, _ := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, "keep")
	for _, path := range []string{filepath.Join(s.Root, "state.json"), rs.StatePath()} {
		if err := os.Symlink(victim, path+".corrupted.2"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			writeFile(t, path, fmt.Sprintf("garbage %d", i))
			if err := s.Update(func(*Registry) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := rs.Update(func(*Ralph) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]string{".corrupted": "garbage 0", ".corrupted.1": "garbage 1", ".corrupted.3": "garbage 2"}
		for suffix, content := range want {
			if got := readFile(t, path+suffix); got != content {
				t.Errorf("%s%s = %q, want %q", path, suffix, got, content)
			}
		}
	}
	if got := readFile(t, victim); got != "keep" {
		t.Errorf("a backup followed a symlink: victim = %q", got)
	}
	if reg, err := s.Load(); err != nil || len(reg.Workers) != 0 {
		t.Errorf("after reset: %v %v", reg, err)
	}
	if st, err := rs.Load(); err != nil || st.Status != RalphStopped {
		t.Errorf("ralph after reset: %+v %v", st, err)
	}
}

// An update that fails leaves a corrupt file where it is: a loop state
// must not vanish because its repair was abandoned.
func TestFailedUpdateLeavesCorruptFileInPlace(t *testing.T) {
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(s.Root, "state.json"), rs.StatePath()} {
		writeFile(t, path, "garbage")
	}
	refuse := errors.New("refused")
	if err := s.Update(func(*Registry) error { return refuse }); err != refuse {
		t.Fatalf("Update: %v", err)
	}
	if _, err := rs.Update(func(*Ralph) error { return refuse }); err != refuse {
		t.Fatalf("ralph Update: %v", err)
	}
	for _, path := range []string{filepath.Join(s.Root, "state.json"), rs.StatePath()} {
		if got := readFile(t, path); got != "garbage" {
			t.Errorf("%s = %q", path, got)
		}
		if _, err := os.Stat(path + ".corrupted"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("backup made by a failed update: %v", err)
		}
	}
	if !rs.Exists() || len(*warnings) != 0 {
		t.Errorf("exists=%v warnings=%q", rs.Exists(), *warnings)
	}
}

// On a full disk, a record to be set aside, or a corrupt file to be backed
// up, stays where it was, and no half-written sidecar line or backup is
// left behind.
func TestFullDiskKeepsWhatWouldBeSetAside(t *testing.T) {
	s, _ := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	failWrites(t)
	for _, content := range []string{`{"workers": [{"name": ""}, {"name": "ok"}]}`, "garbage"} {
		writeFile(t, path, content)
		if err := s.Update(addWorker("w")); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s: err = %v", content, err)
		}
		if got := readFile(t, path); got != content {
			t.Errorf("state.json = %q, want %q", got, content)
		}
		if _, err := os.Stat(path + ".corrupted"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("half a backup left: %v", err)
		}
		if b, err := os.ReadFile(path + rejectedSuffix); len(b) != 0 {
			t.Errorf("half a sidecar line left: %q %v", b, err)
		}
	}
}

// A ralph state field of the wrong type is set aside alone: the rest of the
// loop loads, the field takes the fallback's value, and the next write
// moves it to the sidecar.
func TestRalphInvalidFieldIsSetAside(t *testing.T) {
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	bad := `{"worker_name": "loop", "prompt_file": "/p", "max_iterations": "ten", "current_iteration": 4,
		"status": "running", "started": 1e13}`
	writeFile(t, rs.StatePath(), bad)
	st, err := s.Ralph("loop").Load()
	if err != nil || st.MaxIterations != 0 || st.CurrentIteration != 4 || st.PromptFile != "/p" || !st.Started.IsZero() {
		t.Fatalf("Load = %+v, %v", st, err)
	}
	checkWarnings(t, warnings, `ignoring invalid field "max_iterations" of ralph state for 'loop': json: cannot unmarshal`,
		`ignoring invalid field "started" of ralph state for 'loop': started is out of range`)
	rs.KeepFallback(&Ralph{LoopConfig: LoopConfig{WorkerName: "loop", PromptFile: "/p", MaxIterations: 9}})
	st, err = rs.Update(func(*Ralph) error { return nil })
	if err != nil || st.MaxIterations != 9 || st.CurrentIteration != 4 {
		t.Fatalf("Update = %+v, %v", st, err)
	}
	lines := sidecarLines(t, rs.StatePath()+rejectedSuffix)
	if len(lines) != 2 || string(lines[0].Record) != `{"max_iterations":"ten"}` || string(lines[1].Record) != `{"started":1e13}` {
		t.Errorf("sidecar = %+v", lines)
	}
	checkWarnings(t, warnings, `moved invalid field "max_iterations" of ralph state for 'loop' to `+rs.StatePath()+rejectedSuffix,
		`moved invalid field "started" of ralph state for 'loop' to `)
	if st, err := NewStore(s.Root, nil).Ralph("loop").Load(); err != nil || st.MaxIterations != 9 {
		t.Errorf("reload = %+v, %v", st, err)
	}
}

// A read-only warning is given once per content of the file: a command that
// reads it again is quiet, a monitor whose file breaks anew is told.
func TestReadWarningsOncePerContent(t *testing.T) {
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	rs.KeepFallback(loopState())
	for _, content := range []string{"garbage", "garbage", "other garbage"} {
		writeFile(t, rs.StatePath(), content)
		st, err := rs.Load()
		if err != nil || st.PromptFile != "/p" {
			t.Fatalf("Load = %+v, %v", st, err)
		}
	}
	want := "corrupt ralph state for 'loop', using the last good copy (the next change backs it up and resets it)"
	if len(*warnings) != 2 || (*warnings)[0] != want || (*warnings)[1] != want {
		t.Errorf("warnings = %q", *warnings)
	}
	if names, err := s.RalphNames(); err != nil || len(names) != 1 {
		t.Errorf("names = %q, %v", names, err)
	}
}

// The delivered prompt lives in its own file; the state holds its hash and
// size, and stays small however large the prompt.
func TestDeliveredPromptFile(t *testing.T) {
	s, _ := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.LoadDelivered(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no prompt yet: err = %v", err)
	}
	prompt := strings.Repeat("do the work\n", 100000)
	st, err := rs.Update(func(st *Ralph) error {
		sum, n, err := rs.SaveDelivered(prompt)
		st.PromptSHA256, st.PromptBytes = sum, n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.PromptSHA256 != sha256Hex([]byte(prompt)) || st.PromptBytes != len(prompt) {
		t.Errorf("sum %s size %d", st.PromptSHA256, st.PromptBytes)
	}
	if p := perm(t, rs.DeliveredPromptPath()); p != 0o600 {
		t.Errorf("mode %v", p)
	}
	data := readFile(t, rs.StatePath())
	if len(data) > 4096 || strings.Contains(data, "delivered_prompt") || !strings.Contains(data, `"prompt_sha256": "`+st.PromptSHA256) {
		t.Errorf("state.json (%d bytes):\n%.2000s", len(data), data)
	}
	if got, err := rs.LoadDelivered(); err != nil || got != prompt {
		t.Errorf("LoadDelivered = %d bytes, %v", len(got), err)
	}
	writeFile(t, rs.DeliveredPromptPath(), "another iteration's prompt")
	if _, err := rs.LoadDelivered(); err == nil || !strings.Contains(err.Error(), "is not the prompt of the current iteration") {
		t.Errorf("mismatch: err = %v", err)
	}
}

// A state written by an older swarm, with the prompt inside, still works:
// LoadDelivered returns it, and the next locked write moves it out.
func TestLegacyDeliveredPromptIsMigrated(t *testing.T) {
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if err := rs.Create(loopState()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, rs.StatePath(), `{"worker_name": "loop", "prompt_file": "/p", "max_iterations": 3, "status": "running",
		"iteration_active": true, "prompt_delivered": true, "delivered_prompt": "old prompt"}`)
	if st, err := rs.Load(); err != nil || st.MaxIterations != 3 || !st.IterationActive {
		t.Fatalf("Load = %+v, %v", st, err)
	}
	if got, err := rs.LoadDelivered(); err != nil || got != "old prompt" {
		t.Errorf("LoadDelivered before migration = %q, %v", got, err)
	}
	st, err := rs.Update(func(*Ralph) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	data := readFile(t, rs.StatePath())
	if strings.Contains(data, "delivered_prompt") || st.PromptSHA256 != sha256Hex([]byte("old prompt")) || st.PromptBytes != len("old prompt") {
		t.Errorf("after migration: %+v\n%s", st, data)
	}
	if got := readFile(t, rs.DeliveredPromptPath()); got != "old prompt" {
		t.Errorf("delivered file = %q", got)
	}
	if got, err := rs.LoadDelivered(); err != nil || got != "old prompt" {
		t.Errorf("LoadDelivered after migration = %q, %v", got, err)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings = %q", *warnings)
	}
	// An iteration claimed by the first update after an upgrade keeps
	// its own prompt, not the old one.
	writeFile(t, rs.StatePath(), `{"worker_name": "loop", "prompt_file": "/p", "delivered_prompt": "old prompt"}`)
	st, err = rs.Update(func(st *Ralph) error {
		sum, n, err := rs.SaveDelivered("new prompt")
		st.PromptSHA256, st.PromptBytes = sum, n
		return err
	})
	if got, lerr := rs.LoadDelivered(); err != nil || lerr != nil || got != "new prompt" || st.PromptBytes != len("new prompt") {
		t.Errorf("claim after upgrade: LoadDelivered = %q, %v, %v", got, lerr, err)
	}
}

// Readers that take no lock, looking at a corrupt state file at the same
// time (each as its own process would, with its own Store), make one
// backup of it between them, and leave no temp file behind.
func TestConcurrentLoadsOfCorruptStateMakeOneBackup(t *testing.T) {
	s, _ := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	for round, content := range []string{"garbage 0", "garbage 1"} {
		writeFile(t, path, content)
		const readers = 16
		start := make(chan struct{})
		errs := make(chan error, readers)
		for i := 0; i < readers; i++ {
			go func() {
				<-start
				_, err := NewStore(s.Root, func(string) {}).Load()
				errs <- err
			}()
		}
		close(start)
		for i := 0; i < readers; i++ {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		backups, _ := filepath.Glob(path + ".corrupted*")
		if len(backups) != round+1 {
			t.Fatalf("round %d: backups %q, want %d", round, backups, round+1)
		}
		name := path + ".corrupted"
		if round > 0 {
			name += fmt.Sprintf(".%d", round)
		}
		if got := readFile(t, name); got != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if temps, _ := filepath.Glob(filepath.Join(s.Root, ".state.json.*")); len(temps) != 0 {
		t.Errorf("temp files left: %q", temps)
	}
}

// A store that has backed up a content of a corrupt state file does not
// look for the backup again at its next read (a monitor reads every tick);
// another store (another process) does, and makes it again if it is gone.
func TestLoadBacksUpOneContentOncePerStore(t *testing.T) {
	s, warnings := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	writeFile(t, path, "garbage")
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path+".corrupted"); got != "garbage" {
		t.Fatalf("backup = %q", got)
	}
	os.Remove(path + ".corrupted")
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + ".corrupted"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the same store backed the same content up again: %v", err)
	}
	if len(*warnings) != 1 {
		t.Errorf("warnings = %q", *warnings)
	}
	if _, err := NewStore(s.Root, nil).Load(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path+".corrupted"); got != "garbage" {
		t.Errorf("backup by another store = %q", got)
	}
	// A new content is backed up by the first store too.
	writeFile(t, path, "other garbage")
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path+".corrupted.1"); got != "other garbage" {
		t.Errorf("backup of a new content = %q", got)
	}
}

// A symlink under a backup's name is never taken for the backup, even when
// what it points to holds the same content.
func TestCorruptBackupIgnoresSymlinkWithSameContent(t *testing.T) {
	s, _ := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	writeFile(t, path, "garbage")
	decoy := filepath.Join(t.TempDir(), "decoy")
	writeFile(t, decoy, "garbage")
	if err := os.Symlink(decoy, path+".corrupted"); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(*Registry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path + ".corrupted.1"); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("backup: %v %v", fi, err)
	}
	if got := readFile(t, path+".corrupted.1"); got != "garbage" {
		t.Errorf("backup = %q", got)
	}
}
