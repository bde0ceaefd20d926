package agent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// telemetryDir holds what Claude Code 2.1.197 handed its hooks and its
// status line, and a transcript, captured against the mock API
// (internal/agenttest) with paths made stable.
const telemetryDir = "testdata/claude-code-2.1.197/telemetry"

// fakeHooks are hook command lines as cmd/swarm would give them.
var fakeHooks = HookCommands{
	Event: func(events, format string) []string {
		return []string{"/opt/swarm dir/swarm", "_event", "--events", events, "--format", format}
	},
	Status: func(file, chain string) []string {
		argv := []string{"/opt/swarm dir/swarm", "_event", "--status", file}
		if chain != "" {
			argv = append(argv, "--chain", chain)
		}
		return argv
	},
}

// Every hook input Claude Code sent becomes the event the loop reads,
// with the fields it acts on.
func TestClaudeHookEvents(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(telemetryDir, "hooks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]Event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for sc.Scan() {
		ev, err := HookEvent(FormatClaude, sc.Bytes(), now)
		if err != nil {
			t.Fatalf("%s: %v", sc.Text()[:80], err)
		}
		if ev.Session != "11111111-2222-3333-4444-555555555555" || !ev.Time.Equal(now) || !strings.HasSuffix(ev.Transcript, ev.Session+".jsonl") {
			t.Errorf("%s: session %q, time %v, transcript %q", ev.Name, ev.Session, ev.Time, ev.Transcript)
		}
		got[ev.Name] = ev
	}
	want := map[string]Event{
		EventSessionStart:      {Kind: "startup"},
		EventUserPromptSubmit:  {},
		EventPreToolUse:        {Tool: "Bash"},
		EventPermissionRequest: {Tool: "Bash", Detail: "touch DONE"},
		EventNotification:      {Kind: "permission_prompt", Message: "Claude needs your permission"},
		EventStop:              {Message: "thinking done"},
		EventStopFailure:       {Kind: "rate_limit", Message: "API Error: Request rejected (429) · This request would exceed the rate limit for your organization (mock-org) of 50,000 input tokens per minute. Please try again later."},
		EventSessionEnd:        {Kind: "prompt_input_exit"},
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("no %s event", name)
			continue
		}
		if g.Kind != w.Kind || g.Message != w.Message || g.Tool != w.Tool || g.Detail != w.Detail {
			t.Errorf("%s: kind %q message %q tool %q detail %q; want %q %q %q %q", name, g.Kind, g.Message, g.Tool, g.Detail, w.Kind, w.Message, w.Tool, w.Detail)
		}
		if urgent := name != EventPreToolUse; g.Urgent() != urgent {
			t.Errorf("%s: urgent %v, want %v", name, g.Urgent(), urgent)
		}
	}
	// A line written and read back is the same event.
	line, _ := json.Marshal(got[EventStop])
	if back, err := ParseEvent(line); err != nil || back.Message != got[EventStop].Message || !back.Time.Equal(now) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// What swarm does not read, or cannot, is said so (the hook logs it and
// exits 0); a huge last message keeps its end, where the tag is.
func TestHookEventEdges(t *testing.T) {
	t.Parallel()
	if _, err := HookEvent(FormatClaude, []byte(`{"hook_event_name":"PostCompact"}`), time.Now()); err == nil {
		t.Error("an event swarm does not read was taken")
	}
	if _, err := HookEvent(FormatClaude, []byte(`{"hook_event_name":`), time.Now()); err == nil {
		t.Error("a broken payload was taken")
	}
	if _, err := HookEvent("gemini", []byte(`{}`), time.Now()); err == nil {
		t.Error("an unknown format was taken")
	}
	long := strings.Repeat("é", maxEventMessage) + "<promise>COMPLETE</promise>"
	payload, _ := json.Marshal(map[string]string{"hook_event_name": "Stop", "last_assistant_message": long})
	ev, err := HookEvent(FormatClaude, payload, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(ev)
	if !strings.HasSuffix(ev.Message, "<promise>COMPLETE</promise>") || len(line) >= 64<<10 || !json.Valid(line) {
		t.Errorf("message of %d bytes (line %d) ends %q", len(ev.Message), len(line), ev.Message[len(ev.Message)-30:])
	}
}

// The status line's figures: the session's cost and how full its context
// is.
func TestClaudeStatusLine(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(telemetryDir, "statusline.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := StatusFromLine(data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if s.CostUSD == nil || *s.CostUSD != 0.111944 || s.ContextPercent == nil || *s.ContextPercent != 2 ||
		s.Model != "claude-opus-4-8[1m]" || s.Session != "11111111-2222-3333-4444-555555555555" {
		t.Errorf("status %+v", s)
	}
	// The first status line, before any request, has no percentage.
	s, err = StatusFromLine([]byte(`{"cost":{"total_cost_usd":0},"context_window":{"used_percentage":null}}`), time.Now())
	if err != nil || s.CostUSD == nil || *s.CostUSD != 0 || s.ContextPercent != nil {
		t.Errorf("first status %+v, %v", s, err)
	}
}

// A transcript's usage counts each reply once, however many lines repeat
// it (one per content block, or copied again), and reads on as the file
// grows, a line being written waiting for its end.
func TestClaudeTranscriptUsage(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(telemetryDir, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := strings.SplitAfter(string(data), "\n")
	// All but the last line, and half of it.
	last := lines[len(lines)-2]
	os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-2], "")+last[:40]), 0o600)
	r := Claude().UsageReader(UsageRef{Transcript: path})
	u, err := r.Read()
	want := Usage{Input: 8, Output: 160, CacheRead: 32000, CacheCreation: 12300}
	if err != nil || u != want {
		t.Fatalf("usage %+v, %v; want %+v", u, err, want)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(last[40:])
	f.WriteString(`{"type":"assistant","requestId":"req_09","message":{"id":"msg_09","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}` + "\n")
	f.WriteString(`{"type":"user","message":{"content":"` + strings.Repeat("x", maxJSONLLine) + `"}}` + "\n")
	f.Close()
	want = Usage{Input: 9, Output: 162, CacheRead: 32003, CacheCreation: 12304}
	if u, err = r.Read(); err != nil || u != want || u.Tokens() != 9+162+32003+12304 {
		t.Errorf("after more lines: %+v, %v; want %+v", u, err, want)
	}
}

// With hooks off, the transcript is found by the session id swarm gave.
func TestClaudeTranscriptBySessionID(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", "-work-proj")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "abc.jsonl"), []byte(`{"type":"assistant","requestId":"r","message":{"id":"m","usage":{"input_tokens":7,"output_tokens":1}}}`+"\n"), 0o600)
	u, err := Claude().UsageReader(UsageRef{SessionID: "abc", Home: home}).Read()
	if err != nil || u.Input != 7 || u.Output != 1 {
		t.Errorf("usage %+v, %v", u, err)
	}
	u, err = Claude().UsageReader(UsageRef{SessionID: "nope", Home: home}).Read()
	if err != nil || u.Tokens() != 0 {
		t.Errorf("missing transcript: %+v, %v", u, err)
	}
}

// Claude Code is started with swarm's settings file (hooks on the events
// the loop reads, and the status line) and a session id, unless its
// command picks its own; the user's own status line runs after swarm's.
func TestClaudeLaunch(t *testing.T) {
	t.Parallel()
	work, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(work, ".claude"), 0o700)
	os.WriteFile(filepath.Join(work, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"my-status --short"}}`), 0o600)
	spec := func() LaunchSpec {
		d := t.TempDir()
		return LaunchSpec{Hooks: fakeHooks, EventsFile: filepath.Join(d, "ev.jsonl"), StatusFile: filepath.Join(d, "status.json"),
			SettingsFile: filepath.Join(d, "settings.json"), WorkDir: work, Home: home}
	}
	s := spec()
	l, err := Claude().Launch([]string{"claude", "--model", "opus"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Events || len(l.SessionID) != 36 || !slices.Equal(l.Args, []string{"--session-id", l.SessionID, "--settings", s.SettingsFile}) {
		t.Fatalf("launch %+v", l)
	}
	data, err := os.ReadFile(s.SettingsFile)
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
		StatusLine struct{ Type, Command string }
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatal(err)
	}
	hook := `'/opt/swarm dir/swarm' '_event' '--events' '` + s.EventsFile + `' '--format' 'claude'`
	for _, ev := range claudeHookEvents {
		h := settings.Hooks[ev]
		if len(h) != 1 || len(h[0].Hooks) != 1 || h[0].Hooks[0].Command != hook || h[0].Hooks[0].Type != "command" {
			t.Errorf("hook %s: %+v", ev, h)
		}
	}
	if want := `'/opt/swarm dir/swarm' '_event' '--status' '` + s.StatusFile + `' '--chain' 'my-status --short'`; settings.StatusLine.Command != want {
		t.Errorf("status line %q, want %q", settings.StatusLine.Command, want)
	}
	// The user's own --settings: no hooks (the screen), still a session.
	l, _ = Claude().Launch([]string{"claude", "--settings=/my.json"}, spec())
	if l.Events || l.SessionID == "" || l.Why == "" {
		t.Errorf("own --settings: %+v", l)
	}
	// The user's own session: no --session-id.
	for _, own := range [][]string{{"claude", "--resume", "x"}, {"claude", "-c"}, {"claude", "--session-id=u"}} {
		l, _ = Claude().Launch(own, spec())
		if l.SessionID != "" || slices.Contains(l.Args, "--session-id") || !l.Events {
			t.Errorf("%q: %+v", own, l)
		}
	}
	// No hook commands (a test engine), or an agent with no telemetry.
	if l, _ = Claude().Launch([]string{"claude"}, LaunchSpec{}); l.Events || l.Args != nil {
		t.Errorf("no hooks: %+v", l)
	}
	if l, _ = Aider().Launch([]string{"aider"}, spec()); l.Events || l.Args != nil {
		t.Errorf("aider: %+v", l)
	}
}

// Codex gets swarm's notify program, unless its command or its
// config.toml sets one; its completed turn is a Stop; its rollout's last
// token_count is the session's usage.
func TestCodexTelemetry(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := LaunchSpec{Hooks: fakeHooks, EventsFile: "/st/ev.jsonl", Home: home}
	l, err := Codex().Launch([]string{"codex", "--model", "o3"}, s)
	want := []string{"-c", `notify=["/opt/swarm dir/swarm","_event","--events","/st/ev.jsonl","--format","codex"]`}
	if err != nil || !l.Events || len(l.Args) < 2 || !slices.Equal(l.Args[:2], want) {
		t.Errorf("launch %+v, %v; want %q", l, err, want)
	}
	for _, own := range [][]string{{"codex", "-c", "notify=[\"x\"]"}, {"codex", "--config=notify=[]"}, {"codex", "-cnotify=[]"}} {
		if l, _ := Codex().Launch(own, s); l.Events || l.Args != nil {
			t.Errorf("%q: %+v", own, l)
		}
	}
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"o3\"\nnotify = [\"my-notify\"]\n"), 0o600)
	if l, _ := Codex().Launch([]string{"codex"}, s); l.Events {
		t.Errorf("config.toml's notify overridden: %+v", l)
	}
	ev, err := HookEvent(FormatCodex, []byte(`{"type":"agent-turn-complete","thread-id":"t-1","turn-id":"2","input-messages":["do it"],"last-assistant-message":"done <promise>COMPLETE</promise>"}`), time.Now())
	if err != nil || ev.Name != EventStop || ev.Session != "t-1" || ev.Message != "done <promise>COMPLETE</promise>" {
		t.Errorf("notify event %+v, %v", ev, err)
	}
	dir := filepath.Join(home, ".codex", "sessions", "2026", "03", "14")
	os.MkdirAll(dir, 0o700)
	rollout := `{"type":"session_meta","payload":{"id":"t-1"}}
{"type":"event_msg","payload":{"type":"token_count","info":null}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":50,"reasoning_output_tokens":20,"total_tokens":1050}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3000,"cached_input_tokens":2000,"output_tokens":90,"total_tokens":3090}}}}
`
	os.WriteFile(filepath.Join(dir, "rollout-2026-03-14T09-00-00-t-1.jsonl"), []byte(rollout), 0o600)
	u, err := Codex().UsageReader(UsageRef{SessionID: "t-1", Home: home}).Read()
	if err != nil || u != (Usage{Input: 1000, CacheRead: 2000, Output: 90}) {
		t.Errorf("rollout usage %+v, %v", u, err)
	}
}

// A FIFO where a settings file is read (the agent can make one in its
// project's .claude) is refused at once, not read forever.
func TestReadSmallRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.local.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readSmall(path, maxSettingsFile); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was read as a settings file")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO hung")
	}
}

// A session the user's own command resumes (claude --resume, codex
// resume) holds the replies of its earlier runs: only those written
// since this run started (UsageRef.Since) are its usage.
func TestResumedSessionUsageCountsThisRunOnly(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(transcript, []byte(
		`{"type":"assistant","timestamp":"2026-11-27T09:00:00.000Z","requestId":"r1","message":{"id":"m1","usage":{"input_tokens":500,"output_tokens":50}}}`+"\n"+
			`{"type":"assistant","timestamp":"2026-11-28T12:00:01.250Z","requestId":"r2","message":{"id":"m2","usage":{"input_tokens":7,"output_tokens":1}}}`+"\n"), 0o600)
	u, err := Claude().UsageReader(UsageRef{Transcript: transcript, Since: since}).Read()
	if err != nil || u != (Usage{Input: 7, Output: 1}) {
		t.Errorf("resumed transcript: %+v, %v; want this run's reply only", u, err)
	}
	if u, _ := Claude().UsageReader(UsageRef{Transcript: transcript}).Read(); u.Input != 507 {
		t.Errorf("without a start: %+v; want every reply", u)
	}

	home := t.TempDir()
	dir := filepath.Join(home, ".codex", "sessions", "2026", "11", "27")
	os.MkdirAll(dir, 0o700)
	rollout := `{"timestamp":"2026-11-27T09:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":50}}}}
{"timestamp":"2026-11-28T12:00:05.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1400,"cached_input_tokens":900,"output_tokens":80}}}}
`
	os.WriteFile(filepath.Join(dir, "rollout-2026-11-27T09-00-00-t-2.jsonl"), []byte(rollout), 0o600)
	u, err = Codex().UsageReader(UsageRef{SessionID: "t-2", Home: home, Since: since}).Read()
	if err != nil || u != (Usage{Input: 100, CacheRead: 300, Output: 30}) {
		t.Errorf("resumed rollout: %+v, %v; want what this run added", u, err)
	}
}

// Stop hooks of the user's own (the user's, the project's or its local
// settings) run beside swarm's and may block a turn's end: the launch
// says so, and says nothing when there are none.
func TestClaudeLaunchFindsTheUsersStopHooks(t *testing.T) {
	t.Parallel()
	launch := func(work, home string) Launch {
		d := t.TempDir()
		l, err := Claude().Launch([]string{"claude"}, LaunchSpec{Hooks: fakeHooks, EventsFile: filepath.Join(d, "ev.jsonl"),
			StatusFile: filepath.Join(d, "status.json"), SettingsFile: filepath.Join(d, "settings.json"), WorkDir: work, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	write := func(path, data string) {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(data), 0o600)
	}
	stop := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./gate.sh"}]}]}}`
	work, home := t.TempDir(), t.TempDir()
	write(filepath.Join(work, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"log"}]}]}}`)
	if l := launch(work, home); l.StopHooks {
		t.Errorf("no Stop hook anywhere: %+v", l)
	}
	for _, f := range []string{filepath.Join(".claude", "settings.local.json"), filepath.Join(".claude", "settings.json"), "home"} {
		work, home := t.TempDir(), t.TempDir()
		if f == "home" {
			write(filepath.Join(home, ".claude", "settings.json"), stop)
		} else {
			write(filepath.Join(work, f), stop)
		}
		if l := launch(work, home); !l.StopHooks {
			t.Errorf("a Stop hook in %s not seen: %+v", f, l)
		}
	}
}

// Codex's trust hash of a command hook, against vectors of a real
// ~/.codex/config.toml (a Stop hook trusted in Codex's own /hooks), and
// the hooks swarm gives Codex: one per event, trusted in the same layer.
func TestCodexHooks(t *testing.T) {
	t.Parallel()
	if h := codexHookHash("Stop", "bash ~/.vibemon/notify.sh stop codex_cli", 10); h != "sha256:c81392377e7e0c36bc8d845d39bdf7f3e61c96c5862df1bcd88515de7839af43" {
		t.Errorf("Stop hook hash %s", h)
	}
	if l := codexEventLabel("UserPromptSubmit"); l != "user_prompt_submit" {
		t.Errorf("label %q", l)
	}
	l, err := Codex().Launch([]string{"codex"}, LaunchSpec{Hooks: fakeHooks, EventsFile: "/st/ev.jsonl", Home: t.TempDir()})
	if err != nil || !l.Events {
		t.Fatalf("launch %+v, %v", l, err)
	}
	args := strings.Join(l.Args, "\n")
	cmd := `'/opt/swarm dir/swarm' '_event' '--events' '/st/ev.jsonl' '--format' 'claude'`
	for _, ev := range []string{"UserPromptSubmit", "PreToolUse", "PermissionRequest", "Stop"} {
		hook := "hooks." + ev + `=[{hooks=[{type="command",command=` + tomlString(cmd) + `,timeout=10}]}]`
		trust := tomlString("/<session-flags>/config.toml:"+codexEventLabel(ev)+":0:0") + "={trusted_hash=" + tomlString(codexHookHash(ev, cmd, 10)) + "}"
		if !strings.Contains(args, "-c\n"+hook+"\n") || !strings.Contains(args, trust) {
			t.Errorf("%s: hook or its trust missing from\n%s", ev, args)
		}
	}
	for _, own := range [][]string{{"codex", "-c", "hooks.Stop=[]"}, {"codex", "--config=hooks.state={}"}} {
		if l, _ := Codex().Launch(own, LaunchSpec{Hooks: fakeHooks, EventsFile: "/st/ev.jsonl", Home: t.TempDir()}); strings.Contains(strings.Join(l.Args, " "), "hooks.") || !l.Events {
			t.Errorf("%q: swarm's hooks given beside the command's own: %+v", own, l)
		}
	}
}
