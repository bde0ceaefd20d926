package heartbeat

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/testenv"
)

// Black-box tests through the real swarm binary. They skip until the
// commands are wired ("swarm heartbeat --help" exits 0), and then switch on
// by themselves.

var (
	cliOnce  sync.Once
	cliWired bool
)

// newCLIEnv is newHBEnv for a test that needs "swarm heartbeat".
func newCLIEnv(t *testing.T) *hbEnv {
	h := newHBEnv(t)
	cliOnce.Do(func() { cliWired = h.Run("heartbeat", "--help").Code == 0 })
	if !cliWired {
		t.Skip("swarm heartbeat is not wired into cmd/swarm yet")
	}
	return h
}

// expect checks a command's exit code, stdout and stderr exactly.
func (h *hbEnv) expect(r testenv.Result, code int, stdout, stderr string) {
	h.T.Helper()
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		h.T.Fatalf("got %s\nwant exit %d, stdout %q, stderr %q", r, code, stdout, stderr)
	}
}

func TestCLIStartStopMessages(t *testing.T) {
	h := newCLIEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.expect(h.Run("heartbeat", "start", "w", "--interval", "4h", "--expire", "24h"), 0,
		"Heartbeat started for w (every 4h, expires in 24h)\n", "")
	if n := len(h.procsOf(h.Swarm)); n != 1 {
		t.Fatalf("%d heartbeat processes after start", n)
	}
	h.expect(h.Run("heartbeat", "start", "w", "--interval", "4h"), 1, "",
		"swarm: error: heartbeat already active for 'w' (use --force to replace)\n")
	h.expect(h.Run("heartbeat", "start", "w", "--interval", "2h", "--force"), 0,
		"Heartbeat started for w (every 2h, no expiration)\n", "")
	if n := len(h.procsOf(h.Swarm)); n != 1 {
		t.Fatalf("%d heartbeat processes after --force, want 1", n)
	}
	h.expect(h.Run("heartbeat", "pause", "w"), 0, "Heartbeat paused for w\n", "")
	h.expect(h.Run("heartbeat", "pause", "w"), 1, "", "Heartbeat for w is not active (status: paused)\n")
	h.expect(h.Run("heartbeat", "resume", "w"), 0, "Heartbeat resumed for w\n", "")
	h.expect(h.Run("heartbeat", "resume", "w"), 1, "", "Heartbeat for w is not paused (status: active)\n")
	h.expect(h.Run("heartbeat", "stop", "w"), 0, "Heartbeat stopped for w\n", "")
	if daemon.Alive(h.store.LockPath("w")) || len(h.procsOf(h.Swarm)) != 0 {
		t.Fatal("stop returned with the heartbeat process alive")
	}
	h.expect(h.Run("heartbeat", "stop", "nobody"), 0, "No active heartbeat for nobody\n", "")
	for _, sub := range []string{"status", "pause", "resume"} {
		h.expect(h.Run("heartbeat", sub, "nobody"), 1, "", "No heartbeat found for nobody\n")
	}
}

func TestCLIStatusAndList(t *testing.T) {
	h := newCLIEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.MustRun("heartbeat", "start", "w", "--interval", "2h", "--expire", "24h")
	r := h.MustRun("heartbeat", "status", "w")
	for _, re := range []string{`(?m)^Worker: w$`, `(?m)^Status: active$`, `(?m)^Monitor: running \(pid \d+\)$`,
		`(?m)^Interval: 2h 0m$`, `(?m)^Message: continue$`, `(?m)^Expires: .* \(in 23h\)$`,
		`(?m)^Last beat: none$`, `(?m)^Next beat: in 1h$`, `(?m)^Beat count: 0$`} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("status lacks %s:\n%s", re, r.Stdout)
		}
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(h.MustRun("heartbeat", "status", "w", "--format", "json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st["worker_name"] != "w" || st["interval_seconds"] != 7200.0 || st["monitor_running"] != true || st["next_beat_at"] == nil {
		t.Errorf("status json %v", st)
	}
	for _, cmd := range []string{"list", "ls"} {
		out := h.MustRun("heartbeat", cmd).Stdout
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "WORKER          INTERVAL   NEXT BEAT") ||
			!regexp.MustCompile(`^w\s+2h 0m\s+in 1h\s+in 23h\s+active\s+0\s*$`).MatchString(lines[1]) {
			t.Errorf("%s:\n%s", cmd, out)
		}
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(h.MustRun("heartbeat", "list", "--format", "json").Stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("list json: %v %v", list, err)
	}
	h.MustRun("heartbeat", "stop", "w")
	if out := h.MustRun("heartbeat", "list").Stdout; !regexp.MustCompile(`(?m)^w\s+2h 0m\s+-\s+in 23h\s+stopped\s+0`).MatchString(out) {
		t.Errorf("list after stop:\n%s", out)
	}
}

func TestCLIListEmpty(t *testing.T) {
	h := newCLIEnv(t)
	h.expect(h.Run("heartbeat", "list"), 0, "No heartbeats found\n", "")
	h.expect(h.Run("heartbeat", "ls", "--format", "json"), 0, "[]\n", "")
}

func TestCLIStartErrors(t *testing.T) {
	h := newCLIEnv(t)
	h.MustRun("spawn", "--name", "bg", "--", "sleep", "100")
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.expect(h.Run("heartbeat", "start", "nope", "--interval", "4h"), 1, "", "swarm: error: worker 'nope' not found\n")
	h.expect(h.Run("heartbeat", "start", "bg", "--interval", "4h"), 1, "", "swarm: error: heartbeat requires tmux worker\n")
	h.expect(h.Run("heartbeat", "start", "w", "--interval", "abc"), 1, "", "swarm: error: invalid interval 'abc'\n")
	h.expect(h.Run("heartbeat", "start", "w", "--interval", "4h", "--expire", "0"), 1, "", "swarm: error: invalid expire '0'\n")
	if r := h.Run("heartbeat", "start", "w"); r.Code != 2 {
		t.Errorf("start without --interval: %s, want exit 2", r)
	}
	r := h.Run("heartbeat", "start", "w", "--interval", "30s")
	if r.Code != 0 || r.Stderr != "swarm: warning: very short interval (30s), consider using at least 1m\n" ||
		r.Stdout != "Heartbeat started for w (every 30s, no expiration)\n" {
		t.Errorf("short interval: %s", r)
	}
	if out := h.MustRun("heartbeat", "--help").Stdout; strings.Contains(out, "\n  run ") {
		t.Errorf("the process's own command is listed in help:\n%s", out)
	}
}

func TestCLIBeats(t *testing.T) {
	h := newCLIEnv(t)
	rec := h.spawnAgent("w")
	h.MustRun("heartbeat", "start", "w", "--interval", "1s")
	h.eventually("two beats", func() bool { return len(testenv.Records(t, rec)) >= 2 })
	if st := h.state("w"); st.BeatCount < 2 || st.LastBeatAt == "" {
		h.eventually("beat_count", func() bool { return h.state("w").BeatCount >= 2 })
	}
	r := h.Run("heartbeat", "run", "w")
	if r.Code != 1 || !strings.Contains(r.Stderr, "a heartbeat process is already running for 'w'") {
		t.Errorf("a second heartbeat run: %s", r)
	}
	if n := len(h.procsOf(h.Swarm)); n != 1 {
		t.Fatalf("%d heartbeat processes", n)
	}
}

func TestCLISpawnWithHeartbeat(t *testing.T) {
	h := newCLIEnv(t)
	r := h.MustRun("spawn", "--name", "w", "--tmux", "--heartbeat", "4h", "--heartbeat-expire", "24h", "--", "cat")
	if !strings.HasSuffix(r.Stdout, ":w)\nheartbeat started (every 4h, expires in 24h)\n") {
		t.Fatalf("spawn output %q", r.Stdout)
	}
	if st := h.state("w"); st.Status != StatusActive || !daemon.Alive(h.store.LockPath("w")) {
		t.Fatalf("heartbeat after spawn: %+v", st)
	}
	h.expect(h.Run("spawn", "--name", "bad", "--tmux", "--heartbeat", "abc", "--", "cat"), 1, "",
		"swarm: error: invalid heartbeat interval 'abc'\n")
	h.expect(h.Run("spawn", "--name", "bad", "--tmux", "--heartbeat", "4h", "--heartbeat-expire", "x", "--", "cat"), 1, "",
		"swarm: error: invalid heartbeat-expire 'x'\n")
	for _, w := range h.Workers() {
		if w["name"] == "bad" {
			t.Fatal("a spawn with bad heartbeat flags left a worker behind")
		}
	}
	r = h.Run("spawn", "--name", "bg", "--heartbeat", "4h", "--", "sleep", "100")
	if r.Code != 0 || r.Stderr != "swarm: warning: --heartbeat requires --tmux, skipping heartbeat\n" {
		t.Errorf("process worker with --heartbeat: %s", r)
	}
	if st, _ := h.store.Load("bg"); st != nil {
		t.Error("a heartbeat was created for a process worker")
	}
	h.WriteFile("PROMPT.md", "work")
	r = h.MustRun("ralph", "spawn", "--name", "r", "--prompt-file", "PROMPT.md", "--no-worktree",
		"--heartbeat", "2h", "--heartbeat-message", "go on", "--", h.Agent, "--script", "wait;quiet")
	if !strings.Contains(r.Stdout, "heartbeat started (every 2h, no expiration)\n") {
		t.Fatalf("ralph spawn output %q", r.Stdout)
	}
	if st := h.state("r"); st.Message != "go on" || !daemon.Alive(h.store.LockPath("r")) {
		t.Fatalf("ralph heartbeat %+v", st)
	}
}

// kill and clean end the worker's heartbeat before they return.
func TestCLIKillStopsHeartbeat(t *testing.T) {
	h := newCLIEnv(t)
	for i, cmd := range [][]string{{"kill", "w0"}, {"ralph", "stop", "w1"}} {
		name := fmt.Sprintf("w%d", i)
		if i == 0 {
			h.MustRun("spawn", "--name", name, "--tmux", "--", "cat")
		} else {
			h.WriteFile("PROMPT.md", "work")
			h.MustRun("ralph", "spawn", "--name", name, "--prompt-file", "PROMPT.md", "--no-worktree", "--",
				h.Agent, "--script", "wait;quiet")
		}
		h.MustRun("heartbeat", "start", name, "--interval", "4h")
		h.MustRun(cmd...)
		if daemon.Alive(h.store.LockPath(name)) {
			t.Fatalf("%v returned with the heartbeat process alive", cmd)
		}
		if st := h.state(name); st.Status != StatusStopped {
			t.Fatalf("%v: heartbeat status %s", cmd, st.Status)
		}
	}
}
