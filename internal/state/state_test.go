package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newStore(t *testing.T) (*Store, *[]string) {
	t.Helper()
	var warnings []string
	var mu sync.Mutex
	s := NewStore(t.TempDir(), func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() })
	return s, &warnings
}

func TestRootPrecedence(t *testing.T) {
	t.Setenv("SWARM_HOME", "")
	t.Setenv("SWARM_DIR", "")
	t.Setenv("HOME", "/home/someone")
	if got, _ := Root(); got != "/home/someone/.swarm" {
		t.Errorf("default root = %q", got)
	}
	t.Setenv("SWARM_DIR", "/tmp/dir-root")
	if got, _ := Root(); got != "/tmp/dir-root" {
		t.Errorf("SWARM_DIR root = %q", got)
	}
	t.Setenv("SWARM_HOME", "relative/home")
	got, _ := Root()
	if !filepath.IsAbs(got) || !strings.HasSuffix(got, "relative/home") {
		t.Errorf("SWARM_HOME root = %q, want absolute", got)
	}
}

func TestDefaultSession(t *testing.T) {
	a, b := DefaultSession("/a"), DefaultSession("/b")
	if a == b || !strings.HasPrefix(a, "swarm-") || len(a) != len("swarm-")+8 {
		t.Errorf("sessions %q %q", a, b)
	}
	if DefaultSession("/a") != a {
		t.Error("not deterministic")
	}
}

func TestUpdateWritesAtomicallyWithPermissions(t *testing.T) {
	// A root swarm creates itself: an existing one keeps its mode.
	s := NewStore(filepath.Join(t.TempDir(), "home"), nil)
	err := s.Update(func(r *Registry) error {
		r.Workers = append(r.Workers, Worker{Name: "w1", Status: StatusRunning, Started: Now()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(s.Root, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state.json mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(s.Root)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("root mode %v, want 0700", di.Mode().Perm())
	}
	entries, _ := os.ReadDir(s.Root)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	data, _ := os.ReadFile(filepath.Join(s.Root, "state.json"))
	for _, key := range []string{`"cmd": []`, `"env": {}`, `"tags": []`, `"tmux": null`, `"worktree": null`, `"pid": null`, `"metadata": {}`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("state.json lacks %s:\n%s", key, data)
		}
	}
}

func TestFailedUpdateChangesNothing(t *testing.T) {
	s, _ := newStore(t)
	s.Update(func(r *Registry) error { r.Workers = append(r.Workers, Worker{Name: "keep"}); return nil })
	before, _ := os.ReadFile(filepath.Join(s.Root, "state.json"))
	err := s.Update(func(r *Registry) error {
		r.Workers = nil
		return fmt.Errorf("refused")
	})
	if err == nil || err.Error() != "refused" {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(s.Root, "state.json"))
	if string(before) != string(after) {
		t.Error("failed update changed the file")
	}
}

// Concurrent writers must never lose each other's records (swarm.py's
// failure 11). Each goroutine uses its own flock, as separate processes do.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	s, _ := newStore(t)
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			st := NewStore(s.Root, nil)
			if err := st.Update(func(r *Registry) error {
				r.Workers = append(r.Workers, Worker{Name: fmt.Sprintf("w%d", i)})
				return nil
			}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	reg, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Workers) != n {
		t.Fatalf("%d records, want %d", len(reg.Workers), n)
	}
}

// A corrupt file is backed up by the first read (as swarm.py's ls does:
// state.json.corrupted) but left in place, with a warning; the next write
// resets it, without a second copy of the same content.
func TestCorruptStateIsBackedUpAndReset(t *testing.T) {
	s, warnings := newStore(t)
	path := filepath.Join(s.Root, "state.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	for i := 0; i < 2; i++ {
		reg, err := NewStore(s.Root, s.Warn).Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(reg.Workers) != 0 {
			t.Errorf("workers = %v", reg.Workers)
		}
	}
	want := "corrupt state file " + path + " (backed up to " + path + ".corrupted), read as empty; the next change resets it"
	if len(*warnings) == 0 || (*warnings)[0] != want {
		t.Errorf("warnings = %q", *warnings)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{not json" {
		t.Errorf("a read changed the state file: %q, %v", b, err)
	}
	if b, err := os.ReadFile(path + ".corrupted"); err != nil || string(b) != "{not json" {
		t.Errorf("backup after a read = %q, %v", b, err)
	}
	*warnings = nil
	if err := s.Update(func(r *Registry) error { r.Workers = append(r.Workers, Worker{Name: "next"}); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(*warnings) != 1 || (*warnings)[0] != "corrupt state file, resetting" {
		t.Errorf("warnings = %q", *warnings)
	}
	if b, err := os.ReadFile(path + ".corrupted"); err != nil || string(b) != "{not json" {
		t.Errorf("backup = %q, %v", b, err)
	}
	if _, err := os.Stat(path + ".corrupted.1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the same content was backed up twice: %v", err)
	}
	if w, err := s.Get("next"); err != nil || w.Name != "next" {
		t.Errorf("Get after reset: %v %v", w, err)
	}
}

func TestReadsPythonRecords(t *testing.T) {
	s, _ := newStore(t)
	py := `{"workers": [{"name": "agent", "status": "running", "cmd": ["claude"],
	  "started": "2024-01-15T10:30:00.123456", "cwd": "/repo", "env": {"K": "v"},
	  "tags": ["team-a"], "tmux": {"session": "swarm", "window": "agent", "socket": null},
	  "worktree": {"path": "/repo-worktrees/agent", "branch": "agent", "base_repo": "/repo"},
	  "pid": null, "metadata": {"ralph": true, "ralph_iteration": 5}}]}`
	os.WriteFile(filepath.Join(s.Root, "state.json"), []byte(py), 0o600)
	w, err := s.Get("agent")
	if err != nil {
		t.Fatal(err)
	}
	if w.Started.Year() != 2024 || w.Started.Hour() != 10 || w.Tmux.Session != "swarm" || w.Tmux.Socket != "" {
		t.Errorf("record = %+v %+v", w, w.Tmux)
	}
	if !w.IsRalph() || w.Worktree.BaseRepo != "/repo" || w.Env["K"] != "v" {
		t.Errorf("record = %+v", w)
	}
	// Round trip keeps the record.
	if err := s.Update(func(r *Registry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	w2, _ := s.Get("agent")
	if !w2.Started.Equal(w.Started.Time) || w2.Metadata["ralph_iteration"].(float64) != 5 {
		t.Errorf("round trip = %+v", w2)
	}
}

func TestTimestampFormats(t *testing.T) {
	for _, in := range []string{"2024-01-15T10:30:00Z", "2024-01-15T10:30:00.5+02:00", "2024-01-15T10:30:00", "2024-01-15 10:30:00.000001"} {
		if _, err := ParseTimestamp(in); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	var ts Timestamp
	if err := ts.UnmarshalJSON([]byte("1700000000.5")); err != nil || ts.Unix() != 1700000000 {
		t.Errorf("unix: %v %v", ts, err)
	}
	if err := ts.UnmarshalJSON([]byte(`"garbage"`)); err == nil {
		t.Error("garbage accepted")
	}
	if (Timestamp{}).Human() != "-" {
		t.Error("zero human")
	}
}

func TestRalphStoreUpdateAndLog(t *testing.T) {
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if _, err := rs.Load(); err == nil {
		t.Fatal("Load of missing state succeeded")
	}
	if err := rs.Create(&Ralph{LoopConfig: LoopConfig{WorkerName: "loop", PromptFile: "/p", MaxIterations: 3}, LoopProgress: LoopProgress{Status: RalphRunning}}); err != nil {
		t.Fatal(err)
	}
	// A pause written by another process survives the monitor's update.
	NewStore(s.Root, nil).Ralph("loop").Update(func(r *Ralph) error { r.Status = RalphPaused; return nil })
	st, err := rs.Update(func(r *Ralph) error { r.CurrentIteration++; return nil })
	if err != nil || st.Status != RalphPaused || st.CurrentIteration != 1 {
		t.Fatalf("update = %+v, %v", st, err)
	}
	rs.Log("START", "iteration 1/3")
	rs.Log("END", "iteration 1 exit=0 duration=1s")
	data, _ := os.ReadFile(rs.LogPath())
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], " [START] iteration 1/3") {
		t.Errorf("log = %q", lines)
	}
	if _, err := time.ParseInLocation(LogTimeLayout, strings.Fields(lines[0])[0], time.Local); err != nil {
		t.Errorf("log timestamp: %v", err)
	}
	// Corruption: rebuilt from the fallback, with a warning.
	rs.KeepFallback(st)
	rs.Update(func(r *Ralph) error { r.CurrentIteration = 7; return nil })
	os.WriteFile(rs.StatePath(), []byte("garbage"), 0o600)
	st, err = rs.Update(func(r *Ralph) error { return nil })
	if err != nil || st.PromptFile != "/p" || st.MaxIterations != 3 || st.CurrentIteration != 7 {
		t.Fatalf("after corruption = %+v, %v", st, err)
	}
	if len(*warnings) != 1 || (*warnings)[0] != "corrupt ralph state for 'loop', resetting" {
		t.Errorf("warnings = %q", *warnings)
	}
	// Without a fallback the loop is marked ended rather than crashing.
	os.WriteFile(rs.StatePath(), []byte("{"), 0o600)
	st2, err := s.Ralph("loop").Load()
	if err != nil || st2.Status != RalphStopped {
		t.Errorf("no-fallback reset = %+v, %v", st2, err)
	}
	names, _ := s.RalphNames()
	if len(names) != 1 || names[0] != "loop" {
		t.Errorf("names = %v", names)
	}
}

// ActiveOrUnreadable: running, paused or waiting out a limit, or a state
// that cannot be read;
// never a write, never a warning.
func TestRalphActiveOrUnreadable(t *testing.T) {
	t.Parallel()
	var warned []string
	s := NewStore(t.TempDir(), func(m string) { warned = append(warned, m) })
	r := s.Ralph("w")
	if r.ActiveOrUnreadable() {
		t.Error("no state file counts as active")
	}
	if s.Ralph("../x").ActiveOrUnreadable() {
		t.Error("an invalid name counts as active")
	}
	os.MkdirAll(r.Dir, 0o700)
	for content, want := range map[string]bool{
		`{"status": "running"}`: true, `{"status": "paused"}`: true,
		`{"status": "stopped"}`: false, `{"status": "failed"}`: false, `{"status": "waiting"}`: true,
		`{not json`: true, `[]`: true, `{"status": 5}`: true, `null`: false,
	} {
		os.WriteFile(r.StatePath(), []byte(content), 0o600)
		if got := r.ActiveOrUnreadable(); got != want {
			t.Errorf("%s: %v, want %v", content, got, want)
		}
		if data, _ := os.ReadFile(r.StatePath()); string(data) != content {
			t.Errorf("%s: the file became %q", content, data)
		}
	}
	if backups, _ := filepath.Glob(r.StatePath() + ".*"); len(backups) != 0 || len(warned) != 0 {
		t.Errorf("backups %v, warnings %q", backups, warned)
	}
	os.Remove(r.StatePath())
	os.Mkdir(r.StatePath(), 0o700) // unreadable: a directory
	if !r.ActiveOrUnreadable() {
		t.Error("an unreadable state does not count as active")
	}
}

// config.json: missing is an empty config, invalid JSON an error.
func TestConfig(t *testing.T) {
	s, _ := newStore(t)
	if c, err := s.Config(); err != nil || c.OnExit != "" || c.Notify != nil {
		t.Fatalf("missing config = %+v, %v", c, err)
	}
	os.WriteFile(s.ConfigPath(), []byte(`{"on_exit": "echo done"}`), 0o600)
	if c, err := s.Config(); err != nil || c.OnExit != "echo done" {
		t.Fatalf("config = %+v, %v", c, err)
	}
	os.WriteFile(s.ConfigPath(), []byte(`{on_exit`), 0o600)
	if _, err := s.Config(); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Fatalf("invalid config: %v", err)
	}
}
