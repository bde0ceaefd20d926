package agenttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// Agent telemetry (issue 18) with the real Claude Code: swarm starts it
// with its hooks and status line (--settings), ends a turn on its Stop
// event, pauses at its permission request, fails an iteration on its
// StopFailure, adds up its cost, keeps a --max-cost; and without hooks
// (disableAllHooks) runs on the screen as before.

// perTurn is what one turn of the mock costs claude's default model
// ($5 per million input tokens: about two cents), a turn's usage set
// exactly (mockapi.WithUsage).
var perTurn = mockapi.Usage{Input: 4000, Output: 20}

// The Stop event ends the turn at once, at the default settings (2 s
// poll, 15 s idle grace, 1 s restart delay): from the mock's last byte of
// the answer to the next iteration's START. This is the figure of
// docs/agents.md (target: at most 1.5 s; by the screen it was the idle
// grace plus a poll, about 17 s).
func TestLoopStopEventEndsTheTurn(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "stop", loopOpts{
		poll: 2 * time.Second,
		replies: []mockapi.Reply{
			mockapi.Text("Did the first step.").WithUsage(perTurn),
			mockapi.Text("Did the second step.").WithUsage(perTurn),
			mockapi.Text("All done.\n<promise>COMPLETE</promise>").WithUsage(perTurn),
		},
		flags: []string{"--max-iterations", "5"},
	})
	code, out := l.wait(4 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 3 {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations\n%s", code, out, l.str("exit_reason"), l.num("current_iteration"), l.iterLog())
	}
	turns := l.mock.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d turns, want 3", len(turns))
	}
	var gaps []time.Duration
	for i := 1; i <= 2; i++ {
		gaps = append(gaps, l.watch.started(i+1).Sub(turns[i-1].End))
	}
	worst := max(gaps[0], gaps[1])
	if worst > 5*time.Second {
		t.Errorf("answer to next START took %v: the turn did not end on the Stop event\n%s\n%s", worst, l.iterLog(), l.monitorLog())
	}
	if !strings.Contains(l.monitorLog(), "the agent reported its turn finished") || l.str("state_source") != "hooks" {
		t.Errorf("not ended by the agent's event (state source %q):\n%s", l.str("state_source"), l.monitorLog())
	}
	t.Logf("result: Stop event at default settings (poll 2s, idle grace 15s, restart delay 1s): answer to next START %v and %v; %s after %d iterations%s",
		gaps[0].Round(10*time.Millisecond), gaps[1].Round(10*time.Millisecond), l.str("exit_reason"), l.num("current_iteration"), l.rescues())
}

// After one iteration its cost and tokens are in ralph status --format
// json (the iteration's and the loop's), and on the END line.
func TestLoopCostVisibleAfterOneIteration(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "cost", loopOpts{
		replies: []mockapi.Reply{
			mockapi.Text("Did the first step.").WithUsage(perTurn),
			// Iteration 2 thinks while its cost is looked at.
			mockapi.Text("Did the second step.").WithUsage(perTurn).Think(2 * time.Minute),
		},
		flags: []string{"--max-iterations", "2"},
	})
	// Iteration 2's claude has reported (SessionStart): its hooks run.
	l.eventually("iteration 2's agent to report", 2*time.Minute, func() bool {
		return l.num("current_iteration") == 2 && l.str("state_source") == "hooks"
	})
	r := l.env.Run("ralph", "status", l.name, "--format", "json")
	var st map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("ralph status --format json: %v\n%s", err, r)
	}
	cost, _ := st["cost_usd"].(float64)
	it, _ := st["iteration_usage"].([]any)
	var first map[string]any
	if len(it) > 0 {
		first, _ = it[0].(map[string]any)
	}
	if cost <= 0 || first == nil || first["iteration"] != float64(1) || first["cost_usd"] != cost || st["input_tokens"].(float64) < float64(perTurn.Input) {
		t.Fatalf("after one iteration: cost_usd %v, iteration_usage %v, input_tokens %v", st["cost_usd"], st["iteration_usage"], st["input_tokens"])
	}
	end := logLines(l.iterLog(), "END")
	if len(end) == 0 || !strings.Contains(end[0], " cost=$") || !strings.Contains(end[0], " tokens=") {
		t.Errorf("END line %q", end)
	}
	text := l.status()
	if !strings.Contains(text, "Cost: $") || !strings.Contains(text, "State source: hooks") {
		t.Errorf("ralph status:\n%s", text)
	}
	if r := l.env.Run("kill", l.name); r.Code != 0 {
		t.Errorf("kill: %s", r)
	}
	t.Logf("result: cost after one iteration: $%.4f (%v tokens of input, %v of output) in ralph status --format json; END line %q", cost, st["input_tokens"], st["output_tokens"], strings.TrimSpace(end[0][strings.Index(end[0], "[END]"):]))
}

// --max-cost 0.05 with turns of about two cents: the loop ends with
// max_cost at the first iteration's end that reaches the budget, exit 0
// (docs/completion.md: a budget is a cap), having started no iteration
// past it.
func TestLoopMaxCostEndsTheLoop(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "budget", loopOpts{
		replies: []mockapi.Reply{mockapi.Text("Did a step.").WithUsage(perTurn).Repeat(-1)},
		flags:   []string{"--max-cost", "0.05", "--max-iterations", "10"},
	})
	code, out := l.wait(4 * time.Minute)
	n := l.num("current_iteration")
	if code != 0 || l.str("exit_reason") != "max_cost" || !strings.Contains(l.iterLog(), "reason=max_cost") {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations\n%s", code, out, l.str("exit_reason"), n, l.iterLog())
	}
	var spent []float64
	for _, u := range l.state()["iteration_usage"].([]any) {
		spent = append(spent, u.(map[string]any)["cost_usd"].(float64))
	}
	before := 0.0
	for _, c := range spent[:len(spent)-1] {
		before += c
	}
	total := l.state()["cost_usd"].(float64)
	if len(spent) != n || before >= 0.05 || total < 0.05 || len(l.mock.Turns()) != n {
		t.Errorf("%d iterations spent %v (total $%.4f, $%.4f before the last); %d turns", n, spent, total, before, len(l.mock.Turns()))
	}
	t.Logf("result: --max-cost 0.05: %s after %d iterations, spent $%.4f ($%.4f before the last), ralph wait exit %d: %s",
		l.str("exit_reason"), n, total, before, code, out)
}

// A turn that goes on spending (a tool call after another, each about
// two cents) crosses --max-cost mid-turn: the agent is stopped there and
// the loop ends with max_cost.
func TestLoopMaxCostStopsTheTurn(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "midturn", loopOpts{
		replies: []mockapi.Reply{mockapi.Bash("sleep 1").WithUsage(perTurn).Repeat(20), mockapi.Text("Done.").WithUsage(perTurn)},
		flags:   []string{"--max-cost", "0.05", "--max-iterations", "3"},
	})
	code, out := l.wait(4 * time.Minute)
	turns := len(l.mock.Turns())
	if code != 0 || l.str("exit_reason") != "max_cost" || l.num("current_iteration") != 1 || turns >= 20 {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations, %d requests\n%s", code, out, l.str("exit_reason"), l.num("current_iteration"), turns, l.iterLog())
	}
	if !strings.Contains(l.monitorLog(), "cost budget ($0.05) reached") {
		t.Errorf("monitor.log:\n%s", l.monitorLog())
	}
	t.Logf("result: --max-cost 0.05 crossed mid-turn: the agent stopped after %d of its 21 requests, $%.4f spent; %s, exit %d",
		turns, l.state()["cost_usd"].(float64), l.str("exit_reason"), code)
}

// A 429 that claude gives up on (no retries left) is reported as a
// StopFailure and counted as a failed iteration (backoff), its error
// from the event (no screen bullet).
func TestLoopStopFailureIsAFailure(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "fail429", loopOpts{
		cfg:     Config{Env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}},
		replies: []mockapi.Reply{mockapi.RateLimit(0).Repeat(-1)},
		flags:   []string{"--max-iterations", "2"},
	})
	code, out := l.wait(4 * time.Minute)
	last := l.str("last_error")
	if code != 0 || l.str("exit_reason") != "max_iterations" || l.num("total_failures") != 2 ||
		!strings.Contains(last, "429") || strings.HasPrefix(last, "●") || len(logLines(l.iterLog(), "FAIL")) != 2 {
		t.Fatalf("ralph wait exit %d (%s); reason %q, failures %d, last error %q\n%s", code, out, l.str("exit_reason"), l.num("total_failures"), last, l.iterLog())
	}
	t.Logf("result: StopFailure (429, no retries): %d failed iterations, last error %q; %s, exit %d", l.num("total_failures"), last, l.str("exit_reason"), code)
}

// With hooks turned off (disableAllHooks) no event and no status line
// comes: the loop ends turns by the screen, as before, and says so.
func TestLoopHooksDisabledRunsOnTheScreen(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "nohooks", loopOpts{
		cfg: Config{DisableHooks: true},
		replies: []mockapi.Reply{
			mockapi.Text("Did the first step."),
			mockapi.Text("All done.\n<promise>COMPLETE</promise>"),
		},
		flags: []string{"--idle-grace", "3s", "--max-iterations", "4"},
	})
	l.eventually("iteration 2", 2*time.Minute, func() bool { return l.num("current_iteration") == 2 })
	status := l.status()
	code, out := l.wait(3 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 2 || l.str("state_source") != "screen" {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations, source %q\n%s", code, out, l.str("exit_reason"), l.num("current_iteration"), l.str("state_source"), l.iterLog())
	}
	if !strings.Contains(status, "State source: screen") || strings.Contains(l.monitorLog(), "reported its turn") {
		t.Errorf("ralph status:\n%s\nmonitor.log:\n%s", status, l.monitorLog())
	}
	t.Logf("result: hooks disabled: %s after %d iterations by the screen (state source %s), exit %d", l.str("exit_reason"), l.num("current_iteration"), l.str("state_source"), code)
}

// A Stop hook of the project's own blocks the first end of the turn (exit
// 2: "check again"): Claude Code goes on in the same turn, and the loop
// does not take swarm's Stop of it for the turn's end; the turn ends at
// the next Stop, which the hook lets through, in iteration 1.
func TestLoopUserStopHookBlocksTheEnd(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "gate", loopOpts{
		replies: []mockapi.Reply{
			mockapi.Text("Working through the items. Not done yet."),
			// It thinks a while: the loop sees the first Stop well
			// before the second.
			mockapi.Text("Checked again. All done.\n<promise>COMPLETE</promise>").Think(5 * time.Second),
		},
		flags: []string{"--max-iterations", "2"},
		before: func(s *Setup) {
			gate := filepath.Join(s.Dir, "gate.sh")
			script := "#!/bin/sh\nif [ -e \"$0.done\" ]; then exit 0; fi\n: > \"$0.done\"\necho 'check the items again before you stop' >&2\nexit 2\n"
			settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + gate + `"}]}]}}`
			if err := os.WriteFile(gate, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(s.Dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	})
	code, out := l.wait(3 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
	}
	if n := l.num("current_iteration"); n != 1 {
		t.Errorf("%d iterations; want 1: the blocked Stop ended the first turn\n%s", n, l.iterLog())
	}
	if n := len(l.mock.Turns()); n != 2 {
		t.Errorf("%d turns, want 2 (the answer the hook blocked, then the one after)", n)
	}
	t.Logf("result: a Stop blocked by the project's own Stop hook: %s after %d iteration(s), %d turns", l.str("exit_reason"), l.num("current_iteration"), len(l.mock.Turns()))
}

// A loop whose command resumes a session of the user's (claude --resume
// ID) is charged what this run spends, not the replies of the session's
// earlier run, which its transcript holds (and whose cost Claude Code
// restores on its status line).
func TestLoopResumedSessionIsNotChargedItsPast(t *testing.T) {
	Require(t)
	t.Parallel()
	const session = "5f1c0d2e-8a47-4c1b-9d3e-2a6b7c8d9e0f"
	past := mockapi.Usage{Input: 90000, Output: 500}
	l := startLoop(t, "resume", loopOpts{
		replies: []mockapi.Reply{
			mockapi.Text("An earlier run's answer.").WithUsage(past),
			mockapi.Text("Resumed and done.\n<promise>COMPLETE</promise>").WithUsage(perTurn),
		},
		flags: []string{"--max-iterations", "2"},
		args:  []string{"--resume", session},
		before: func(s *Setup) {
			// The session's earlier run, before the loop: claude -p.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, s.Bin, append(slices.Clone(skip), "-p", "--session-id", session, "Do an earlier step.")...)
			cmd.Dir, cmd.Env = s.Dir, s.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("claude -p: %v\n%s", err, out)
			}
		},
	})
	code, out := l.wait(3 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q\n%s", code, out, l.str("exit_reason"), l.iterLog())
	}
	st := l.state()
	in, _ := st["input_tokens"].(float64)
	cost, _ := st["cost_usd"].(float64)
	if in != float64(perTurn.Input) || cost <= 0 || cost > 0.1 {
		t.Errorf("charged %v input tokens and $%v; want this run's %d tokens (about $0.02), not the earlier run's %d too\n%s", in, cost, perTurn.Input, past.Input, l.iterLog())
	}
	t.Logf("result: a resumed session: charged %v input tokens, $%.4f (its earlier run: %d input tokens)", in, cost, past.Input)
}

// A permission the agent asks for that the project's own PermissionRequest
// hook allows is never shown: the tool runs, the turn ends, and the loop
// never pauses (its PermissionRequest event alone is no dialog).
func TestLoopPermissionAllowedByAUserHookDoesNotPause(t *testing.T) {
	Require(t)
	t.Parallel()
	mode := "manual" // 2.1.332 starts in auto mode, where nothing is asked
	if Version() == "2.1.197" {
		mode = "default"
	}
	l := startLoop(t, "allow", loopOpts{askPermissions: true, noRescue: true,
		replies: []mockapi.Reply{
			mockapi.Bash("touch DONE"),
			// It thinks a while after the tool: the loop sees the
			// permission asked well before the turn's end.
			mockapi.Text("Created DONE.\n<promise>COMPLETE</promise>").Think(5 * time.Second),
		},
		flags: []string{"--max-iterations", "2"},
		args:  []string{"--permission-mode", mode},
		before: func(s *Setup) {
			allow := filepath.Join(s.Dir, "allow.sh")
			script := `#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'
`
			if err := os.WriteFile(allow, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			settings := `{"hooks":{"PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + allow + `"}]}]}}`
			if err := os.MkdirAll(filepath.Join(s.Dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	})
	code, out := l.wait(3 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" || strings.Contains(l.iterLog(), "[PAUSE]") {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q\n%s", code, out, l.str("exit_reason"), l.iterLog())
	}
	if _, err := os.Stat(filepath.Join(l.setup.Dir, "DONE")); err != nil {
		t.Errorf("the allowed tool did not run: %v", err)
	}
	ev, _ := os.ReadFile(filepath.Join(l.env.Home, "ralph", l.name, "output", "iteration-0001.events.jsonl"))
	if !strings.Contains(string(ev), `"event":"PermissionRequest"`) {
		t.Errorf("no PermissionRequest reported: the scenario did not ask\n%s", ev)
	}
	t.Logf("result: a permission a user's hook allowed (--permission-mode %s): %s, no pause, %d turns", mode, l.str("exit_reason"), len(l.mock.Turns()))
}
