package heartbeat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var renderNow = time.Date(2026, 2, 4, 12, 0, 0, 0, time.UTC)

func renderStates() []State {
	pid := 4242
	return []State{
		{WorkerName: "builder", IntervalSeconds: 14400, Message: "continue", Status: StatusActive,
			CreatedAt: StampOf(renderNow.Add(-time.Hour)), ExpireAt: StampOf(renderNow.Add(23 * time.Hour)),
			BeatCount: 2, MonitorPID: &pid},
		{WorkerName: "p", IntervalSeconds: 90, Message: "go", Status: StatusPaused,
			CreatedAt: StampOf(renderNow), ExpireAt: "not-a-valid-timestamp"},
		{WorkerName: "q", IntervalSeconds: 3600, Message: "go", Status: StatusActive, CreatedAt: ""},
		{WorkerName: "s", IntervalSeconds: 86400, Message: "go", Status: StatusStopped, CreatedAt: StampOf(renderNow)},
		{WorkerName: "x", IntervalSeconds: 60, Message: "go", Status: StatusActive,
			CreatedAt: StampOf(renderNow.Add(-2 * time.Hour)), LastBeatAt: StampOf(renderNow.Add(-30 * time.Second)),
			NextBeatAt: StampOf(renderNow.Add(30 * time.Second))},
	}
}

func TestRenderListTable(t *testing.T) {
	t.Parallel()
	got, err := RenderList(renderStates(), renderNow, "table")
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"WORKER          INTERVAL   NEXT BEAT    EXPIRES      STATUS     BEATS \n" +
		"builder         4h 0m      in 3h        in 23h       active     2     \n" +
		"p               1m 30s     -            not-a-valid-timestamp paused     0     \n" +
		"q               1h 0m      ?            never        active     0     \n" +
		"s               24h 0m     -            never        stopped    0     \n" +
		"x               1m 0s      in 30s       never        active     0     \n"
	if got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := RenderList(nil, renderNow, "table"); got != "No heartbeats found\n" {
		t.Errorf("empty table %q", got)
	}
	if got, _ := RenderList(nil, renderNow, "json"); got != "[]\n" {
		t.Errorf("empty json %q", got)
	}
	if _, err := RenderList(nil, renderNow, "names"); err == nil {
		t.Error("format names accepted")
	}
}

func TestRenderListJSON(t *testing.T) {
	t.Parallel()
	got, err := RenderList(renderStates()[:1], renderNow, "json")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if len(out) != 1 || out[0]["worker_name"] != "builder" || out[0]["interval_seconds"] != 14400.0 ||
		out[0]["monitor_pid"] != 4242.0 || out[0]["last_beat_at"] != nil || out[0]["status"] != "active" {
		t.Fatalf("json %v", out)
	}
	if !strings.HasPrefix(got, "[\n  {\n    \"worker_name\": \"builder\",\n") {
		t.Errorf("not swarm.py's indent:\n%s", got)
	}
}

func TestRenderStatusText(t *testing.T) {
	t.Parallel()
	st := renderStates()[0]
	got, err := RenderStatus(&st, Monitor{Alive: true, PID: 4242}, renderNow, "text")
	if err != nil {
		t.Fatal(err)
	}
	local := func(d time.Duration) string { return renderNow.Add(d).Local().Format("2006-01-02 15:04:05") }
	want := "Worker: builder\n" +
		"Status: active\n" +
		"Monitor: running (pid 4242)\n" +
		"Interval: 4h 0m\n" +
		"Message: continue\n" +
		"Created: " + local(-time.Hour) + "\n" +
		"Expires: " + local(23*time.Hour) + " (in 23h)\n" +
		"Last beat: none\n" +
		"Next beat: in 3h\n" +
		"Beat count: 2\n"
	if got != want {
		t.Fatalf("status:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderStatusVariants(t *testing.T) {
	t.Parallel()
	states := renderStates()
	cases := []struct {
		st   State
		mon  Monitor
		want []string
	}{
		{states[1], Monitor{}, []string{"Status: paused\n", "Monitor: not running (restart with: swarm heartbeat resume p)\n",
			"Expires: not-a-valid-timestamp (not-a-valid-timestamp)\n", "Next beat: -\n"}},
		{states[2], Monitor{Alive: true}, []string{"Monitor: running\n", "Created: \n", "Expires: never\n", "Next beat: ?\n"}},
		{states[3], Monitor{}, []string{"Monitor: not running\n", "Interval: 24h 0m\n"}},
		{states[4], Monitor{}, []string{"Last beat: " + renderNow.Add(-30*time.Second).Local().Format("2006-01-02 15:04:05") + "\n",
			"Next beat: in 30s\n"}},
	}
	for _, c := range cases {
		got, _ := RenderStatus(&c.st, c.mon, renderNow, "")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: status lacks %q:\n%s", c.st.WorkerName, w, got)
			}
		}
	}
	skipped := states[0]
	skipped.SkipCount = 3
	if got, _ := RenderStatus(&skipped, Monitor{}, renderNow, "text"); !strings.HasSuffix(got,
		"Beat count: 2\nSkipped: 3 (previous message not consumed, or pane not running)\n") {
		t.Errorf("skips not shown:\n%s", got)
	}
}

func TestRenderStatusJSON(t *testing.T) {
	t.Parallel()
	states := renderStates()
	got, err := RenderStatus(&states[0], Monitor{Alive: true, PID: 4242}, renderNow, "json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatal(err)
	}
	if out["next_beat_at"] != string(StampOf(renderNow.Add(3*time.Hour))) || out["monitor_running"] != true ||
		out["worker_name"] != "builder" || out["beat_count"] != 2.0 {
		t.Fatalf("status json %v", out)
	}
	if strings.Count(got, `"next_beat_at"`) != 1 {
		t.Fatalf("next_beat_at twice:\n%s", got)
	}
	got, _ = RenderStatus(&states[1], Monitor{}, renderNow, "json")
	json.Unmarshal([]byte(got), &out)
	if v, ok := out["next_beat_at"]; !ok || v != nil || out["monitor_running"] != false {
		t.Fatalf("paused json %v", out)
	}
	if _, err := RenderStatus(&states[0], Monitor{}, renderNow, "yaml"); err == nil {
		t.Error("format yaml accepted")
	}
}
