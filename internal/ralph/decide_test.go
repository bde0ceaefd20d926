package ralph

import (
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

func snap(iter int) Snapshot {
	return Snapshot{Iteration: iter, MaxIterations: 10, RestartDelay: time.Second}
}

func TestDecideFailuresBackOffThenStop(t *testing.T) {
	s := snap(1)
	var delays []time.Duration
	for i := 1; i <= 5; i++ {
		s.Iteration = i
		d := Decide(Outcome{End: EndExited, ExitCode: 3, ExitKnown: true}, s)
		if !d.Failure {
			t.Fatal("exit 3 not a failure")
		}
		s.ConsecutiveFailures, s.TotalFailures = d.ConsecutiveFailures, d.TotalFailures
		if i < 5 {
			if d.Action != Next {
				t.Fatalf("failure %d stopped the loop", i)
			}
			delays = append(delays, d.Delay)
			continue
		}
		if d.Action != Stop || d.Status != state.RalphFailed || d.Reason != ReasonFailed {
			t.Fatalf("5th failure: %+v", d)
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("backoff %d = %v, want %v", i+1, delays[i], want[i])
		}
	}
	if Backoff(20) != 300*time.Second || Backoff(9) != 256*time.Second || Backoff(10) != 300*time.Second {
		t.Error("backoff cap")
	}
	// A lost tmux server killed the agent: a failure; a lost window alone
	// is judged by the exit it left.
	if d := Decide(Outcome{End: EndServerLost}, snap(1)); !d.Failure || d.Action != Next {
		t.Errorf("server lost: %+v", d)
	}
	if d := Decide(Outcome{End: EndWindowLost}, snap(1)); d.Failure {
		t.Errorf("window lost with no exit known: %+v", d)
	}
}

func TestDecideSuccessResetsFailures(t *testing.T) {
	s := snap(3)
	s.ConsecutiveFailures, s.TotalFailures = 2, 4
	d := Decide(Outcome{End: EndExited, ExitKnown: true}, s)
	if d.Action != Next || d.ConsecutiveFailures != 0 || d.TotalFailures != 4 || d.Delay != time.Second {
		t.Fatalf("%+v", d)
	}
	d = Decide(Outcome{End: EndInactive}, s)
	if d.Action != Next || d.Failure || d.ConsecutiveFailures != 0 {
		t.Fatalf("inactivity: %+v", d)
	}
}

func TestDecideOrder(t *testing.T) {
	cases := []struct {
		name   string
		o      Outcome
		s      Snapshot
		action Action
		reason state.ExitReason
		status state.RalphStatus
	}{
		{"max iterations", Outcome{End: EndExited, ExitKnown: true}, snap(10), Stop, ReasonMaxIterations, state.RalphStopped},
		{"failure at the cap still ends by the cap", Outcome{End: EndExited, ExitCode: 1, ExitKnown: true}, snap(10), Stop, ReasonMaxIterations, state.RalphStopped},
		{"complete beats the cap", Outcome{End: EndSignal, Signal: Signal{Kind: SignalComplete}}, snap(10), Stop, ReasonComplete, state.RalphStopped},
		{"done pattern", Outcome{End: EndSignal, Signal: Signal{Kind: SignalDonePattern}}, snap(2), Stop, ReasonDonePattern, state.RalphStopped},
		{"done file", Outcome{End: EndDoneFile, DoneFile: true}, snap(2), Stop, ReasonDoneFile, state.RalphStopped},
		{"rejected completion continues", Outcome{End: EndSignal, Signal: Signal{Kind: SignalComplete}, Rejected: "check failed"}, snap(2), Next, "", ""},
		{"blocked", Outcome{End: EndSignal, Signal: Signal{Kind: SignalBlocked, Detail: "creds"}}, snap(2), Stop, ReasonBlocked, state.RalphStopped},
		{"decide", Outcome{End: EndSignal, Signal: Signal{Kind: SignalDecide}}, snap(2), Stop, ReasonDecide, state.RalphStopped},
		{"not found", Outcome{End: EndExited, ExitCode: 127, ExitKnown: true}, snap(1), Stop, ReasonFailed, state.RalphFailed},
		{"not executable", Outcome{End: EndExited, ExitCode: 126, ExitKnown: true}, snap(1), Stop, ReasonFailed, state.RalphFailed},
		{"wait exit code", Outcome{End: EndExited, ExitCode: 42, ExitKnown: true}, snap(2), Pause, "", state.RalphPaused},
		{"wait file", Outcome{End: EndExited, ExitKnown: true, WaitFile: true}, snap(2), Pause, "", state.RalphPaused},
		{"max time", Outcome{End: EndMaxTime}, snap(2), Stop, ReasonMaxTime, state.RalphStopped},
		{"killed", Outcome{End: EndStopped}, snap(2), Stop, ReasonKilled, state.RalphStopped},
		{"interrupted", Outcome{End: EndInterrupted}, snap(2), Stop, ReasonInterrupted, state.RalphStopped},
		{"prompt gone", Outcome{End: EndPromptError, Detail: "prompt file not found: p"}, snap(2), Stop, ReasonFailed, state.RalphFailed},
		{"preflight", Outcome{End: EndPreflight}, snap(1), Stop, ReasonPreflight, state.RalphFailed},
		{"fatal restarts without failure", Outcome{End: EndFatal}, snap(2), Next, "", ""},
		{"start failure backs off", Outcome{End: EndStartFailed}, snap(2), Next, "", ""},
		{"an error no retry gets past stops", Outcome{End: EndAgentError, FatalStart: true, Detail: "the agent answered: ● Unknown command: /fix"}, snap(2), Stop, ReasonFailed, state.RalphFailed},
		{"an undelivered prompt backs off", Outcome{End: EndInactive, Undelivered: true}, snap(2), Next, "", ""},
	}
	for _, c := range cases {
		d := Decide(c.o, c.s)
		if d.Action != c.action || d.Reason != c.reason || d.Status != c.status {
			t.Errorf("%s: %+v", c.name, d)
		}
	}
	// A pause says why in its detail (pause_reason); it has no exit reason.
	for o, why := range map[Outcome]string{
		{End: EndExited, ExitCode: 42, ExitKnown: true}:   "agent asked to wait (exit 42)",
		{End: EndExited, ExitKnown: true, WaitFile: true}: "agent asked to wait (WAIT file)",
	} {
		if d := Decide(o, snap(2)); d.Action != Pause || d.Detail != why {
			t.Errorf("%+v: %+v, want a pause because %q", o, d, why)
		}
	}
	over := snap(2)
	over.MaxTime, over.Elapsed = time.Minute, 2*time.Minute
	if d := Decide(Outcome{End: EndExited, ExitKnown: true}, over); d.Reason != ReasonMaxTime {
		t.Errorf("elapsed budget: %+v", d)
	}
	if d := Decide(Outcome{End: EndStartFailed}, snap(2)); !d.Failure || d.Delay != time.Second {
		t.Errorf("start failure: %+v", d)
	}
	// An iteration whose agent never showed it got the prompt is a
	// failure, whichever way it ended by itself.
	for _, o := range []Outcome{{End: EndInactive, Undelivered: true}, {End: EndExited, ExitKnown: true, Undelivered: true}} {
		if d := Decide(o, snap(2)); !d.Failure || d.ConsecutiveFailures != 1 || d.Delay != time.Second {
			t.Errorf("undelivered %+v: %+v", o, d)
		}
	}
}

func TestExitCodes(t *testing.T) {
	want := map[state.ExitReason]int{
		ReasonComplete: 0, ReasonDonePattern: 0, ReasonDoneFile: 0, ReasonMaxIterations: 0, ReasonMaxTime: 0,
		ReasonFailed: 1, ReasonKilled: 1, ReasonPreflight: 1, ReasonBlocked: 2, ReasonDecide: 3, ReasonInterrupted: 130, "": 1,
	}
	for r, c := range want {
		if ExitCode(r) != c {
			t.Errorf("ExitCode(%q) = %d, want %d", r, ExitCode(r), c)
		}
	}
}

func TestDecideSameSessionContinue(t *testing.T) {
	same := func(iter int) Snapshot { s := snap(iter); s.SameSession = true; return s }
	paused := same(2)
	paused.Paused = true
	over := same(2)
	over.MaxTime, over.Elapsed = time.Minute, 2*time.Minute
	cases := []struct {
		name   string
		o      Outcome
		s      Snapshot
		action Action
		reason state.ExitReason
	}{
		{"quiet agent continues in its session", Outcome{End: EndInactive}, same(2), Continue, ""},
		{"without --same-session it restarts", Outcome{End: EndInactive}, snap(2), Next, ""},
		{"not at the cap", Outcome{End: EndInactive}, same(10), Stop, ReasonMaxIterations},
		{"not past the time budget", Outcome{End: EndInactive}, over, Stop, ReasonMaxTime},
		{"not while paused", Outcome{End: EndInactive}, paused, Next, ""},
		{"a completion signal wins", Outcome{End: EndInactive, Signal: Signal{Kind: SignalComplete}}, same(2), Stop, ReasonComplete},
		{"a rejected completion restarts fresh", Outcome{End: EndInactive, Signal: Signal{Kind: SignalComplete}, Rejected: "check failed"}, same(2), Next, ""},
		{"an exit is never continued", Outcome{End: EndExited, ExitKnown: true}, same(2), Next, ""},
		{"a compaction restarts", Outcome{End: EndFatal}, same(2), Next, ""},
	}
	for _, c := range cases {
		d := Decide(c.o, c.s)
		if d.Action != c.action || d.Reason != c.reason {
			t.Errorf("%s: %+v", c.name, d)
		}
		if d.Action == Continue && (d.Failure || d.Delay != 0 || d.ConsecutiveFailures != 0) {
			t.Errorf("%s: a continuation is no failure and has no delay: %+v", c.name, d)
		}
	}
}

func TestDecideCapNotComplete(t *testing.T) {
	rejected := func(iter int) Snapshot {
		s := snap(iter)
		s.LastRejection = "iteration 4: check failed: make test (exit 1)"
		return s
	}
	failOnCap := func(iter int) Snapshot { s := snap(iter); s.FailOnCap = true; return s }
	over := func(s Snapshot) Snapshot { s.MaxTime, s.Elapsed = time.Minute, 2*time.Minute; return s }
	complete := Signal{Kind: SignalComplete}
	cases := []struct {
		name       string
		o          Outcome
		s          Snapshot
		action     Action
		reason     state.ExitReason
		incomplete bool
		detail     string
	}{
		{"a plain cap is a normal end", Outcome{End: EndExited, ExitKnown: true}, snap(10), Stop, ReasonMaxIterations, false, ""},
		{"rejected in the last iteration", Outcome{End: EndSignal, Signal: complete, Rejected: "check failed: make test (exit 1)"}, snap(10), Stop, ReasonMaxIterations, true,
			"cap reached, not complete: the last completion was rejected (iteration 10: check failed: make test (exit 1))"},
		{"rejected by --require-change", Outcome{End: EndSignal, Signal: complete, Rejected: "no change"}, snap(10), Stop, ReasonMaxIterations, true,
			"cap reached, not complete: the last completion was rejected (iteration 10: no change)"},
		{"checks still failing from an earlier iteration", Outcome{End: EndExited, ExitKnown: true}, rejected(10), Stop, ReasonMaxIterations, true,
			"cap reached, not complete: the last completion was rejected (iteration 4: check failed: make test (exit 1))"},
		{"the time budget with checks failing", Outcome{End: EndMaxTime}, rejected(3), Stop, ReasonMaxTime, true,
			"cap reached, not complete: the last completion was rejected (iteration 4: check failed: make test (exit 1))"},
		{"--fail-on-cap: iterations", Outcome{End: EndExited, ExitKnown: true}, failOnCap(10), Stop, ReasonMaxIterations, true, "cap reached, not complete (--fail-on-cap)"},
		{"--fail-on-cap: time budget", Outcome{End: EndExited, ExitKnown: true}, over(failOnCap(3)), Stop, ReasonMaxTime, true, "cap reached, not complete (--fail-on-cap)"},
		{"below the cap a rejection continues", Outcome{End: EndSignal, Signal: complete, Rejected: "check failed"}, rejected(3), Next, "", false, ""},
		{"an accepted completion at the cap completes", Outcome{End: EndSignal, Signal: complete}, rejected(10), Stop, ReasonComplete, false, ""},
		{"--fail-on-cap leaves a completion alone", Outcome{End: EndSignal, Signal: complete}, failOnCap(10), Stop, ReasonComplete, false, ""},
		{"blocked at the cap is blocked", Outcome{End: EndSignal, Signal: Signal{Kind: SignalBlocked, Detail: "creds"}}, failOnCap(10), Stop, ReasonBlocked, false, "creds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.o, c.s)
			if d.Action != c.action || d.Reason != c.reason || d.Incomplete != c.incomplete || d.Detail != c.detail {
				t.Errorf("%+v", d)
			}
			if d.Action != Stop || !isCap(d.Reason) {
				return
			}
			// Before an iteration (a resume at the cap) the same rule holds.
			b, ok := DecideCap(Outcome{}, c.s, Decision{})
			if c.o.Rejected == "" && c.o.End != EndMaxTime && (!ok || b.Incomplete != c.incomplete || b.Detail != c.detail) {
				t.Errorf("before an iteration: %v %+v", ok, b)
			}
		})
	}
	if _, ok := DecideCap(Outcome{}, rejected(3), Decision{}); ok {
		t.Error("DecideCap stopped below the cap")
	}
}

func TestLoopExitCode(t *testing.T) {
	cases := []struct {
		reason     state.ExitReason
		incomplete bool
		want       int
	}{
		{ReasonMaxIterations, false, 0},
		{ReasonMaxIterations, true, ExitCapIncomplete},
		{ReasonMaxTime, true, ExitCapIncomplete},
		{ReasonComplete, false, 0},
		// The flag only qualifies a cap: a resumed loop killed later is
		// killed (1), whatever a stale flag says.
		{ReasonKilled, true, 1},
		{ReasonBlocked, true, 2},
	}
	for _, c := range cases {
		st := &state.Ralph{LoopProgress: state.LoopProgress{ExitReason: c.reason, CapIncomplete: c.incomplete}}
		if got := LoopExitCode(st); got != c.want {
			t.Errorf("LoopExitCode(%s, incomplete=%v) = %d, want %d", c.reason, c.incomplete, got, c.want)
		}
	}
	if ExitCapIncomplete != 4 {
		t.Errorf("ExitCapIncomplete = %d: docs/completion.md documents 4", ExitCapIncomplete)
	}
}

// Budgets (issue 18): a loop at or over its --max-cost or --max-tokens
// ends with that reason, before an iteration or when one crossed it mid-
// turn; a cost no agent reported is never over; a budget is a cap (exit
// 0, or 4 not complete), never a failure.
func TestDecideBudgets(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	budget := func(iter int, spent state.Usage, maxCost float64, maxTokens int64) Snapshot {
		s := snap(iter)
		s.Usage, s.MaxCost, s.MaxTokens = spent, maxCost, maxTokens
		return s
	}
	idle := Outcome{End: EndIdle}
	cases := []struct {
		name       string
		o          Outcome
		s          Snapshot
		action     Action
		reason     state.ExitReason
		incomplete bool
	}{
		{"under the cost budget", idle, budget(2, state.Usage{CostUSD: cost(0.049)}, 0.05, 0), Next, "", false},
		{"at the cost budget", idle, budget(2, state.Usage{CostUSD: cost(0.05)}, 0.05, 0), Stop, ReasonMaxCost, false},
		{"over the cost budget", idle, budget(2, state.Usage{CostUSD: cost(0.3)}, 0.05, 0), Stop, ReasonMaxCost, false},
		{"crossed mid-turn", Outcome{End: EndMaxCost}, budget(2, state.Usage{CostUSD: cost(0.06)}, 0.05, 0), Stop, ReasonMaxCost, false},
		{"no cost reported is never over", idle, budget(2, state.Usage{InputTokens: 1 << 30}, 0.05, 0), Next, "", false},
		{"no budget", idle, budget(2, state.Usage{CostUSD: cost(99)}, 0, 0), Next, "", false},
		{"under the token budget", idle, budget(2, state.Usage{InputTokens: 500, OutputTokens: 499}, 0, 1000), Next, "", false},
		{"at the token budget (every kind counts)", idle, budget(2, state.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 900, CacheCreationTokens: 97}, 0, 1000), Stop, ReasonMaxTokens, false},
		{"tokens crossed mid-turn", Outcome{End: EndMaxTokens}, budget(2, state.Usage{}, 0, 1000), Stop, ReasonMaxTokens, false},
		{"the cost is looked at before the tokens", idle, budget(2, state.Usage{CostUSD: cost(1), InputTokens: 5000}, 0.5, 1000), Stop, ReasonMaxCost, false},
		{"the iteration cap comes first", idle, budget(10, state.Usage{CostUSD: cost(1)}, 0.5, 0), Stop, ReasonMaxIterations, false},
		{"a completion beats the budget", Outcome{End: EndSignal, Signal: Signal{Kind: SignalComplete}}, budget(2, state.Usage{CostUSD: cost(1)}, 0.5, 0), Stop, ReasonComplete, false},
		{"a failure over budget ends by the budget", Outcome{End: EndAgentError, Detail: "529"}, budget(2, state.Usage{CostUSD: cost(1)}, 0.5, 0), Stop, ReasonMaxCost, false},
		{"--fail-on-cap makes it not complete", idle, func() Snapshot { s := budget(2, state.Usage{CostUSD: cost(1)}, 0.5, 0); s.FailOnCap = true; return s }(), Stop, ReasonMaxCost, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.o, c.s)
			if d.Action != c.action || d.Reason != c.reason || d.Incomplete != c.incomplete {
				t.Fatalf("%+v", d)
			}
			if d.Action == Stop && d.Status != state.RalphStopped {
				t.Errorf("status %s: a budget is no failure", d.Status)
			}
			if c.o.End == EndIdle {
				// Before an iteration the same budget holds.
				if b, ok := DecideCap(Outcome{}, c.s, Decision{}); ok != (c.action == Stop) || b.Reason != c.reason {
					t.Errorf("before an iteration: %v %+v", ok, b)
				}
			}
		})
	}
	for r, code := range map[state.ExitReason]int{ReasonMaxCost: 0, ReasonMaxTokens: 0} {
		if ExitCode(r) != code {
			t.Errorf("ExitCode(%s) = %d, want %d", r, ExitCode(r), code)
		}
		st := &state.Ralph{LoopProgress: state.LoopProgress{ExitReason: r, CapIncomplete: true}}
		if LoopExitCode(st) != ExitCapIncomplete {
			t.Errorf("%s not complete: exit %d, want %d", r, LoopExitCode(st), ExitCapIncomplete)
		}
	}
}
