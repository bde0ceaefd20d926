package heartbeat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func seed(t *testing.T, root string, edit func(*State)) *Store {
	t.Helper()
	s := NewStore(root, nil)
	st := &State{WorkerName: "w", IntervalSeconds: 3600, Message: "continue", Status: StatusActive, CreatedAt: StampOf(t0)}
	if edit != nil {
		edit(st)
	}
	if _, err := s.Update("w", func(*State) (*State, error) { return st, nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func wantErr(t *testing.T, err error, kind Kind, msg string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) || he.Kind != kind || he.Msg != msg {
		t.Fatalf("error %v, want %q", err, msg)
	}
}

func TestPauseMessages(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	wantErr(t, Pause(root, "w"), KindNoHeartbeat, "No heartbeat found for w")
	s := seed(t, root, func(st *State) { st.NextBeatAt = StampOf(t0.Add(time.Hour)) })
	before := time.Now()
	if err := Pause(root, "w"); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Load("w")
	at, ok := st.PausedAt.Time()
	if st.Status != StatusPaused || !ok || at.Before(before.Add(-time.Second)) || st.NextBeatAt != "" {
		t.Fatalf("paused state %+v", st)
	}
	wantErr(t, Pause(root, "w"), KindNotActive, "Heartbeat for w is not active (status: paused)")
	for _, status := range []string{StatusStopped, StatusExpired} {
		seed(t, root, func(st *State) { st.Status = status })
		wantErr(t, Pause(root, "w"), KindNotActive, "Heartbeat for w is not active (status: "+status+")")
	}
	if err := Pause(root, "../w"); err == nil {
		t.Fatal("invalid name accepted")
	}
}

// Resume refuses before it would start anything.
func TestResumeRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	wantErr(t, Resume(root, "w", StartOptions{}), KindNoHeartbeat, "No heartbeat found for w")
	for _, status := range []string{StatusStopped, StatusExpired} {
		seed(t, root, func(st *State) { st.Status = status })
		wantErr(t, Resume(root, "w", StartOptions{}), KindNotPaused, "Heartbeat for w is not paused (status: "+status+")")
	}
	// Active without a process, past its expiry: marked expired, refused.
	s := seed(t, root, func(st *State) { st.ExpireAt = StampOf(time.Now().Add(-time.Minute)) })
	wantErr(t, Resume(root, "w", StartOptions{}), KindNotPaused, "Heartbeat for w is not paused (status: expired)")
	if st, _ := s.Load("w"); st.Status != StatusExpired {
		t.Fatalf("status %s, want expired", st.Status)
	}
}

func TestResumeState(t *testing.T) {
	t.Parallel()
	now := t0.Add(5 * time.Hour)
	paused := &State{WorkerName: "w", IntervalSeconds: 3600, Status: StatusPaused,
		ExpireAt: StampOf(t0.Add(6 * time.Hour)), PausedAt: StampOf(t0.Add(4 * time.Hour))}
	st, err := resumeState(paused, "w", true, now)
	if err != nil || st.Status != StatusActive || st.PausedAt != "" ||
		st.ExpireAt != StampOf(t0.Add(7*time.Hour)) || st.NextBeatAt != StampOf(now.Add(time.Hour)) {
		t.Fatalf("resumed: %+v %v", st, err)
	}
	active := &State{WorkerName: "w", IntervalSeconds: 60, Status: StatusActive}
	if _, err := resumeState(active, "w", true, now); err == nil ||
		err.Error() != "Heartbeat for w is not paused (status: active)" {
		t.Fatalf("active with a live process: %v", err)
	}
	if st, err := resumeState(active, "w", false, now); err != nil || st.Status != StatusActive {
		t.Fatalf("active without a process (recovery): %+v %v", st, err)
	}
}

func TestStopForNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if stopped, err := StopFor(root, "w"); stopped || err != nil {
		t.Fatalf("StopFor without a heartbeat = %v %v", stopped, err)
	}
	if found, err := Stop(root, "w"); found || err != nil {
		t.Fatalf("Stop without a heartbeat = %v %v", found, err)
	}
	// A live heartbeat state whose process is gone: stopped at once.
	s := seed(t, root, nil)
	if stopped, err := StopFor(root, "w"); !stopped || err != nil {
		t.Fatalf("StopFor = %v %v", stopped, err)
	}
	if st, _ := s.Load("w"); st.Status != StatusStopped {
		t.Fatalf("status %s", st.Status)
	}
	// An expired heartbeat stays expired on stop (nothing to stop).
	seed(t, root, func(st *State) { st.Status = StatusExpired })
	if found, err := Stop(root, "w"); !found || err != nil {
		t.Fatalf("Stop of an expired heartbeat = %v %v", found, err)
	}
	if st, _ := s.Load("w"); st.Status != StatusExpired {
		t.Fatalf("status %s, want expired", st.Status)
	}
	for _, f := range []func() error{
		func() error { _, err := Stop(root, "a/b"); return err },
		func() error { _, err := StopFor(root, ".."); return err },
	} {
		if f() == nil {
			t.Error("invalid name accepted")
		}
	}
}

func TestRecoverSkipsLiveAndEnded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	seed(t, root, func(st *State) { st.Status = StatusStopped })
	n, err := Recover(root, StartOptions{})
	if n != 0 || err != nil {
		t.Fatalf("Recover = %d %v", n, err)
	}
	// Active but expired: marked expired, nothing started, no error.
	seed(t, root, func(st *State) { st.ExpireAt = StampOf(time.Now().Add(-time.Second)) })
	if n, err := Recover(root, StartOptions{}); n != 0 || err != nil {
		t.Fatalf("Recover of an expired heartbeat = %d %v", n, err)
	}
}

// What a failed start cannot put back is returned, not lost: here the
// new state can be neither read nor removed (a directory holding a file
// where the state file goes).
func TestUndoStartReportsWhatItCannotUndo(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	if err := os.MkdirAll(filepath.Join(s.Path("w"), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := s.undoStart("w", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot undo the heartbeat's start: ") {
		t.Fatalf("undoStart = %v", err)
	}
	if err := seed(t, t.TempDir(), nil).undoStart("w", nil); err != nil {
		t.Fatalf("undoStart of a state it can remove = %v", err)
	}
}
