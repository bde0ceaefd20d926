package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A file exactly as swarm.py's save_heartbeat_state writes it.
const pythonHeartbeat = `{
  "worker_name": "builder",
  "interval_seconds": 14400,
  "message": "continue",
  "expire_at": "2026-02-05T02:00:00.123456+00:00",
  "created_at": "2026-02-04T02:00:00.123456+00:00",
  "last_beat_at": null,
  "beat_count": 0,
  "status": "active",
  "monitor_pid": 12345
}`

func TestHeartbeatReadPythonFile(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	os.MkdirAll(s.Dir(), 0o700)
	os.WriteFile(s.Path("builder"), []byte(pythonHeartbeat), 0o600)
	st, err := s.Load("builder")
	if err != nil || st == nil {
		t.Fatalf("Load = %v, %v", st, err)
	}
	if st.WorkerName != "builder" || st.Interval() != 4*time.Hour || st.Message != "continue" ||
		st.BeatCount != 0 || st.Status != HeartbeatActive || st.MonitorPID == nil || *st.MonitorPID != 12345 ||
		st.LastBeatAt != "" {
		t.Fatalf("decoded %+v", st)
	}
	exp, ok := st.ExpireAt.Time()
	if !ok || !exp.Equal(time.Date(2026, 2, 5, 2, 0, 0, 123456000, time.UTC)) {
		t.Fatalf("expire_at = %v %v", exp, ok)
	}
}

func TestHeartbeatMissingKeysTakeSwarmPyDefaults(t *testing.T) {
	t.Parallel()
	st, err := decodeHeartbeat([]byte(`{"worker_name": "w", "interval_seconds": 60}`))
	if err != nil {
		t.Fatal(err)
	}
	if st.Message != HeartbeatDefaultMessage || st.Status != HeartbeatActive || st.BeatCount != 0 {
		t.Fatalf("defaults: %+v", st)
	}
	for _, bad := range []string{`{`, `[]`, `{"interval_seconds": 5}`, `{"worker_name": 3}`} {
		if _, err := decodeHeartbeat([]byte(bad)); err == nil {
			t.Errorf("decodeHeartbeat(%s) accepted", bad)
		}
	}
}

// The file keeps swarm.py's keys, in its order, before swarm's additions,
// and its timestamps in swarm.py's form.
func TestHeartbeatWriteFormat(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := NewStore(root, nil).Heartbeats()
	now := time.Date(2026, 2, 4, 2, 0, 0, 5000, time.FixedZone("X", 3600))
	st := &Heartbeat{WorkerName: "w", IntervalSeconds: 14400, Message: "a <b> & c", CreatedAt: StampOf(now), Status: HeartbeatActive}
	if _, err := s.Update("w", func(*Heartbeat) (*Heartbeat, error) { return st, nil }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path("w"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	keys := []string{"worker_name", "interval_seconds", "message", "expire_at", "created_at",
		"last_beat_at", "beat_count", "status", "monitor_pid", "next_beat_at"}
	last := -1
	for _, k := range keys {
		i := strings.Index(text, `"`+k+`"`)
		if i < 0 || i < last {
			t.Fatalf("key %s missing or out of order in\n%s", k, text)
		}
		last = i
	}
	for _, want := range []string{
		`"interval_seconds": 14400,`, `"created_at": "2026-02-04T01:00:00.000005+00:00"`,
		`"expire_at": null`, `"monitor_pid": null`, `"message": "a <b> & c"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("file lacks %s:\n%s", want, text)
		}
	}
	for path, perm := range map[string]os.FileMode{s.Path("w"): 0o600, s.Dir(): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != perm {
			t.Errorf("%s: mode %v, want %v (%v)", path, fi.Mode().Perm(), perm, err)
		}
	}
	back, err := s.Load("w")
	if err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, st)
	}
}

// The whole file, byte for byte, as swarm writes it (swarm.py reads it):
// every field set, and every field empty. A stamp goes through
// encoding/json's HTML escaping, a message does not.
func TestHeartbeatWriteGolden(t *testing.T) {
	t.Parallel()
	pid := 4242
	now := time.Date(2026, 2, 4, 2, 0, 0, 0, time.FixedZone("X", -5*3600))
	full := &Heartbeat{WorkerName: "w", IntervalSeconds: 0.25, Message: "fix <a> & \"b\"\né\u2028",
		ExpireAt: StampOf(now.Add(time.Hour)), CreatedAt: StampOf(now), LastBeatAt: "2026-02-04T02:00:00<&>",
		BeatCount: 7, Status: HeartbeatPaused, MonitorPID: &pid, NextBeatAt: StampOf(now.Add(123456789 * time.Nanosecond)),
		PausedAt: "garbage", MonitorStarted: StampOf(now), SkipCount: 3}
	fullFile := "{\n  \"worker_name\": \"w\",\n  \"interval_seconds\": 0.25,\n" +
		"  \"message\": \"fix <a> & \\\"b\\\"\\né\\u2028\",\n" +
		"  \"expire_at\": \"2026-02-04T08:00:00.000000+00:00\",\n" +
		"  \"created_at\": \"2026-02-04T07:00:00.000000+00:00\",\n" +
		"  \"last_beat_at\": \"2026-02-04T02:00:00\\u003c\\u0026\\u003e\",\n" +
		"  \"beat_count\": 7,\n  \"status\": \"paused\",\n  \"monitor_pid\": 4242,\n" +
		"  \"next_beat_at\": \"2026-02-04T07:00:00.123456+00:00\",\n  \"paused_at\": \"garbage\",\n" +
		"  \"monitor_started\": \"2026-02-04T07:00:00.000000+00:00\",\n  \"skip_count\": 3\n}\n"
	emptyFile := `{
  "worker_name": "w",
  "interval_seconds": 0,
  "message": "",
  "expire_at": null,
  "created_at": null,
  "last_beat_at": null,
  "beat_count": 0,
  "status": "",
  "monitor_pid": null,
  "next_beat_at": null,
  "paused_at": null,
  "monitor_started": null,
  "skip_count": 0
}
`
	for _, c := range []struct {
		st   *Heartbeat
		want string
	}{{full, fullFile}, {&Heartbeat{WorkerName: "w"}, emptyFile}} {
		s := NewStore(t.TempDir(), nil).Heartbeats()
		if _, err := s.Update("w", func(*Heartbeat) (*Heartbeat, error) { return c.st, nil }); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(s.Path("w")); err != nil || string(data) != c.want {
			t.Errorf("file:\n%q\nwant:\n%q (%v)", data, c.want, err)
		}
	}
}

func TestHeartbeatSubSecondInterval(t *testing.T) {
	t.Parallel()
	st, err := decodeHeartbeat([]byte(`{"worker_name": "w", "interval_seconds": 0.5}`))
	if err != nil || st.Interval() != 500*time.Millisecond {
		t.Fatalf("%v %v", st, err)
	}
}

func TestHeartbeatUpdateIsReadModifyWrite(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	s.Update("w", func(*Heartbeat) (*Heartbeat, error) {
		return &Heartbeat{WorkerName: "w", IntervalSeconds: 1, Message: "m", Status: HeartbeatActive}, nil
	})
	const n = 20
	done := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := s.Update("w", func(cur *Heartbeat) (*Heartbeat, error) { cur.BeatCount++; return cur, nil })
			done <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := s.Load("w"); st.BeatCount != n {
		t.Fatalf("beat_count %d after %d concurrent increments", st.BeatCount, n)
	}
	// Returning nil writes nothing.
	st, err := s.Update("w", func(cur *Heartbeat) (*Heartbeat, error) { cur.BeatCount = 99; return nil, nil })
	if err != nil || st.BeatCount != 99 {
		t.Fatalf("Update returned %v %v", st, err)
	}
	if back, _ := s.Load("w"); back.BeatCount != n {
		t.Fatalf("a nil return wrote the state: %d", back.BeatCount)
	}
}

func TestHeartbeatCorruptFileBackedUp(t *testing.T) {
	t.Parallel()
	var warned []string
	s := NewStore(t.TempDir(), func(m string) { warned = append(warned, m) }).Heartbeats()
	os.MkdirAll(s.Dir(), 0o700)
	os.WriteFile(s.Path("w"), []byte("{not json"), 0o600)
	if _, err := s.Load("w"); err == nil {
		t.Fatal("Load of a corrupt file succeeded")
	}
	var seen *Heartbeat
	_, err := s.Update("w", func(cur *Heartbeat) (*Heartbeat, error) { seen = cur; return nil, nil })
	if err != nil || seen != nil {
		t.Fatalf("Update on corrupt: cur=%v err=%v", seen, err)
	}
	if data, _ := os.ReadFile(s.Path("w") + ".corrupted"); string(data) != "{not json" {
		t.Fatalf("backup: %q", data)
	}
	if len(warned) != 1 || warned[0] != "corrupt heartbeat state for 'w', resetting" {
		t.Fatalf("warnings %q", warned)
	}
	// Moved aside, as swarm.py does: the heartbeat is gone, not corrupt.
	if st, err := s.Load("w"); st != nil || err != nil {
		t.Fatalf("Load after the reset = %v, %v", st, err)
	}
	if !errors.Is(func() error { _, err := decodeHeartbeat([]byte("{")); return err }(), ErrCorruptHeartbeat) {
		t.Error("a corrupt file is not ErrCorruptHeartbeat")
	}
	// A later corruption of other content never overwrites the first
	// backup; the same content again is not copied twice.
	for _, content := range []string{"second", "second", "{not json"} {
		os.WriteFile(s.Path("w"), []byte(content), 0o600)
		if _, err := s.Update("w", func(*Heartbeat) (*Heartbeat, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	backups, _ := filepath.Glob(s.Path("w") + ".corrupted*")
	if len(backups) != 2 {
		t.Fatalf("backups %v", backups)
	}
	if data, _ := os.ReadFile(s.Path("w") + ".corrupted.1"); string(data) != "second" {
		t.Fatalf("second backup: %q", data)
	}
	if len(warned) != 4 {
		t.Fatalf("warnings %q", warned)
	}
}

// The control lock serialises its holders, and is not the lock of the
// state file: Update works while it is held.
func TestHeartbeatControlLock(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	if err := s.WithControlLock("../x", func() error { return nil }); err == nil {
		t.Error("WithControlLock accepted an invalid name")
	}
	var inside atomic.Int32
	var overlap atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.WithControlLock("w", func() error {
				if inside.Add(1) != 1 {
					overlap.Store(true)
				}
				defer inside.Add(-1)
				time.Sleep(5 * time.Millisecond)
				_, err := s.Update("w", func(cur *Heartbeat) (*Heartbeat, error) {
					if cur == nil {
						cur = &Heartbeat{WorkerName: "w"}
					}
					cur.BeatCount++
					return cur, nil
				})
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if overlap.Load() {
		t.Error("two holders at once")
	}
	if st, _ := s.Load("w"); st == nil || st.BeatCount != 8 {
		t.Errorf("state %+v", st)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "w.control.lock")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root, "heartbeat.lock")); err != nil {
		t.Error(err)
	}
}

func TestHeartbeatListSortsAndSkipsJunk(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	for _, n := range []string{"zeta", "alpha", "mid"} {
		s.Update(n, func(*Heartbeat) (*Heartbeat, error) {
			return &Heartbeat{WorkerName: n, IntervalSeconds: 60, Message: "m", Status: HeartbeatActive}, nil
		})
	}
	os.WriteFile(filepath.Join(s.Dir(), "bad.json"), []byte("{"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), "alpha.lock"), nil, 0o600)
	os.WriteFile(filepath.Join(s.Dir(), "..json"), []byte(`{"worker_name":"x","interval_seconds":1}`), 0o600)
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range list {
		names = append(names, st.WorkerName)
	}
	if strings.Join(names, ",") != "alpha,mid,zeta" {
		t.Fatalf("List = %v", names)
	}
	if err := s.Remove("mid"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Load("mid"); st != nil {
		t.Fatal("Remove left the state")
	}
	empty, err := NewStore(t.TempDir(), nil).Heartbeats().List()
	if err != nil || len(empty) != 0 {
		t.Fatalf("List of nothing = %v %v", empty, err)
	}
}

func TestHeartbeatInvalidNamesNeverBecomePaths(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	for _, n := range []string{"../x", "a/b", "..", "-x", "123"} {
		if _, err := s.Load(n); err == nil {
			t.Errorf("Load(%q) accepted", n)
		}
		if _, err := s.Update(n, func(*Heartbeat) (*Heartbeat, error) { return &Heartbeat{}, nil }); err == nil {
			t.Errorf("Update(%q) accepted", n)
		}
		if err := s.Remove(n); err == nil {
			t.Errorf("Remove(%q) accepted", n)
		}
	}
}

func TestHeartbeatStampNull(t *testing.T) {
	t.Parallel()
	var v struct {
		A Stamp `json:"a"`
		B Stamp `json:"b"`
	}
	if err := json.Unmarshal([]byte(`{"a": null, "b": "2026-01-01T00:00:00Z"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != "" || v.B != "2026-01-01T00:00:00Z" {
		t.Fatalf("%+v", v)
	}
	if _, ok := Stamp("garbage").Time(); ok {
		t.Error("garbage parsed")
	}
	if tm, ok := Stamp("2026-01-01T10:00:00").Time(); !ok || tm.Location() != time.Local {
		t.Error("a zone-less stamp is local time")
	}
}

// A locked write sweeps the stale temp files of its own file, as every
// state write does; a fresh one and other workers' stay.
func TestHeartbeatWriteSweepsStaleTemps(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil).Heartbeats()
	os.MkdirAll(s.Dir(), 0o700)
	stale := time.Now().Add(-2 * staleTempAge)
	files := map[string]bool{".w.json.111.tmp": true, ".w.json.222.tmp": false, ".v.json.333.tmp": false}
	for name, swept := range files {
		p := filepath.Join(s.Dir(), name)
		os.WriteFile(p, []byte("partial"), 0o600)
		if swept || name == ".v.json.333.tmp" {
			os.Chtimes(p, stale, stale)
		}
	}
	if _, err := s.Update("w", func(*Heartbeat) (*Heartbeat, error) { return &Heartbeat{WorkerName: "w"}, nil }); err != nil {
		t.Fatal(err)
	}
	for name, swept := range files {
		_, err := os.Stat(filepath.Join(s.Dir(), name))
		if gone := errors.Is(err, os.ErrNotExist); gone != swept {
			t.Errorf("%s: removed=%v, want %v", name, gone, swept)
		}
	}
}
