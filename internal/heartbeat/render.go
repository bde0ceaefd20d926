package heartbeat

import (
	"fmt"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
)

// Rendering of list and status: pure functions from state to text, so the
// command layer only prints.

// Monitor is what is known about a heartbeat's process.
type Monitor struct {
	Alive bool
	PID   int // 0 when unknown
}

// RenderList renders "heartbeat list" in format "table" or "json".
func RenderList(states []State, now time.Time, format string) (string, error) {
	switch format {
	case "json":
		if len(states) == 0 {
			return "[]\n", nil
		}
		data, err := state.EncodeJSON(states)
		return string(data), err
	case "table", "":
	default:
		return "", fmt.Errorf("invalid format '%s' (use table or json)", format)
	}
	if len(states) == 0 {
		return "No heartbeats found\n", nil
	}
	var b strings.Builder
	// A state file's texts (a status, an expiry that is not a time) are
	// made printable (termtext.Line): no escape sequence or forged row.
	row := func(cols ...any) {
		fmt.Fprintln(&b, termtext.Line(fmt.Sprintf("%-15s %-10s %-12s %-12s %-10s %-6v", cols...)))
	}
	row("WORKER", "INTERVAL", "NEXT BEAT", "EXPIRES", "STATUS", "BEATS")
	for i := range states {
		s := &states[i]
		row(s.WorkerName, FormatInterval(s.IntervalSeconds), nextBeatText(s, now),
			expiresText(s, now), s.Status, s.BeatCount)
	}
	return b.String(), nil
}

// nextBeatText: "-" when not active, "?" when unknown, else "in 5m".
func nextBeatText(s *State, now time.Time) string {
	t, active, ok := NextBeat(s)
	switch {
	case !active:
		return "-"
	case !ok:
		return "?"
	}
	return TimeUntil(t, now)
}

// expiresText: "never", "in 23h", "now", or the stored text when it is
// not a time.
func expiresText(s *State, now time.Time) string {
	if s.ExpireAt == "" {
		return "never"
	}
	t, ok := s.ExpireAt.Time()
	if !ok {
		return string(s.ExpireAt)
	}
	return TimeUntil(t, now)
}

// human renders a stamp in local time "YYYY-MM-DD HH:MM:SS" (swarm.py's), or
// as stored when it is not a time.
func human(s Stamp) string {
	t, ok := s.Time()
	if !ok {
		return string(s)
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// RenderStatus renders "heartbeat status W" in format "text" or "json".
func RenderStatus(st *State, mon Monitor, now time.Time, format string) (string, error) {
	switch format {
	case "json":
		return statusJSON(st, mon)
	case "text", "":
	default:
		return "", fmt.Errorf("invalid format '%s' (use text or json)", format)
	}
	var b strings.Builder
	// The message is the user's and the rest the state file's: each line
	// is made printable (termtext.Line).
	line := func(k, v string) { fmt.Fprintf(&b, "%s: %s\n", k, termtext.Line(v)) }
	line("Worker", st.WorkerName)
	line("Status", st.Status)
	line("Monitor", monitorText(st, mon))
	line("Interval", FormatInterval(st.IntervalSeconds))
	line("Message", st.Message)
	line("Created", human(st.CreatedAt))
	if st.ExpireAt != "" {
		line("Expires", fmt.Sprintf("%s (%s)", human(st.ExpireAt), expiresText(st, now)))
	} else {
		line("Expires", "never")
	}
	if st.LastBeatAt != "" {
		line("Last beat", human(st.LastBeatAt))
	} else {
		line("Last beat", "none")
	}
	line("Next beat", nextBeatText(st, now))
	line("Beat count", fmt.Sprint(st.BeatCount))
	if st.SkipCount > 0 {
		line("Skipped", fmt.Sprintf("%d (previous message not consumed, or pane not running)", st.SkipCount))
	}
	return b.String(), nil
}

func monitorText(st *State, mon Monitor) string {
	switch {
	case mon.Alive && mon.PID > 0:
		return fmt.Sprintf("running (pid %d)", mon.PID)
	case mon.Alive:
		return "running"
	case st.Live():
		return fmt.Sprintf("not running (restart with: swarm heartbeat resume %s)", st.WorkerName)
	}
	return "not running"
}

// statusJSON is the state file's keys plus next_beat_at as swarm.py
// computes it (null unless active) and whether the process runs.
func statusJSON(st *State, mon Monitor) (string, error) {
	out := struct {
		State
		NextBeatAt     *string `json:"next_beat_at"`
		MonitorRunning bool    `json:"monitor_running"`
	}{State: *st, MonitorRunning: mon.Alive}
	if t, _, ok := NextBeat(st); ok {
		s := string(StampOf(t))
		out.NextBeatAt = &s
	}
	data, err := state.EncodeJSON(out)
	return string(data), err
}
