package heartbeat

import (
	"testing"
	"time"
)

func TestPending(t *testing.T) {
	t.Parallel()
	cases := []struct {
		screen, msg string
		want        bool
	}{
		{"working...\n> continue\n\n\n", "continue", true},
		{"> continue", "continue", true},
		{"│ > continue          │\n   \n", "continue", true},
		{"continue\ncontinue\n", "continue", true}, // cat echoes it back
		{"> continue\nack\n> \n", "continue", false},
		{"continue\nsomething else\n", "continue", false},
		{"", "continue", false},
		{"   \n\n", "continue", false},
		{"> please go on\n", "please go on", true},
		{"> please go\n", "please go on", false},
		{"> step two\n", "line one\nstep two\n", true}, // multi-line: its last line
		{"anything", "   ", false},                     // nothing to look for
		{"> continue\r\n", "continue", true},
	}
	for _, c := range cases {
		if got := Pending(c.screen, c.msg); got != c.want {
			t.Errorf("Pending(%q, %q) = %v, want %v", c.screen, c.msg, got, c.want)
		}
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)
	if at := ExpireAt(created, 24*time.Hour); !at.Equal(created.Add(24 * time.Hour)) {
		t.Fatalf("ExpireAt = %v", at)
	}
	if at := ExpireAt(created, 0); !at.IsZero() {
		t.Fatalf("no expiry = %v", at)
	}
	st := &State{Status: StatusActive, ExpireAt: StampOf(created.Add(time.Hour))}
	if Expired(st, created.Add(59*time.Minute)) {
		t.Error("expired early")
	}
	if !Expired(st, created.Add(time.Hour)) || !Expired(st, created.Add(2*time.Hour)) {
		t.Error("not expired at or after expire_at")
	}
	st.Status = StatusPaused
	if Expired(st, created.Add(2*time.Hour)) {
		t.Error("a paused heartbeat expired (paused time does not count)")
	}
	for _, s := range []Stamp{"", "not-a-time"} {
		if Expired(&State{Status: StatusActive, ExpireAt: s}, created.Add(1e6*time.Hour)) {
			t.Errorf("expire_at %q expired", s)
		}
	}
}

func TestResumedMovesExpiryByPausedTime(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)
	exp, paused := StampOf(t0.Add(10*time.Hour)), StampOf(t0.Add(time.Hour))
	got, _ := Resumed(exp, paused, t0.Add(4*time.Hour)).Time()
	if want := t0.Add(13 * time.Hour); !got.Equal(want) {
		t.Fatalf("Resumed = %v, want %v", got, want)
	}
	if Resumed("", paused, t0) != "" || Resumed(exp, "", t0) != exp || Resumed(exp, "junk", t0) != exp {
		t.Fatal("Resumed changed an expiry it could not compute")
	}
}

func TestFirstBeat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)
	st := &State{IntervalSeconds: 3600}
	if got := firstBeat(st, now); !got.Equal(now.Add(time.Hour)) {
		t.Errorf("no plan: %v", got)
	}
	st.NextBeatAt = StampOf(now.Add(20 * time.Minute))
	if got := firstBeat(st, now); !got.Equal(now.Add(20 * time.Minute)) {
		t.Errorf("a restarted process keeps the plan: %v", got)
	}
	for _, next := range []time.Duration{-time.Minute, 5 * time.Hour} {
		st.NextBeatAt = StampOf(now.Add(next))
		if got := firstBeat(st, now); !got.Equal(now.Add(time.Hour)) {
			t.Errorf("plan %v from now: first beat %v", next, got)
		}
	}
}

func TestNextBeat(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)
	st := &State{Status: StatusActive, IntervalSeconds: 3600, CreatedAt: StampOf(t0)}
	if got, active, ok := NextBeat(st); !active || !ok || !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("from created: %v %v %v", got, active, ok)
	}
	st.LastBeatAt = StampOf(t0.Add(3 * time.Hour))
	if got, _, _ := NextBeat(st); !got.Equal(t0.Add(4 * time.Hour)) {
		t.Errorf("from last beat: %v", got)
	}
	st.NextBeatAt = StampOf(t0.Add(90 * time.Minute))
	if got, _, _ := NextBeat(st); !got.Equal(t0.Add(90 * time.Minute)) {
		t.Errorf("planned: %v", got)
	}
	if _, active, ok := NextBeat(&State{Status: StatusActive, CreatedAt: "junk"}); !active || ok {
		t.Error("unreadable created_at must be active but unknown")
	}
	for _, s := range []string{StatusPaused, StatusStopped, StatusExpired} {
		if _, active, _ := NextBeat(&State{Status: s, CreatedAt: StampOf(t0)}); active {
			t.Errorf("%s has a next beat", s)
		}
	}
}

func TestTimeUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 4, 2, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		-time.Hour: "now", 0: "now", 500 * time.Millisecond: "now", time.Second: "in 1s",
		59 * time.Second: "in 59s", time.Minute: "in 1m", 3599 * time.Second: "in 59m",
		time.Hour: "in 1h", 23*time.Hour + 59*time.Minute: "in 23h", 24 * time.Hour: "in 1d", 50 * time.Hour: "in 2d",
	} {
		if got := TimeUntil(now.Add(d), now); got != want {
			t.Errorf("TimeUntil(%v) = %q, want %q", d, got, want)
		}
	}
}

// As swarm.py's format_duration (its tests' values).
func TestFormatInterval(t *testing.T) {
	t.Parallel()
	for s, want := range map[float64]string{
		0: "0s", 0.5: "0s", 30: "30s", 59: "59s", 60: "1m 0s", 90: "1m 30s", 1800: "30m 0s",
		3600: "1h 0m", 3661: "1h 1m", 5400: "1h 30m", 14400: "4h 0m", 86400: "24h 0m",
	} {
		if got := FormatInterval(s); got != want {
			t.Errorf("FormatInterval(%v) = %q, want %q", s, got, want)
		}
	}
}
