package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// stopInput is what Claude Code hands its Stop hook (2.1.197).
const stopInput = `{"session_id":"s-1","transcript_path":"/h/.claude/projects/p/s-1.jsonl","cwd":"/h/proj","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All done.\n<promise>COMPLETE</promise>","background_tasks":[]}`

// runEventWith runs _event in-process with args and stdin, and returns
// its stdout and stderr.
func runEventWith(t *testing.T, stdin string, args ...string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	f := newFactory(&IO{In: strings.NewReader(stdin), Out: &out, Err: &errb}, t.TempDir())
	cmd := newCmdEvent(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("_event %q: %v (it must never fail)", args, err)
	}
	return out.String(), errb.String()
}

// eventLines reads the events file back.
func eventLines(t *testing.T, path string) []agent.Event {
	t.Helper()
	lines, _, err := state.ReadEvents(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Event
	for _, l := range lines {
		ev, err := agent.ParseEvent(l)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, ev)
	}
	return out
}

// A hook appends one line per event the loop reads; an event it does not
// read, a broken input or a file it must not write are reported, and the
// hook still succeeds (it must never fail the agent).
func TestEventHookAppends(t *testing.T) {
	t.Parallel()
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	runEventWith(t, stopInput, "--events", events)
	runEventWith(t, `{"hook_event_name":"PreToolUse","session_id":"s-1","tool_name":"Bash","tool_input":{"command":"ls"}}`, "--events", events, "--format", "claude")
	runEventWith(t, "", "--events", events, "--format", "codex", `{"type":"agent-turn-complete","thread-id":"t-9","last-assistant-message":"ok"}`)
	if _, stderr := runEventWith(t, `{"hook_event_name":"PostCompact"}`, "--events", events); stderr != "" {
		t.Errorf("an event swarm does not read is no error: %q", stderr)
	}
	_, stderr := runEventWith(t, `{"hook_event_name":`, "--events", events)
	if !strings.Contains(stderr, "swarm: error: hook input") {
		t.Errorf("broken input: stderr %q", stderr)
	}
	got := eventLines(t, events)
	names := []string{}
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := []string{agent.EventStop, agent.EventPreToolUse, agent.EventStop, agent.EventHookError}; !slices.Equal(names, want) {
		t.Fatalf("events %q, want %q", names, want)
	}
	if got[0].Message != "All done.\n<promise>COMPLETE</promise>" || got[0].Session != "s-1" || got[2].Session != "t-9" || got[1].Tool != "Bash" {
		t.Errorf("events %+v", got)
	}
	// Through a symbolic link: refused, reported, exit 0.
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	link := filepath.Join(dir, "ev.jsonl")
	os.Symlink(victim, link)
	if _, stderr := runEventWith(t, stopInput, "--events", link); !strings.Contains(stderr, "swarm: error:") {
		t.Errorf("a link: stderr %q", stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("written through a link: %q", b)
	}
}

// The status line keeps its figures for the loop and runs the user's own
// status line on the same input, whose output is what Claude Code shows.
func TestEventStatusLineChains(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "status.json")
	input := `{"session_id":"s-1","model":{"id":"m"},"cost":{"total_cost_usd":0.42},"context_window":{"used_percentage":37}}`
	out, stderr := runEventWith(t, input, "--status", file, "--chain", `printf 'mine: '; grep -o '"total_cost_usd":[0-9.]*'`)
	if out != "mine: \"total_cost_usd\":0.42\n" || stderr != "" {
		t.Errorf("chained status line printed %q (stderr %q)", out, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.ParseStatus(data)
	if err != nil || s.CostUSD == nil || *s.CostUSD != 0.42 || s.ContextPercent == nil || *s.ContextPercent != 37 || s.Time.IsZero() {
		t.Errorf("status %s: %+v, %v", data, s, err)
	}
	// Without a user's status line it prints nothing.
	if out, _ := runEventWith(t, input, "--status", file); out != "" {
		t.Errorf("printed %q", out)
	}
}

// The hook as the agent runs it: this binary, started for each event,
// back within milliseconds (docs/agents.md: at most 50 ms).
func TestEventHookIsFast(t *testing.T) {
	swarm, _ := testenv.Binaries(t)
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	var took []time.Duration
	for range 15 {
		c := exec.Command(swarm, eventCommand, "--events", events, "--format", "claude")
		c.Stdin = strings.NewReader(stopInput)
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("hook: %v %q", err, out)
		}
		took = append(took, time.Since(start))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if n := len(eventLines(t, events)); n != 15 {
		t.Fatalf("%d events, want 15", n)
	}
	median := took[len(took)/2]
	t.Logf("result: swarm _event for a Stop hook: median %v, fastest %v, slowest %v", median, took[0], took[len(took)-1])
	// A loaded 2-core machine runs many tests at once: the bound here is
	// loose, the figure above is what a hook costs.
	if median > 250*time.Millisecond {
		t.Errorf("a hook took %v (median); it must return within milliseconds", median)
	}
}

// A hook exits 0 whatever it is handed: Claude Code reads 2 as "block"
// (a tool refused, a prompt dropped). A settings file written by another
// swarm version may pass a flag this one does not know.
func TestEventHookNeverExitsNonZero(t *testing.T) {
	for _, args := range [][]string{
		{eventCommand, "--bogus", "x"},
		{eventCommand, "a", "b"},
		{eventCommand},
	} {
		var out, errb bytes.Buffer
		if code := Main(args, &IO{In: strings.NewReader(stopInput), Out: &out, Err: &errb}); code != 0 || !strings.Contains(errb.String(), "swarm: error: ") {
			t.Errorf("%q: exit %d, stderr %q; want 0 and the error said", args, code, errb.String())
		}
	}
}

// A Stop message as long as the event keeps, full of characters JSON
// escapes (code: '<', '&', quotes, newlines), still makes its line, its
// end (the promise tag) kept.
func TestEventLongStopMessageFits(t *testing.T) {
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	msg := strings.Repeat("if a < b && c > \"d\" {\n", 4000) + "<promise>COMPLETE</promise>"
	in, _ := json.Marshal(map[string]any{"hook_event_name": "Stop", "session_id": "s1", "last_assistant_message": msg})
	_, stderr := runEventWith(t, string(in), "--events", events, "--format", "claude")
	evs := eventLines(t, events)
	if stderr != "" || len(evs) != 1 || evs[0].Name != agent.EventStop || !strings.HasSuffix(evs[0].Message, "<promise>COMPLETE</promise>") {
		t.Fatalf("stderr %q, events %d", stderr, len(evs))
	}
}
