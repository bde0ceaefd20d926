package heartbeat

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
)

// beater is the heartbeat process's state between ticks. tick is driven by
// Run's loop in production and called with chosen times in tests.
type beater struct {
	store  *Store
	name   string
	target Target
	log    io.Writer
	check  time.Duration // worker check interval
	clock  clock.Clock   // the time of the log lines

	last      *State    // last state read or written (repairs a corrupt file)
	nextBeat  time.Time // when the next beat is due (monotonic in production)
	nextCheck time.Time // when the worker is next looked at
	paused    bool
}

// claim records this process in the state file. ok is false when there is
// nothing to run (no state, or a heartbeat that has ended).
func (b *beater) claim(now time.Time) (bool, error) {
	pid := os.Getpid()
	st, err := b.store.Update(b.name, func(cur *State) (*State, error) {
		if cur == nil || !cur.Live() {
			return nil, nil
		}
		cur.MonitorPID = &pid
		cur.MonitorStarted = StampOf(now)
		return cur, nil
	})
	if err != nil {
		return false, err
	}
	if st == nil || !st.Live() {
		b.logf("nothing to run (%s)", describeState(st))
		return false, nil
	}
	b.last = st
	b.paused = st.Status == StatusPaused
	b.nextBeat = firstBeat(st, now)
	b.logf("running: every %s, message %q", FormatInterval(st.IntervalSeconds), st.Message)
	return true, nil
}

func describeState(st *State) string {
	if st == nil {
		return "no state file"
	}
	return "status " + st.Status
}

// release clears monitor_pid when it is still this process's.
func (b *beater) release() {
	pid := os.Getpid()
	_, err := b.store.Update(b.name, func(cur *State) (*State, error) {
		if cur == nil || cur.MonitorPID == nil || *cur.MonitorPID != pid {
			return nil, nil
		}
		cur.MonitorPID = nil
		return cur, nil
	})
	if err != nil {
		b.logf("cannot clear monitor_pid: %v", err)
	}
}

// tick does what is due at now. done is true when the heartbeat has ended.
func (b *beater) tick(now time.Time) (bool, error) {
	st, err := b.load()
	if err != nil {
		b.logf("cannot read state: %v", err)
		return false, nil
	}
	if st == nil {
		b.logf("state file removed; exiting")
		return true, nil
	}
	switch st.Status {
	case StatusActive:
	case StatusPaused:
		// No beats; the next one comes a full interval after resume.
		if !b.paused {
			b.logf("paused")
		}
		b.paused = true
		b.nextBeat = now.Add(st.Interval())
		return b.checkWorker(now), nil
	default:
		b.logf("status %s; exiting", st.Status)
		return true, nil
	}
	if b.paused {
		b.paused = false
		b.nextBeat = now.Add(st.Interval())
		b.logf("resumed")
	}
	if Expired(st, now) {
		b.end(StatusExpired, "expired")
		return true, nil
	}
	if now.Before(b.nextBeat) {
		return b.checkWorker(now), nil
	}
	return b.beat(now, st), nil
}

// load reads the state; a corrupt file is rewritten from the last good
// copy, so corruption never ends or resets a heartbeat.
func (b *beater) load() (*State, error) {
	st, err := b.store.Load(b.name)
	if errors.Is(err, state.ErrCorruptHeartbeat) && b.last != nil {
		good := *b.last
		b.logf("corrupt state file; rewriting it from the last good copy")
		return b.store.Update(b.name, func(*State) (*State, error) { return &good, nil })
	}
	if st != nil {
		b.last = st
	}
	return st, err
}

// checkWorker looks at the worker when a check is due; true when it is
// gone for good (the heartbeat has then ended).
func (b *beater) checkWorker(now time.Time) bool {
	if now.Before(b.nextCheck) {
		return false
	}
	b.nextCheck = now.Add(b.check)
	look, err := b.target.Look(false)
	if err != nil {
		b.logf("cannot check the worker: %v", err)
		return false
	}
	if look.Gone != "" {
		b.end(StatusStopped, look.Gone)
		return true
	}
	return false
}

// beat types the message unless it must be skipped; true when the worker
// turned out to be gone.
func (b *beater) beat(now time.Time, st *State) bool {
	b.nextCheck = now.Add(b.check)
	retry := now.Add(min(st.Interval(), b.check))
	look, err := b.target.Look(true)
	if err != nil {
		b.logf("cannot look at the worker: %v", err)
		b.nextBeat = retry
		return false
	}
	switch {
	case look.Gone != "":
		b.end(StatusStopped, look.Gone)
		return true
	case look.Skip != "":
		b.skip(now, st, look.Skip)
		return false
	case Pending(look.Screen, st.Message):
		b.skip(now, st, "the last line still shows the previous message")
		return false
	}
	if err := b.target.Send(st.Message); err != nil {
		b.logf("cannot send: %v", err)
		b.nextBeat = retry
		return false
	}
	b.nextBeat = now.Add(st.Interval())
	saved, err := b.store.Update(b.name, func(cur *State) (*State, error) {
		if cur == nil {
			return nil, nil
		}
		cur.BeatCount++
		cur.LastBeatAt = StampOf(now)
		cur.NextBeatAt = StampOf(now.Add(cur.Interval()))
		return cur, nil
	})
	if err != nil {
		b.logf("beat sent, but recording it failed: %v", err)
	} else if saved != nil {
		b.last = saved
		b.logf("beat %d sent", saved.BeatCount)
	}
	return false
}

// skip lets this beat go and plans the next one a full interval on (as
// swarm.py does: the timer restarts).
func (b *beater) skip(now time.Time, st *State, why string) {
	b.nextBeat = now.Add(st.Interval())
	b.logf("beat skipped: %s", why)
	_, err := b.store.Update(b.name, func(cur *State) (*State, error) {
		if cur == nil {
			return nil, nil
		}
		cur.SkipCount++
		cur.NextBeatAt = StampOf(b.nextBeat)
		return cur, nil
	})
	if err != nil {
		b.logf("cannot record the skipped beat: %v", err)
	}
}

// end records that the heartbeat ended by itself, unless a command ended
// it first.
func (b *beater) end(status, why string) {
	b.logf("%s; heartbeat %s", why, status)
	_, err := b.store.Update(b.name, func(cur *State) (*State, error) {
		if cur == nil || !cur.Live() {
			return nil, nil
		}
		cur.Status = status
		cur.NextBeatAt = ""
		return cur, nil
	})
	if err != nil {
		b.logf("cannot record the heartbeat as %s: %v", status, err)
	}
}

func (b *beater) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s heartbeat %s: %s\n", clock.Or(b.clock).Now().Format(time.RFC3339), b.name, fmt.Sprintf(format, args...))
}
