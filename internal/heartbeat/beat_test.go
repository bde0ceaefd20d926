package heartbeat

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/testenv"
)

// fakeTarget is a worker without tmux.
type fakeTarget struct {
	mu      sync.Mutex
	look    Look
	lookErr error
	sendErr error
	looks   int
	sent    []string
}

func (f *fakeTarget) Look(screen bool) (Look, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	l := f.look
	if !screen {
		l.Screen = ""
	}
	return l, f.lookErr
}

func (f *fakeTarget) Send(text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sendErr != nil {
		return f.sendErr
	}
	f.sent = append(f.sent, text)
	f.look.Screen = "> " + text // a worker that has not consumed it yet
	return nil
}

func (f *fakeTarget) set(fn func(*fakeTarget)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeTarget) sentCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

var t0 = time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)

// newBeater makes a claimed beater for an active heartbeat every hour,
// checking the worker every 30 s.
func newBeater(t *testing.T, edit func(*State)) (*beater, *fakeTarget, *Store) {
	t.Helper()
	s := NewStore(t.TempDir(), nil)
	st := &State{WorkerName: "w", IntervalSeconds: 3600, Message: "continue", Status: StatusActive, CreatedAt: StampOf(t0)}
	if edit != nil {
		edit(st)
	}
	s.Update("w", func(*State) (*State, error) { return st, nil })
	ft := &fakeTarget{look: Look{Screen: "> \n"}}
	b := &beater{store: s, name: "w", target: ft, log: io.Discard, check: 30 * time.Second}
	if ok, err := b.claim(t0); !ok || err != nil {
		t.Fatalf("claim = %v %v", ok, err)
	}
	return b, ft, s
}

func mustTick(t *testing.T, b *beater, at time.Time, wantDone bool) {
	t.Helper()
	done, err := b.tick(at)
	if err != nil || done != wantDone {
		t.Fatalf("tick(%v) = %v %v, want done=%v", at.Sub(t0), done, err, wantDone)
	}
}

func load(t *testing.T, s *Store) *State {
	t.Helper()
	st, err := s.Load("w")
	if err != nil || st == nil {
		t.Fatalf("Load = %v %v", st, err)
	}
	return st
}

func TestTickBeatsAtInterval(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, nil)
	if st := load(t, s); st.MonitorPID == nil || *st.MonitorPID != os.Getpid() || st.MonitorStarted != StampOf(t0) {
		t.Fatalf("claim did not record the process: %+v", st)
	}
	mustTick(t, b, t0.Add(30*time.Minute), false)
	if ft.sentCount() != 0 {
		t.Fatal("beat before the interval")
	}
	ft.set(func(f *fakeTarget) { f.look.Screen = "working\n> \n" })
	mustTick(t, b, t0.Add(time.Hour), false)
	st := load(t, s)
	if ft.sentCount() != 1 || st.BeatCount != 1 || st.LastBeatAt != StampOf(t0.Add(time.Hour)) ||
		st.NextBeatAt != StampOf(t0.Add(2*time.Hour)) {
		t.Fatalf("after the first beat: sent %v, state %+v", ft.sent, st)
	}
	ft.set(func(f *fakeTarget) { f.look.Screen = "ack\n" }) // consumed
	mustTick(t, b, t0.Add(119*time.Minute), false)
	mustTick(t, b, t0.Add(2*time.Hour), false)
	if ft.sentCount() != 2 || load(t, s).BeatCount != 2 || ft.sent[1] != "continue" {
		t.Fatalf("second beat: %v", ft.sent)
	}
}

func TestTickChecksWorkerEvery30s(t *testing.T) {
	t.Parallel()
	b, ft, _ := newBeater(t, nil)
	for _, sec := range []int{0, 10, 29, 31, 40, 62} {
		mustTick(t, b, t0.Add(time.Duration(sec)*time.Second), false)
	}
	if ft.looks != 3 { // at 0, 31 and 62
		t.Fatalf("looked %d times, want 3", ft.looks)
	}
}

func TestTickSkipsUnconsumedMessage(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, nil)
	ft.set(func(f *fakeTarget) { f.look.Screen = "output\n> continue\n\n" })
	mustTick(t, b, t0.Add(time.Hour), false)
	st := load(t, s)
	if ft.sentCount() != 0 || st.BeatCount != 0 || st.SkipCount != 1 || st.NextBeatAt != StampOf(t0.Add(2*time.Hour)) {
		t.Fatalf("skip: sent %v, state %+v", ft.sent, st)
	}
	// The timer restarted: nothing at t0+90m, a beat at t0+2h once consumed.
	ft.set(func(f *fakeTarget) { f.look.Screen = "done\n" })
	mustTick(t, b, t0.Add(90*time.Minute), false)
	mustTick(t, b, t0.Add(2*time.Hour), false)
	if ft.sentCount() != 1 {
		t.Fatalf("sent %v", ft.sent)
	}
}

// A ralph worker between iterations: skip the beat, keep running.
func TestTickSkipsWhilePaneNotRunning(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, nil)
	ft.set(func(f *fakeTarget) { f.look = Look{Skip: "pane dead"} })
	mustTick(t, b, t0.Add(time.Hour), false)
	if st := load(t, s); ft.sentCount() != 0 || st.Status != StatusActive || st.SkipCount != 1 {
		t.Fatalf("sent %v, state %+v", ft.sent, st)
	}
	ft.set(func(f *fakeTarget) { f.look = Look{Screen: "> "} })
	mustTick(t, b, t0.Add(2*time.Hour), false)
	if ft.sentCount() != 1 {
		t.Fatal("no beat once the pane runs again")
	}
}

func TestTickEndsWhenWorkerGone(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Duration{time.Minute, time.Hour} { // a check, a beat
		b, ft, s := newBeater(t, nil)
		mustTick(t, b, t0, false)
		ft.set(func(f *fakeTarget) { f.look = Look{Gone: "the worker's record is gone"} })
		mustTick(t, b, t0.Add(at), true)
		if st := load(t, s); st.Status != StatusStopped || ft.sentCount() != 0 {
			t.Fatalf("at %v: state %+v", at, st)
		}
	}
}

func TestTickExpires(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, func(st *State) { st.ExpireAt = StampOf(t0.Add(90 * time.Minute)) })
	mustTick(t, b, t0.Add(time.Hour), false)
	mustTick(t, b, t0.Add(90*time.Minute), true)
	if st := load(t, s); st.Status != StatusExpired || ft.sentCount() != 1 || st.NextBeatAt != "" {
		t.Fatalf("sent %v, state %+v", ft.sent, st)
	}
}

func TestTickPauseResume(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, func(st *State) { st.ExpireAt = StampOf(t0.Add(3 * time.Hour)) })
	s.Update("w", func(c *State) (*State, error) { c.Status = StatusPaused; return c, nil })
	// No beats and no expiry while paused.
	for _, h := range []time.Duration{1, 2, 3, 4} {
		mustTick(t, b, t0.Add(h*time.Hour), false)
	}
	if ft.sentCount() != 0 {
		t.Fatal("beat while paused")
	}
	s.Update("w", func(c *State) (*State, error) {
		c.Status = StatusActive
		c.ExpireAt = StampOf(t0.Add(10 * time.Hour))
		return c, nil
	})
	mustTick(t, b, t0.Add(5*time.Hour), false)
	if ft.sentCount() != 0 {
		t.Fatal("beat at once on resume; the next beat is a full interval away")
	}
	mustTick(t, b, t0.Add(6*time.Hour), false)
	if ft.sentCount() != 1 {
		t.Fatal("no beat an interval after resume")
	}
}

func TestTickPausedStillEndsWhenWorkerGone(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, func(st *State) { st.Status = StatusPaused })
	ft.set(func(f *fakeTarget) { f.look = Look{Gone: "gone"} })
	mustTick(t, b, t0, true)
	if st := load(t, s); st.Status != StatusStopped {
		t.Fatalf("state %+v", st)
	}
}

func TestTickStopsOnCommand(t *testing.T) {
	t.Parallel()
	for _, status := range []string{StatusStopped, StatusExpired} {
		b, _, s := newBeater(t, nil)
		s.Update("w", func(c *State) (*State, error) { c.Status = status; return c, nil })
		mustTick(t, b, t0.Add(time.Hour), true)
		if st := load(t, s); st.Status != status {
			t.Fatalf("status %s became %s", status, st.Status)
		}
	}
	b, _, s := newBeater(t, nil)
	os.Remove(s.Path("w"))
	mustTick(t, b, t0.Add(time.Hour), true)
}

func TestTickRepairsCorruptState(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, nil)
	os.WriteFile(s.Path("w"), []byte("garbage"), 0o600)
	mustTick(t, b, t0.Add(time.Hour), false)
	if st := load(t, s); st.Status != StatusActive || ft.sentCount() != 1 || st.BeatCount != 1 {
		t.Fatalf("after repair: state %+v sent %v", st, ft.sent)
	}
}

func TestTickRetriesFailedSend(t *testing.T) {
	t.Parallel()
	b, ft, s := newBeater(t, nil)
	ft.set(func(f *fakeTarget) { f.sendErr = errors.New("tmux went away") })
	mustTick(t, b, t0.Add(time.Hour), false)
	if load(t, s).BeatCount != 0 {
		t.Fatal("a failed send was counted")
	}
	ft.set(func(f *fakeTarget) { f.sendErr = nil })
	mustTick(t, b, t0.Add(time.Hour+29*time.Second), false)
	mustTick(t, b, t0.Add(time.Hour+30*time.Second), false)
	if ft.sentCount() != 1 {
		t.Fatalf("no retry one worker check later: %v", ft.sent)
	}
	ft.set(func(f *fakeTarget) { f.lookErr = errors.New("no server") })
	mustTick(t, b, t0.Add(3*time.Hour), false) // a look error is not an end
}

func TestClaimNothingToRun(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir(), nil)
	b := &beater{store: s, name: "w", target: &fakeTarget{}, log: io.Discard}
	if ok, err := b.claim(t0); ok || err != nil {
		t.Fatalf("claim without state = %v %v", ok, err)
	}
	s.Update("w", func(*State) (*State, error) {
		return &State{WorkerName: "w", IntervalSeconds: 1, Message: "m", Status: StatusExpired}, nil
	})
	if ok, err := b.claim(t0); ok || err != nil {
		t.Fatalf("claim of an expired heartbeat = %v %v", ok, err)
	}
}

// Run's loop with the real clock and a fake worker: it beats, and Stop
// ends it and waits for its lock.
func TestRunLoopAndStop(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := NewStore(root, nil)
	s.Update("w", func(*State) (*State, error) {
		return &State{WorkerName: "w", IntervalSeconds: 0.05, Message: "continue", Status: StatusActive}, nil
	})
	ft := &fakeTarget{}
	ft.look.Screen = "> "
	ft.sendErr = nil
	consume := func() { ft.set(func(f *fakeTarget) { f.look.Screen = "ack" }) }
	done := make(chan error, 1)
	go func() {
		done <- RunWith(context.Background(), root, "w", RunOptions{Poll: 10 * time.Millisecond, Target: ft, Log: io.Discard})
	}()
	testenv.EventuallyEvery(t, "3 beats at a 50ms interval", 5*time.Millisecond, 10*time.Second, func() bool {
		if ft.sentCount() >= 3 {
			return true
		}
		consume()
		return false
	})
	if !daemon.Alive(s.LockPath("w")) || daemon.Holder(s.LockPath("w")) != os.Getpid() {
		t.Fatal("Run does not hold its lock")
	}
	found, err := Stop(root, "w")
	if !found || err != nil {
		t.Fatalf("Stop = %v %v", found, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	st := load(t, s)
	if st.Status != StatusStopped || st.MonitorPID != nil || daemon.Alive(s.LockPath("w")) {
		t.Fatalf("after stop: %+v alive=%v", st, daemon.Alive(s.LockPath("w")))
	}
}

func TestRunRefusesSecondProcess(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := NewStore(root, nil)
	held, err := daemon.Lock(s.LockPath("w"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	err = RunWith(context.Background(), root, "w", RunOptions{Target: &fakeTarget{}, Log: io.Discard})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("Run with the lock held = %v", err)
	}
}

func TestRunEndsOnContext(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := NewStore(root, nil)
	s.Update("w", func(*State) (*State, error) {
		return &State{WorkerName: "w", IntervalSeconds: 3600, Message: "m", Status: StatusActive}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunWith(ctx, root, "w", RunOptions{Poll: 10 * time.Millisecond, Target: &fakeTarget{}, Log: io.Discard})
	}()
	testenv.EventuallyEvery(t, "Run to claim the heartbeat", 5*time.Millisecond, 10*time.Second, func() bool {
		return load(t, s).MonitorPID != nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Signalled: the state is left active for a resume, the pid cleared.
	if st := load(t, s); st.Status != StatusActive || st.MonitorPID != nil {
		t.Fatalf("state %+v", st)
	}
}

// A state write the beater cannot make is said in its log, not lost:
// the end, a skipped beat, the release of monitor_pid.
func TestBeaterLogsAFailedStateWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		do   func(b *beater)
		want string
	}{
		{"end", func(b *beater) { b.end(StatusExpired, "expired") }, "cannot record the heartbeat as expired: "},
		{"skip", func(b *beater) { b.skip(t0, &State{IntervalSeconds: 60}, "busy") }, "cannot record the skipped beat: "},
		{"release", func(b *beater) { b.release() }, "cannot clear monitor_pid: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, _, s := newBeater(t, nil)
			var log strings.Builder
			b.log = &log
			// A directory where the state file goes: no read or write of
			// it can succeed.
			if err := os.Remove(s.Path("w")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(s.Path("w"), 0o700); err != nil {
				t.Fatal(err)
			}
			c.do(b)
			if !strings.Contains(log.String(), c.want) {
				t.Fatalf("log %q lacks %q", log.String(), c.want)
			}
		})
	}
}
