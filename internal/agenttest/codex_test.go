package agenttest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/mockapi"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// The Codex CLI answers a prompt from the mock's Responses API
// (non-interactive `codex exec`; the TUI is not covered yet).
func TestCodexExec(t *testing.T) {
	Require(t)
	mock := StartMock(t, mockapi.Text("The magic word is plugh-7."))
	s := PrepareCodex(t, mock)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Bin, "exec", "--skip-git-repo-check", "Tell me the magic word.")
	cmd.Dir, cmd.Env = s.Dir, s.Env
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("codex exec took %v", time.Since(began).Round(time.Millisecond))
	if err != nil || !strings.Contains(string(out), "plugh-7") {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	turns := mock.Turns()
	if len(turns) != 1 || !strings.Contains(turns[0].UserText(), "Tell me the magic word.") {
		t.Fatalf("turns: %d, user text %q", len(turns), turns[0].UserText())
	}
	var tools []string
	for _, tool := range turns[0].Responses.Tools {
		tools = append(tools, tool.Type+":"+tool.Name)
	}
	t.Logf("codex offered tools: %s; auth %q", strings.Join(tools, " "), turns[0].Header.Get("Authorization"))
	for _, r := range mock.Requests() {
		t.Logf("request: %s %s turn=%v", r.Method, r.Path, r.Turn)
	}
}

// Codex started as a loop starts it (internal/agent's Launch: -c
// notify=[swarm _event ...]) reports its completed turn, with its last
// message, to the events file, and its rollout has the turn's tokens.
func TestCodexNotifyAndRollout(t *testing.T) {
	Require(t)
	mock := StartMock(t, mockapi.Text("All done. <promise>COMPLETE</promise>").WithUsage(mockapi.Usage{Input: 1200, Output: 30, CacheRead: 800}))
	s := PrepareCodex(t, mock)
	t.Parallel()
	swarm, _ := testenv.Binaries(t)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	hooks := agent.HookCommands{Event: func(ev, format string) []string {
		return []string{swarm, "_event", "--events", ev, "--format", format}
	}}
	l, err := agent.Codex().Launch([]string{s.Bin}, agent.LaunchSpec{Hooks: hooks, EventsFile: events, Home: s.Home, Env: s.Env})
	if err != nil || !l.Events {
		t.Fatalf("launch %+v: %v", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{"exec", "--skip-git-repo-check"}, l.Args...), "Finish the task.")
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Dir, cmd.Env = s.Dir, s.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("codex exec %q: %v\n%s", args, err, out)
	}
	var stop agent.Event
	testenv.Eventually(t, "codex's notify to report the turn", 20*time.Second, func() bool {
		lines, _, _ := state.ReadEvents(events, 0)
		for _, line := range lines {
			if ev, err := agent.ParseEvent(line); err == nil && ev.Name == agent.EventStop {
				stop = ev
				return true
			}
		}
		return false
	})
	if !strings.Contains(stop.Message, "<promise>COMPLETE</promise>") || stop.Session == "" {
		t.Errorf("Stop event %+v", stop)
	}
	u, err := agent.Codex().UsageReader(agent.UsageRef{SessionID: stop.Session, Home: s.Home, Env: s.Env}).Read()
	if err != nil || u.Input != 1200 || u.CacheRead != 800 || u.Output != 30 {
		t.Errorf("rollout usage %+v, %v; want the mock's 1200 input, 800 cached, 30 output", u, err)
	}
	t.Logf("result: codex notify: Stop of thread %s with its last message; rollout usage %+v", stop.Session, u)
}

// Codex started as a loop starts it runs swarm's hooks, trusted in the
// same -c layer (no /hooks review, no other hook's trust changed): the
// prompt taken, and the turn's end with its last message and session,
// beside notify's.
func TestCodexHooksReport(t *testing.T) {
	Require(t)
	mock := StartMock(t, mockapi.Text("Hooked. <promise>COMPLETE</promise>"))
	s := PrepareCodex(t, mock)
	t.Parallel()
	swarm, _ := testenv.Binaries(t)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	hooks := agent.HookCommands{Event: func(ev, format string) []string {
		return []string{swarm, "_event", "--events", ev, "--format", format}
	}}
	l, err := agent.Codex().Launch([]string{s.Bin}, agent.LaunchSpec{Hooks: hooks, EventsFile: events, Home: s.Home, Env: s.Env})
	if err != nil || !l.Events {
		t.Fatalf("launch %+v: %v", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{"exec", "--skip-git-repo-check"}, l.Args...), "Finish the task.")
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Dir, cmd.Env = s.Dir, s.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex exec %q: %v\n%s", args, err, out)
	}
	seen := map[string]agent.Event{}
	testenv.Eventually(t, "codex's hooks to report the prompt and the turn's end", 20*time.Second, func() bool {
		lines, _, _ := state.ReadEvents(events, 0)
		for _, line := range lines {
			if ev, err := agent.ParseEvent(line); err == nil {
				key := ev.Name
				if ev.Name == agent.EventStop && ev.Kind == "" && strings.Contains(string(line), `"transcript"`) {
					key = "hook-Stop"
				}
				seen[key] = ev
			}
		}
		_, prompt := seen[agent.EventUserPromptSubmit]
		_, stop := seen["hook-Stop"]
		return prompt && stop
	})
	stop := seen["hook-Stop"]
	if !strings.Contains(stop.Message, "<promise>COMPLETE</promise>") || stop.Session == "" {
		t.Errorf("the Stop hook's event %+v", stop)
	}
	t.Logf("result: codex %s hooks: %d kinds of event (%v); Stop of session %s, transcript %s", CodexVersionInUse(), len(seen), keys(seen), stop.Session, stop.Transcript)
}

func keys(m map[string]agent.Event) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
