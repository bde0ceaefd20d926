package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Wait looks at once, then every poll, and gives up at the deadline with
// a last look there: never a whole poll past it.
func TestWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		poll, timeout time.Duration
		holdsAt       time.Duration // when cond starts to hold (-1: never)
		want          bool
		took          time.Duration
	}{
		{"holds at once", time.Second, time.Minute, 0, true, 0},
		{"holds after three polls", time.Second, time.Minute, 3 * time.Second, true, 3 * time.Second},
		{"never holds", time.Second, 2500 * time.Millisecond, -1, false, 2500 * time.Millisecond},
		{"holds at the deadline", time.Second, 2500 * time.Millisecond, 2500 * time.Millisecond, true, 2500 * time.Millisecond},
		{"no deadline", time.Hour, Forever, 100 * time.Hour, true, 100 * time.Hour},
		{"no time: one look", time.Second, 0, -1, false, 0},
		{"no time, holds", time.Second, 0, 0, true, 0},
		{"zero poll does not spin", 0, 10 * time.Millisecond, -1, false, 10 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				looks := 0
				got := Wait(context.Background(), Real, c.poll, c.timeout, func() bool {
					looks++
					return c.holdsAt >= 0 && time.Since(start) >= c.holdsAt
				})
				if got != c.want || time.Since(start) != c.took {
					t.Fatalf("Wait = %v after %v (%d looks); want %v after %v", got, time.Since(start), looks, c.want, c.took)
				}
			})
		})
	}
}

// A context that ends stops the wait at once, whatever is left of it.
func TestWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		if Wait(ctx, Real, time.Minute, time.Hour, func() bool { return false }) {
			t.Fatal("Wait of a condition that never holds returned true")
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("Wait returned %v after the start, not when its context ended (3s)", d)
		}
	})
}

func TestSleep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Real.Sleep(context.Background(), time.Hour) || time.Since(start) != time.Hour {
			t.Fatalf("Sleep(1h) returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if Real.Sleep(ctx, time.Hour) || Real.Sleep(ctx, 0) {
			t.Fatal("Sleep with an ended context reported the whole wait")
		}
		if time.Since(start) != time.Hour {
			t.Fatalf("Sleep with an ended context waited")
		}
	})
}

func TestOr(t *testing.T) {
	t.Parallel()
	if Or(nil) != Real {
		t.Fatal("Or(nil) is not the real clock")
	}
	var c Clock = realClock{}
	if Or(c) != c {
		t.Fatal("Or(c) is not c")
	}
}
