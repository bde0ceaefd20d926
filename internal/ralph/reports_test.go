package ralph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// The events of a turn, read in order: what ends it, what holds it at a
// dialog, and which events are the turn before's.
func TestJudgeEvents(t *testing.T) {
	t.Parallel()
	ev := func(name string, kv ...string) agent.Event {
		e := agent.Event{Name: name}
		for i := 0; i+1 < len(kv); i += 2 {
			switch kv[i] {
			case "kind":
				e.Kind = kv[i+1]
			case "message":
				e.Message = kv[i+1]
			case "tool":
				e.Tool = kv[i+1]
			case "detail":
				e.Detail = kv[i+1]
			}
		}
		return e
	}
	prompt, stop := ev(agent.EventUserPromptSubmit), ev(agent.EventStop, "message", "done")
	perm := ev(agent.EventPermissionRequest, "tool", "Bash", "detail", "touch DONE")
	tool := ev(agent.EventPreToolUse, "tool", "Bash")
	cases := []struct {
		name       string
		evs        []agent.Event
		needPrompt bool
		prompted   bool
		end        TurnEnd
		dialog     string // its line
		worked     bool
		used       int
	}{
		{"a turn that ends", []agent.Event{ev(agent.EventSessionStart), prompt, tool, stop}, true, false, TurnStopped, "", true, 4},
		{"a late Stop of the turn before is not this one's end", []agent.Event{stop}, true, false, TurnGoesOn, "", false, 1},
		{"nor before this turn's prompt", []agent.Event{stop, prompt}, true, false, TurnGoesOn, "", true, 2},
		{"prompted earlier", []agent.Event{stop}, true, true, TurnStopped, "", false, 1},
		{"an agent that reports no prompts", []agent.Event{stop}, false, false, TurnStopped, "", false, 1},
		{"events after the end are the next turn's", []agent.Event{prompt, stop, prompt, stop}, true, false, TurnStopped, "", true, 2},
		{"a permission asked is no dialog yet (a hook of the user's may allow it)", []agent.Event{prompt, tool, perm}, true, false, TurnGoesOn, "", true, 3},
		{"a permission notified", []agent.Event{prompt, ev(agent.EventNotification, "kind", "permission_prompt", "message", "Claude needs your permission")}, true, false, TurnGoesOn, "Claude needs your permission", true, 2},
		{"a question", []agent.Event{prompt, ev(agent.EventNotification, "kind", "elicitation_dialog", "message", "Pick one")}, true, false, TurnGoesOn, "Pick one", true, 2},
		{"idle for a minute is no dialog", []agent.Event{prompt, ev(agent.EventNotification, "kind", "idle_prompt")}, true, false, TurnGoesOn, "", true, 2},
		{"a tool ran: the permission was given", []agent.Event{prompt, perm, tool}, true, false, TurnGoesOn, "", true, 3},
		{"an API error", []agent.Event{prompt, ev(agent.EventStopFailure, "kind", "overloaded")}, true, false, TurnFailed, "", true, 2},
		{"a turn that ended is past its permission (a hook of the user's answered it)", []agent.Event{prompt, perm, stop}, true, false, TurnStopped, "", true, 3},
		{"an exit", []agent.Event{ev(agent.EventSessionEnd, "kind", "prompt_input_exit")}, true, false, TurnExited, "", false, 1},
		{"/clear is no exit", []agent.Event{ev(agent.EventSessionEnd, "kind", "clear")}, true, false, TurnGoesOn, "", false, 1},
	}
	for _, c := range cases {
		v := JudgeEvents(c.evs, c.needPrompt, c.prompted)
		line := ""
		if v.Dialog != nil {
			line = v.Dialog.Line
			if v.Dialog.State != agent.Dialog || (v.Dialog.Kind != agent.StuckPermission && v.Dialog.Kind != agent.StuckQuestion) {
				t.Errorf("%s: dialog %+v", c.name, v.Dialog)
			}
		}
		if v.End != c.end || line != c.dialog || v.Worked != c.worked || v.Used != c.used {
			t.Errorf("%s: end %d dialog %q worked %v used %d; want %d %q %v %d", c.name, v.End, line, v.Worked, v.Used, c.end, c.dialog, c.worked, c.used)
		}
	}
	for _, c := range []struct {
		name  string
		evs   []agent.Event
		asked string
	}{
		{"a permission asked", []agent.Event{prompt, tool, perm}, "Bash: touch DONE"},
		{"then a tool ran: allowed", []agent.Event{prompt, perm, tool}, ""},
		{"then the turn ended", []agent.Event{prompt, perm, stop}, ""},
	} {
		v := JudgeEvents(c.evs, true, false)
		line := ""
		if v.Asked != nil {
			line = v.Asked.Line
		}
		if line != c.asked || v.Dialog != nil {
			t.Errorf("%s: asked %q, dialog %+v; want asked %q and no dialog", c.name, line, v.Dialog, c.asked)
		}
	}
	if v := JudgeEvents([]agent.Event{ev(agent.EventHookError, "detail", "disk full")}, true, false); !slices.Equal(v.Errors, []string{"disk full"}) {
		t.Errorf("hook errors %q", v.Errors)
	}
}

// The END line's usage, after swarm.py's fields.
func TestUsageText(t *testing.T) {
	t.Parallel()
	c := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		u    state.Usage
		want string
	}{
		{state.Usage{}, ""},
		{state.Usage{CostUSD: c(0.42), InputTokens: 12000, OutputTokens: 345}, " cost=$0.42 tokens=12345"},
		{state.Usage{CostUSD: c(0.223919)}, " cost=$0.2239"},
		{state.Usage{CostUSD: c(1.5)}, " cost=$1.50"},
		{state.Usage{CostUSD: c(0.0031)}, " cost=$0.0031"},
		{state.Usage{CacheReadTokens: 7}, " tokens=7"},
	} {
		if got := usageText(tc.u); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.u, got, tc.want)
		}
	}
}

// testHooks are hook commands as the engine hands them to the agent; the
// hooked agent below reads its files back from them.
var testHooks = agent.HookCommands{
	Event:  func(events, format string) []string { return []string{"hook", events} },
	Status: func(file, chain string) []string { return []string{"status", file} },
}

// hookedAgent plays Claude Code started with swarm's hooks: it finds its
// events and status files in the settings file its command names
// (--settings), reports SessionStart, and its turns report through
// emit and cost.
type hookedAgent struct {
	*tmuxtest.Agent
	mu    sync.Mutex
	files map[*tmuxtest.Pane][2]string // events, status
	// silent: its hooks never fire (hooks turned off).
	silent bool
}

func newHookedAgent(turn func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string)) *hookedAgent {
	a := &hookedAgent{files: map[*tmuxtest.Pane][2]string{}}
	a.Agent = claudeAgent(func(p *tmuxtest.Pane, run int, msg string) { turn(a, p, run, msg) })
	return a
}

func (a *hookedAgent) Start(p *tmuxtest.Pane, command []string) {
	if i := slices.Index(command, "--settings"); i >= 0 && i+1 < len(command) {
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string }
			}
			StatusLine struct{ Command string }
		}
		data, _ := os.ReadFile(command[i+1])
		json.Unmarshal(data, &s)
		last := func(cmd string) string { f := strings.Fields(cmd); return strings.Trim(f[len(f)-1], "'") }
		a.mu.Lock()
		a.files[p] = [2]string{last(s.Hooks["Stop"][0].Hooks[0].Command), last(s.StatusLine.Command)}
		a.mu.Unlock()
	}
	a.Agent.Start(p, command)
	a.emit(p, agent.Event{Name: agent.EventSessionStart, Kind: "startup"})
}

// emit reports ev through the agent's hook.
func (a *hookedAgent) emit(p *tmuxtest.Pane, ev agent.Event) {
	a.mu.Lock()
	f, ok := a.files[p]
	a.mu.Unlock()
	if !ok || a.silent {
		return
	}
	ev.Time = time.Now()
	line, _ := json.Marshal(ev)
	state.AppendEvent(f[0], line, ev.Urgent())
}

// cost shows the session's cost so far on the status line.
func (a *hookedAgent) cost(p *tmuxtest.Pane, usd float64) {
	a.mu.Lock()
	f, ok := a.files[p]
	a.mu.Unlock()
	if !ok || a.silent {
		return
	}
	data, _ := json.Marshal(agent.Status{Time: time.Now(), CostUSD: &usd})
	state.WriteFileAtomic(f[1], data)
}

// hookedLoop is a loop of a hooked agent, with hooks set up, no idle
// grace to speak of (an hour) and no inactivity timeout: only the agent's
// events can end a turn that its screen does not.
func hookedLoop(t *testing.T, a *hookedAgent, o Options) *fakeLoop {
	o.IdleGrace.Duration = time.Hour
	o.InactivityTimeout.Duration = time.Hour
	l := newFakeLoop(t, a, claudeOptions(o))
	l.e.Hooks = testHooks
	return l
}

// The agent's Stop event ends its turn at once, without the idle grace
// (its screen still shows it working), its last message is judged for
// the promise, and what it spent is in the state and the END line.
func TestEngineStopEventEndsTheTurnAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			think(200 * time.Millisecond)
			a.cost(p, 0.0125*float64(run))
			answer := "Did one step."
			if run == 2 {
				answer += "\n<promise>COMPLETE</promise>"
			}
			a.emit(p, agent.Event{Name: agent.EventStop, Message: answer})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 5})
		start := time.Now()
		l.expectEnd(0, ReasonComplete, 2)
		if took := time.Since(start); took > time.Minute {
			t.Fatalf("took %v: the turns ended by the idle grace or a timeout", took)
		}
		log, _ := os.ReadFile(l.e.RS.LogPath())
		for _, want := range []string{"[END] iteration 1 exit=none reason=idle duration=", " cost=$0.0125\n", " cost=$0.025\n"} {
			if !strings.Contains(string(log), want) {
				t.Errorf("iterations.log lacks %q:\n%s", want, log)
			}
		}
		st := l.state()
		if st.CostUSD == nil || *st.CostUSD != 0.0375 || len(st.IterationUsage) != 2 || st.IterationUsage[1].Cost() != 0.025 || st.StateSource != state.SourceHooks {
			t.Errorf("usage %v %+v, source %q", st.CostUSD, st.IterationUsage, st.StateSource)
		}
		if !strings.Contains(l.out.String(), "the agent reported its turn finished") {
			t.Errorf("output:\n%s", l.out)
		}
	})
}

// A permission asked mid-turn (the agent's PermissionRequest) and shown
// pauses the loop with the tool named in the reason (as the hook gave
// it, not as the screen shows it); nothing is typed into the agent, and
// its iteration is held.
func TestEnginePermissionEventPausesTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			a.emit(p, agent.Event{Name: agent.EventPreToolUse, Tool: "Bash"})
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "touch DONE"})
			think(100 * time.Millisecond)
			p.SetScreen(claudePermission) // no hook of the user's allowed it
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		done := make(chan struct{})
		var reason string
		var keys int
		go func() {
			defer close(done)
			if !within(func() bool { st, err := l.e.RS.Load(); return err == nil && st.Status == state.RalphPaused }) {
				t.Error("the loop never paused")
				return
			}
			st, _ := l.e.RS.Load()
			reason = string(st.PauseReason)
			keys = len(l.srv.Window(l.srv.Windows()[0]).Keys)
			if clock.Wait(context.Background(), clock.Real, 5*time.Millisecond, time.Second, func() bool {
				st, _ := l.e.RS.Load()
				return st.Status != state.RalphPaused || !st.IterationActive
			}) {
				t.Error("the iteration was not held at the dialog")
			}
			markKilled(l.e.RS)
		}()
		l.run()
		<-done
		if !strings.Contains(reason, "the agent is waiting at a permission prompt (\"Bash: touch DONE\")") || !strings.Contains(reason, "swarm attach w") {
			t.Errorf("pause reason %q", reason)
		}
		if w := l.srv.Windows(); len(w) > 0 && len(l.srv.Window(w[0]).Keys) != keys {
			t.Errorf("keys were sent to the agent at its dialog")
		}
		if len(a.Messages()) != 1 {
			t.Errorf("messages %q", a.Messages())
		}
	})
}

// An API error the agent reports (StopFailure): overloaded fails the
// iteration (backoff), a failed authentication stops the loop with its
// fix at once.
func TestEngineStopFailureEvents(t *testing.T) {
	for _, c := range []struct {
		kind, message string
		code          int
		reason        state.ExitReason
		iterations    int
		hint          string
	}{
		{"overloaded", "API Error: 529 Overloaded", 1, ReasonFailed, 5, ""},
		{"authentication_failed", "Invalid API key · Please run /login", 1, ReasonFailed, 1, "ANTHROPIC_API_KEY"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
					a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
					a.emit(p, agent.Event{Name: agent.EventStopFailure, Kind: c.kind, Message: c.message})
				})
				l := hookedLoop(t, a, Options{MaxIterations: 10})
				l.expectEnd(c.code, c.reason, c.iterations)
				st := l.state()
				if st.TotalFailures != c.iterations || !strings.Contains(string(st.LastError), c.message) || !strings.Contains(string(st.ExitHint), c.hint) {
					t.Errorf("failures %d, last error %q, hint %q", st.TotalFailures, st.LastError, st.ExitHint)
				}
			})
		})
	}
}

// A usage limit the agent reports (StopFailure rate_limit, its message
// naming the reset) before its screen shows it is waited out, not
// failed: the hook runs before Claude Code draws the limit. The
// continuation typed at the reset finishes the work in the same
// iteration.
func TestEngineReportedUsageLimitIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			if msg == DefaultLimitMessage {
				a.emit(p, agent.Event{Name: agent.EventStop, Message: "Finished.\n<promise>COMPLETE</promise>"})
				return
			}
			// synctest's clock starts at midnight UTC: the reset is a minute on.
			a.emit(p, agent.Event{Name: agent.EventStopFailure, Kind: "rate_limit", Message: "You've hit your session limit · resets 12:01am (UTC)"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		start := time.Now()
		// The wait (the reset, and a minute's slack) is past run's 30 s.
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		code, err := l.e.Run(ctx)
		st := l.state()
		log, _ := os.ReadFile(l.e.RS.LogPath())
		if code != 0 || err != nil || st.ExitReason != ReasonComplete || st.CurrentIteration != 1 {
			t.Fatalf("exit %d (%v), reason %q after %d iterations\n%s\n%s", code, err, st.ExitReason, st.CurrentIteration, log, l.out)
		}
		if st.TotalFailures != 0 || !strings.Contains(string(log), "[LIMIT] iteration 1 until=") || !strings.Contains(string(log), "[RESUME] iteration 1: limit reset") {
			t.Errorf("failures %d; iterations.log:\n%s", st.TotalFailures, log)
		}
		if took := time.Since(start); took < time.Minute {
			t.Errorf("went on after %v, before the reset", took)
		}
		if a.Runs() != 1 {
			t.Errorf("%d agents started, want the one continued", a.Runs())
		}
	})
}

// A cost budget crossed mid-turn stops the agent and ends the loop with
// max_cost (exit 0); the budget is checked again before each iteration.
func TestEngineMaxCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var spending sync.WaitGroup
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			spending.Add(1)
			defer spending.Done()
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			for i := 1; i <= 20 && !p.Dead(); i++ {
				think(100 * time.Millisecond)
				a.cost(p, 0.01*float64(i)) // a long turn spending on
			}
		})
		l := hookedLoop(t, a, Options{MaxIterations: 5, MaxCost: 0.05})
		l.expectEnd(0, ReasonMaxCost, 1)
		spending.Wait()
		st := l.state()
		if st.CostUSD == nil || *st.CostUSD < 0.05 || *st.CostUSD > 0.07 || !strings.Contains(l.out.String(), "cost budget ($0.05) used up after 1 iterations") {
			t.Errorf("cost %v\n%s", st.CostUSD, l.out)
		}
		if a.Runs() != 1 {
			t.Errorf("%d agents started", a.Runs())
		}
	})
}

// An agent whose hooks never fire (hooks turned off) runs on its screen,
// as before, and the loop says so.
func TestEngineSilentHooksFallBackToTheScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeAnswered(firstLine(msg)))
		})
		a.silent = true
		l := newFakeLoop(t, a, claudeOptions(Options{MaxIterations: 2, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.e.Hooks = testHooks
		l.expectEnd(0, ReasonMaxIterations, 2)
		log, _ := os.ReadFile(l.e.RS.LogPath())
		if st := l.state(); st.StateSource != state.SourceScreen || strings.Count(string(log), "reason=idle") != 2 || st.CostUSD != nil {
			t.Errorf("source %q, cost %v\n%s", st.StateSource, st.CostUSD, log)
		}
	})
}

// A permission the agent reported, then also drawn on its screen, is one
// dialog: resumed before it is answered, the loop does not take the
// screen's menu for a second one (no second warning or pause), and ends
// on the agent's Stop once answered.
func TestEngineReportedDialogOnScreenPausesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answered := make(chan struct{})
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "ls -la"})
			// The hook fires before the dialog is drawn: polls in between
			// see the agent still working.
			think(100 * time.Millisecond)
			p.SetScreen(claudePermission)
			<-answered
			p.SetScreen(claudeWorking(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Listed. <promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		done := make(chan int, 1)
		go func() { code, _ := l.run(); done <- code }()
		waitFor(t, "the loop to pause at the reported permission", func() bool {
			st := l.state()
			return st.Status == state.RalphPaused && strings.Contains(string(st.PauseReason), "permission prompt")
		})
		if err := ResumeLoop(l.m, "w"); err != nil {
			t.Fatal(err)
		}
		holdsFor(t, "the loop stays running with the menu on screen", 200*time.Millisecond, func() bool { return l.state().Status == state.RalphRunning })
		close(answered)
		if code := <-done; code != 0 || l.state().ExitReason != ReasonComplete || l.events("PAUSE") != 1 || strings.Count(l.out.String(), "agent shows") != 1 {
			t.Fatalf("code %d, reason %q, %d pauses\n%s", code, l.state().ExitReason, l.events("PAUSE"), l.out)
		}
	})
}

// Codex is given no session id: the thread id its notify reports finds
// its rollout, whose token counts are the session's tokens (without it
// --max-tokens of a Codex loop was never kept).
func TestReportsFindCodexUsageByTheReportedSession(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	home := t.TempDir()
	thread := "01a219ef-988e-74d3-be61-3e3edd6fdeaa"
	dir := filepath.Join(home, ".codex", "sessions", "2026", "11", "26")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rollout := `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":50}}}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-26T21-00-00-"+thread+".jsonl"), []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	profile, ok := agent.Lookup("codex")
	if !ok {
		t.Fatal("no codex profile")
	}
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	line, _ := json.Marshal(agent.Event{Time: time.Now(), Name: agent.EventStop, Session: thread, Message: "done"})
	if err := state.AppendEvent(events, line, true); err != nil {
		t.Fatal(err)
	}
	tr := &turn{session: &session{rep: &reporting{eventsFile: events, statusFile: filepath.Join(t.TempDir(), "none"), hooked: true,
		ref: agent.UsageRef{Home: home, Env: []string{"CODEX_HOME=" + filepath.Join(home, ".codex")}}}}}
	tr.profile = profile
	l.e.readReports(tr)
	if u := tr.rep.tokens; u.Input != 400 || u.CacheRead != 600 || u.Output != 50 {
		t.Fatalf("tokens %+v; want the rollout's (400 input, 600 cached, 50 output)", u)
	}
}

// A session the user's own command resumes (claude --resume) is not
// charged the replies of its earlier runs, which its transcript holds:
// only those written since this iteration launched it.
func TestResumedSessionIsNotChargedItsEarlierUsage(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	l.e.Hooks = testHooks
	profile, ok := agent.Lookup("claude")
	if !ok {
		t.Fatal("no claude profile")
	}
	st := l.state()
	launch := func(cmd ...string) *turn {
		tr := &turn{session: &session{st: st, profile: profile}, iter: 1}
		l.e.agentCmd(tr, &state.Worker{Cmd: cmd, Env: map[string]string{"HOME": t.TempDir()}})
		if tr.rep == nil {
			t.Fatalf("%q: no reporting set up", cmd)
		}
		return tr
	}
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	now := time.Now().UTC()
	reply := func(id string, at time.Time, in int) string {
		return `{"type":"assistant","timestamp":"` + at.Format(time.RFC3339Nano) + `","requestId":"r` + id + `","message":{"id":"m` + id + `","usage":{"input_tokens":` + strconv.Itoa(in) + `,"output_tokens":1}}}` + "\n"
	}
	if err := os.WriteFile(transcript, []byte(reply("1", now.Add(-24*time.Hour), 5000)), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := launch("claude", "--resume", "abc")
	f, _ := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(reply("2", now.Add(time.Second), 7))
	f.Close()
	line, _ := json.Marshal(agent.Event{Time: now, Name: agent.EventSessionStart, Kind: "resume", Session: "abc", Transcript: transcript})
	if err := state.AppendEvent(tr.rep.eventsFile, line, true); err != nil {
		t.Fatal(err)
	}
	// Its status line shows the cost its earlier runs restored before the
	// prompt goes in, and this run's on top after.
	status := func(usd float64) {
		data, _ := json.Marshal(agent.Status{Time: time.Now(), CostUSD: &usd})
		if err := state.WriteFileAtomic(tr.rep.statusFile, data); err != nil {
			t.Fatal(err)
		}
	}
	status(1.5)
	l.e.dropEvents(tr) // the prompt goes in
	status(1.75)
	l.e.readReports(tr)
	if u := tr.rep.tokens; u.Input != 7 || u.Output != 1 {
		t.Fatalf("tokens %+v; want this run's reply only (7 input, 1 output), not the resumed session's earlier 5000", u)
	}
	if u := tr.turnUsage(); u.CostUSD == nil || *u.CostUSD != 0.25 {
		t.Errorf("cost %v; want this run's $0.25, not the restored $1.50 too", u.CostUSD)
	}
	// A session swarm names (--session-id) is new: its whole file counts.
	if tr := launch("claude"); !tr.rep.ref.Since.IsZero() {
		t.Errorf("a new session is read from a start time %v", tr.rep.ref.Since)
	}
}

// A permission the agent asks for that a PermissionRequest hook of the
// user's allows is never shown: the agent goes on with the tool, and the
// loop does not pause (its PermissionRequest alone is no dialog).
func TestEnginePermissionAllowedByAUserHookDoesNotPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			a.emit(p, agent.Event{Name: agent.EventPreToolUse, Tool: "Bash"})
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "make test"})
			think(5 * time.Second) // the allowed tool runs: no event until it is done
			p.SetScreen(claudeAnswered(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Tests pass. <promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		l.expectEnd(0, ReasonComplete, 1)
		if n := l.events("PAUSE"); n != 0 || strings.Contains(l.out.String(), "paused") {
			t.Errorf("%d pauses at a permission a hook allowed\n%s", n, l.out)
		}
	})
}

// A Stop that another Stop hook of the user's blocks does not end the
// turn: the agent goes on, and the turn ends at its next Stop that no
// hook blocks (the screen then shows it at its input box), in the same
// iteration, with that Stop's message judged for the promise.
func TestEngineStopBlockedByAUserStopHookGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			think(200 * time.Millisecond)
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Working through the items. Not done yet."})
			// The user's hook blocks ("run the tests first"): it goes on.
			think(3 * time.Second)
			a.emit(p, agent.Event{Name: agent.EventPreToolUse, Tool: "Bash"})
			think(2 * time.Second)
			p.SetScreen(claudeAnswered(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "All done.\n<promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 2})
		dir := filepath.Dir(l.prompt)
		settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./check-tests.sh"}]}]}}`
		if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
			t.Fatal(err)
		}
		l.expectEnd(0, ReasonComplete, 1)
		if a.Runs() != 1 {
			t.Errorf("%d agents started; the blocked Stop ended the first turn", a.Runs())
		}
	})
}

// A dialog the agent reported, answered, is over once its screen shows it
// working when its events file is past the cap of routine events (the
// tool use that would have said so was dropped): a second permission
// later in the turn pauses the loop again.
func TestEngineReportedDialogClearedPastTheEventsCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answered, again, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var filled bool
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "rm -rf build"})
			think(100 * time.Millisecond)
			p.SetScreen(claudePermission)
			<-answered
			p.SetScreen(claudeWorking(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventPreToolUse, Tool: "Bash"}) // refused: past the cap
			<-again
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "git push"})
			think(100 * time.Millisecond)
			p.SetScreen(claudePermission)
			<-done
			p.SetScreen(claudeAnswered(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Pushed. <promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 2})
		fill := func() {
			// The events file, nearly at the routine cap: a tool use no
			// longer fits, a permission still does.
			a.mu.Lock()
			defer a.mu.Unlock()
			for p, f := range a.files {
				_ = p
				if filled {
					return
				}
				filled = true
				pad := `{"event":"PostToolUse","detail":"` + strings.Repeat("x", 60<<10) + `"}`
				var b strings.Builder
				for b.Len()+len(pad)+1 <= state.MaxRoutineEvents-200 {
					b.WriteString(pad + "\n")
				}
				tail := state.MaxRoutineEvents - 200 - b.Len() - len(`{"event":"PostToolUse","detail":""}`) - 1
				b.WriteString(`{"event":"PostToolUse","detail":"` + strings.Repeat("x", tail) + `"}` + "\n")
				fh, err := os.OpenFile(f[0], os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
				if err != nil {
					t.Error(err)
					return
				}
				fh.WriteString(b.String())
				fh.Close()
			}
		}
		codes := make(chan int, 1)
		go func() { code, _ := l.run(); codes <- code }()
		waitFor(t, "the agent to start with its hooks", func() bool { a.mu.Lock(); n := len(a.files); a.mu.Unlock(); return n > 0 })
		fill()
		waitFor(t, "the loop to pause at the first permission", func() bool {
			return l.state().Status == state.RalphPaused && strings.Contains(string(l.state().PauseReason), "rm -rf build")
		})
		if err := ResumeLoop(l.m, "w"); err != nil {
			t.Fatal(err)
		}
		close(answered)
		waitFor(t, "the loop to see the agent work again", func() bool {
			st := l.state()
			return st.Status == state.RalphRunning && st.AgentState == "working"
		})
		close(again)
		waitFor(t, "the loop to pause at the second permission", func() bool {
			return l.state().Status == state.RalphPaused && strings.Contains(string(l.state().PauseReason), "git push")
		})
		if err := ResumeLoop(l.m, "w"); err != nil {
			t.Fatal(err)
		}
		close(done)
		if code := <-codes; code != 0 || l.state().ExitReason != ReasonComplete || l.events("PAUSE") != 2 {
			t.Fatalf("code %d, reason %q, %d pauses\n%s", code, l.state().ExitReason, l.events("PAUSE"), l.out)
		}
	})
}

// Codex reports a turn's end twice where its hooks run (their Stop, and
// notify's): once they are seen, notify's Stops are dropped and the
// prompt's own event counts; a Codex whose hooks never run ends its turn
// on notify's Stop alone, as before.
func TestCodexNotifyStopGivesWayToItsHooks(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	profile, ok := agent.Lookup("codex")
	if !ok {
		t.Fatal("no codex profile")
	}
	judge := func(evs ...agent.Event) (queued []string, v EventVerdict) {
		events := filepath.Join(t.TempDir(), "ev.jsonl")
		for _, ev := range evs {
			ev.Time = time.Now()
			line, _ := json.Marshal(ev)
			if err := state.AppendEvent(events, line, true); err != nil {
				t.Fatal(err)
			}
		}
		tr := &turn{session: &session{profile: profile, rep: &reporting{eventsFile: events, statusFile: filepath.Join(t.TempDir(), "none"), hooked: true}}}
		l.e.readEvents(tr)
		for _, ev := range tr.queue {
			queued = append(queued, ev.Name+"/"+ev.Kind)
		}
		return queued, JudgeEvents(tr.queue, tr.needPrompt(), tr.prompted)
	}
	notify := agent.Event{Name: agent.EventStop, Kind: agent.KindNotify, Session: "th", Message: "done"}
	hookStop := agent.Event{Name: agent.EventStop, Session: "th", Message: "done", Transcript: "/r.jsonl"}
	prompt := agent.Event{Name: agent.EventUserPromptSubmit, Session: "th"}
	if q, v := judge(prompt, hookStop, notify); !slices.Equal(q, []string{"UserPromptSubmit/", "Stop/"}) || v.End != TurnStopped {
		t.Errorf("hooks and notify: queued %q, end %d; want notify's Stop dropped and the turn ended", q, v.End)
	}
	if q, v := judge(notify); !slices.Equal(q, []string{"Stop/notify"}) || v.End != TurnStopped {
		t.Errorf("notify alone: queued %q, end %d; want the turn ended", q, v.End)
	}
	// A late Stop of the turn before, from its hooks, is not this turn's end.
	if _, v := judge(hookStop); v.End != TurnGoesOn {
		t.Errorf("a hook's Stop before the turn's prompt ended it")
	}
}

// Claude Code draws a permission prompt and runs the user's own
// PermissionRequest hooks at once: a hook that allows the tool takes the
// dialog away a moment later. A poll that caught it in that moment does
// not pause the loop (make test-agents' TestLoopPermissionAllowedByAUser-
// HookDoesNotPause saw it with Claude Code 2.1.332); a dialog that stays
// still does (TestEngineReportedDialogClearedPastTheEventsCap).
func TestEnginePermissionDialogShownWhileAUserHookAllowsDoesNotPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			a.emit(p, agent.Event{Name: agent.EventPreToolUse, Tool: "Bash"})
			a.emit(p, agent.Event{Name: agent.EventPermissionRequest, Tool: "Bash", Detail: "touch DONE"})
			p.SetScreen(claudePermission)
			think(time.Second) // the user's hook answers: allowed
			p.SetScreen(claudeWorking(firstLine(msg)))
			think(5 * time.Second) // the allowed tool runs: no event until it is done
			p.SetScreen(claudeAnswered(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Created DONE.\n<promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		l.expectEnd(0, ReasonComplete, 1)
		if n := l.events("PAUSE"); n != 0 || strings.Contains(l.out.String(), "paused") {
			t.Errorf("%d pauses at a permission dialog a hook took away\n%s", n, l.out)
		}
	})
}

// Claude Code 2.1.332 continues by itself at a usage limit's reset, by a
// prompt of its own ("Your claude.ai usage limit has reset. Continue the
// task ..."), and may answer before a poll sees it working (make
// test-agents-latest's TestLoopUsageLimitWaitsAndContinues: it answered
// in 2 s and the loop then typed its own "continue" into the finished
// turn, a third turn paid for). Its hooks report the prompt it took: the
// wait is over, the agent continued by itself, nothing is typed, and its
// turn's Stop completes the loop.
func TestEngineAgentThatContinuesByItselfIsHeardFromItsHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(time.Minute)
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Claude AI usage limit reached|"+epoch(reset)+"\n", "? for shortcuts"))
			think(time.Until(reset) + 500*time.Millisecond)
			// Its automatic continue, answered at once: the screen never
			// shows it working at a poll.
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			p.SetScreen(claudeAnswered(firstLine(msg)))
			a.emit(p, agent.Event{Name: agent.EventStop, Message: "Continued and finished.\n<promise>COMPLETE</promise>"})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		code, err := l.e.Run(ctx)
		if st := l.state(); code != 0 || err != nil || st.ExitReason != ReasonComplete || st.CurrentIteration != 1 {
			t.Fatalf("exit %d (%v), reason %q after %d iterations\n%s", code, err, st.ExitReason, st.CurrentIteration, l.out)
		}
		if msgs := a.Messages(); len(msgs) != 1 {
			t.Errorf("messages %q: the loop typed into an agent that had continued by itself", msgs)
		}
		if log, _ := os.ReadFile(l.e.RS.LogPath()); !strings.Contains(string(log), "the agent continued by itself") {
			t.Errorf("iterations.log:\n%s", log)
		}
	})
}
