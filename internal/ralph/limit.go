package ralph

import (
	"context"
	"slices"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// limitSlack is added to a limit's reset time: the provider's clock and
// ours differ, and typing a second early burns the message on the same
// limit.
const limitSlack = time.Minute

// errorSettle is how long an API error must show before it ends the
// iteration: two polls, so a passing screen is not taken for the end.
func errorSettle(poll time.Duration) time.Duration { return 2 * poll }

// askSettle is how long a permission the agent asked for (its
// PermissionRequest) must show on its screen before it is a dialog that
// waits for a human: the user's own PermissionRequest hooks run while
// Claude Code shows it, and one that allows the tool takes it away within
// moments. Two polls at least, so one poll's sight is never enough.
func askSettle(poll time.Duration) time.Duration { return max(2*poll, 3*time.Second) }

// limitUntil is when a limit seen now ends: its reset time plus slack, or
// --limit-wait doubled for each wait in a row without a known reset time,
// at most MaxLimitWait.
func limitUntil(v agent.Verdict, st *state.Ralph, now time.Time) time.Time {
	if !v.Reset.IsZero() {
		return v.Reset.Add(limitSlack)
	}
	wait := st.LimitWait.Duration
	if wait <= 0 {
		wait = DefaultLimitWait
	}
	for i := 0; i < st.LimitWaits && wait < MaxLimitWait; i++ {
		wait *= 2
	}
	return now.Add(min(wait, MaxLimitWait))
}

// waitOutLimit: the agent hit a usage or rate limit. The loop's status is
// waiting until the limit resets; then --limit-message is typed into the
// same agent and the iteration goes on. Waiting is no failure and no
// iteration. Kill ends the wait and the loop, pause ends the wait and the
// iteration (the loop stays paused), Ctrl-C ends the loop; an agent that
// exits while waiting ends its iteration when the wait is over.
func (e *Engine) waitOutLimit(ctx context.Context, t *turn, v agent.Verdict) (Outcome, bool) {
	until := limitUntil(v, t.st, e.Clock.Now())
	e.record(func(s *state.Ralph) error {
		if s.Status == state.RalphRunning {
			s.Status = state.RalphWaiting
		}
		s.WaitingUntil = state.ZonedTimestamp{Time: until}
		if v.Reset.IsZero() {
			s.LimitWaits++
		}
		s.LastError = state.NullString(v.Line)
		return nil
	})
	e.log(EventLimit, "iteration %d until=%s %s", t.iter, until.Local().Format(state.LogTimeLayout), v.Line)
	e.say("agent hit a limit (%s); waiting until %s", v.Line, until.Local().Format("15:04"))
	o, ended, itself := e.waitUntilReset(ctx, t, until, v.Reset, !e.working(t))
	if ended {
		return o, true
	}
	if o, stop := e.interruptWait(ctx, t); stop {
		return o, true
	}
	e.endWait()
	if itself {
		e.log(EventResume, "iteration %d: limit reset; the agent continued by itself", t.iter)
		e.say("limit reset; the agent continued by itself")
		t.resumedLimits = e.limitLines(t, v.Line)
		t.worked, t.idleSince, t.errorSince, t.lastChange = false, time.Time{}, time.Time{}, e.Clock.Now()
		return Outcome{}, false
	}
	if ps, _, err := t.tc.Poll(t.window); err == nil && ps.Dead {
		return Outcome{}, false // the watch sees the exit and ends the iteration
	}
	// The limit stays the agent's last message until it answers: it is
	// the limit just waited out, not a new one, until the agent works;
	// so are the others already on its screen.
	stale := e.limitLines(t, v.Line)
	e.log(EventResume, "iteration %d: limit reset; typed %q", t.iter, t.st.LimitMessage)
	e.say("limit reset; continuing the agent with %q", t.st.LimitMessage)
	msg := t.st.LimitMessage
	if err := worker.SendText(t.tc, t.window, msg, worker.SendOptions{NoEnter: true}); err != nil {
		e.say("cannot type %q: %v", msg, err)
	}
	e.submit(ctx, t, msg, nil)
	t.resumedLimits = stale
	t.worked, t.idleSince, t.errorSince, t.lastChange = false, time.Time{}, time.Time{}, e.Clock.Now()
	return Outcome{}, false
}

// limitLines are the limit lines on the agent's screen now (its own
// lines, without the prompt's echo), and waited, the one waited out.
func (e *Engine) limitLines(t *turn, waited string) []string {
	lines := []string{waited}
	if _, screen, err := t.tc.Poll(t.window); err == nil {
		lines = append(lines, t.profile.LimitLines(withoutEcho(screen, t.prompt), t.limits...)...)
	}
	return lines
}

// staleLimit reports whether a limit the screen shows (v) is one from
// before the loop went on past a limit, until the agent works again: a
// line already on its screen then (resumedLimits), or one whose reset
// time is past. Claude Code 2.1.332 draws a line of its own for the limit
// waited out ("● Usage limit reached · set to continue automatically at
// 6:08pm"), which may come after the loop looked, above the continuation
// typed into it: its time is the reset just waited out. A limit drawn
// after the resume has a reset still ahead (or says none, in words not
// seen before): a new one, waited out.
func (e *Engine) staleLimit(t *turn, v agent.Verdict) bool {
	if t.worked || t.resumedLimits == nil {
		return false
	}
	if slices.Contains(t.resumedLimits, v.Line) {
		return true
	}
	return !v.Reset.IsZero() && !v.Reset.After(e.Clock.Now())
}

// waitUntilReset waits, a poll at a time, until the limit resets; a kill,
// a pause or Ctrl-C ends the wait and the iteration (interruptWait), and
// so does a completion the agent printed meanwhile: it may go on by
// itself (a limit it retries past) and finish, and its output counts.
// Past the reset time (when known) an agent its screen showed stopped
// (stopped: at the wait's start, or since) and now shows working again
// continued by itself (Claude Code 2.1.332: "Continuing automatically at
// 8pm"): the wait is over, itself is true, and nothing is to be typed
// into it.
//
// An agent whose hooks report its turns says so itself: a prompt it took,
// a tool it ran or a turn it ended after the reset (its automatic
// continue submits a prompt of its own, and may be answered before a poll
// sees it working). Those events stay queued for the watch, which then
// judges its turn (a Stop's promise) as any other.
func (e *Engine) waitUntilReset(ctx context.Context, t *turn, until, reset time.Time, stopped bool) (o Outcome, ended, itself bool) {
	seen := 0
	if t.rep != nil {
		e.readEvents(t)
		seen = len(t.queue) // what came before the wait: the limit's own
	}
	clock.Wait(ctx, e.Clock, e.Poll, e.Clock.Until(until), func() bool {
		if o, ended = e.interruptWait(ctx, t); ended {
			return true
		}
		e.readOutput(t)
		if o, ended = e.signalled(t); ended {
			e.endWait()
			return true
		}
		if !reset.IsZero() && !e.Clock.Now().Before(reset) {
			working := e.working(t)
			itself = (working && stopped) || e.reportedWork(t, seen)
			stopped = stopped || !working
		}
		return itself
	})
	return o, ended, itself
}

// reportedWork reports whether the agent's hooks reported it at work (a
// prompt taken, a tool run, a turn ended) in the events queued after the
// first seen.
func (e *Engine) reportedWork(t *turn, seen int) bool {
	if t.rep == nil {
		return false
	}
	e.readEvents(t)
	for _, ev := range t.queue[min(seen, len(t.queue)):] {
		switch ev.Name {
		case agent.EventUserPromptSubmit, agent.EventPreToolUse, agent.EventStop:
			return true
		}
	}
	return false
}

// working reports whether the agent's screen shows it working now.
func (e *Engine) working(t *turn) bool {
	_, screen, err := t.tc.Poll(t.window)
	return err == nil && e.verdict(t, screen).Agent.State == agent.Working
}

// endWait sets a waiting loop running again.
func (e *Engine) endWait() {
	e.record(func(s *state.Ralph) error {
		if s.Status == state.RalphWaiting {
			s.Status = state.RalphRunning
		}
		s.WaitingUntil = state.ZonedTimestamp{}
		return nil
	})
}

// interruptWait ends a limit wait early: a kill or stop, a pause, Ctrl-C.
func (e *Engine) interruptWait(ctx context.Context, t *turn) (Outcome, bool) {
	cur, err := e.RS.Load()
	if o, ok := e.stoppedFromOutside(ctx, cur); ok {
		return o, true
	}
	if err == nil && cur.Status == state.RalphPaused {
		e.record(func(s *state.Ralph) error { s.WaitingUntil = state.ZonedTimestamp{}; return nil })
		return e.final(t, Outcome{End: EndLimited}), true
	}
	return Outcome{}, false
}
