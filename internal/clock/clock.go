// Package clock is where swarm's long-running code takes its time from:
// the loop engine, the heartbeat and every wait for a condition ("until
// the monitor holds its lock", "until the pane is dead"). One interface,
// one real implementation, and one wait helper (Wait) instead of a
// deadline loop written out by hand in every package.
//
// Code that is given a Clock (ralph.Engine.Clock, heartbeat.RunOptions)
// never calls time.Now or time.Sleep itself. Tests run such code inside a
// testing/synctest bubble, where the real clock is a fake one that jumps
// ahead whenever every goroutine waits: a loop's 1+2+4+8 s backoff takes no
// time at all and no test sleeps a fixed time to order events.
package clock

import (
	"context"
	"math"
	"time"
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	Since(t time.Time) time.Duration
	Until(t time.Time) time.Duration
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
	// Sleep waits d, or less if ctx ends first; it reports whether the
	// whole of d passed (false: ctx ended).
	Sleep(ctx context.Context, d time.Duration) bool
}

// Real is the system clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) Since(t time.Time) time.Duration        { return time.Since(t) }
func (realClock) Until(t time.Time) time.Duration        { return time.Until(t) }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (realClock) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Or returns c, or Real when c is nil: the zero value of a struct with a
// Clock field runs on the system clock.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// minPoll is the shortest pause between two looks of Wait: a zero poll
// must not spin.
const minPoll = time.Millisecond

// Forever is the timeout of a wait with no deadline: only its context
// ends it.
const Forever = time.Duration(math.MaxInt64)

// Wait looks at cond at once and then every poll until it holds (true),
// timeout passes or ctx ends (false). The last look is at the deadline,
// never a whole poll past it; a timeout of 0 or less is that one look.
//
// A wait that must also stop on an error, or report what it saw, has cond
// record that in a variable of the caller's and return true.
func Wait(ctx context.Context, c Clock, poll, timeout time.Duration, cond func() bool) bool {
	deadline := c.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		step := max(poll, minPoll)
		if timeout != Forever {
			left := c.Until(deadline)
			if left <= 0 {
				return false
			}
			step = min(step, left)
		}
		if !c.Sleep(ctx, step) {
			return false
		}
	}
}
