package ralph

import (
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// The status column of ralph ls and swarm top says when a waiting loop's
// usage limit resets.
func TestListStatusSaysWhenALimitResets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 10, 30, 0, 0, time.Local)
	cases := []struct {
		name       string
		st         state.Ralph
		notStarted bool
		want       string
	}{
		{"running", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphRunning}}, false, "running"},
		{"not started", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphRunning}}, true, "not-started"},
		{"waiting today", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphWaiting,
			WaitingUntil: state.ZonedTimestamp{Time: now.Add(4*time.Hour + 5*time.Minute)}}}, false, "waiting until 14:35"},
		{"waiting for days", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphWaiting,
			WaitingUntil: state.ZonedTimestamp{Time: now.Add(50 * time.Hour)}}}, false, "waiting until Mar 6 12:30"},
		{"waiting, reset unknown", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphWaiting}}, false, "waiting"},
		{"paused keeps no reset", state.Ralph{LoopProgress: state.LoopProgress{Status: state.RalphPaused,
			WaitingUntil: state.ZonedTimestamp{Time: now}}}, false, "paused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := &Info{State: &c.st, NotStarted: c.notStarted, At: now}
			if got := in.ListStatus(); got != c.want {
				t.Errorf("ListStatus() = %q, want %q", got, c.want)
			}
		})
	}
}
