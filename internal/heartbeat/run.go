package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/state"
)

// Timings of the heartbeat process.
const (
	// DefaultPoll is how often the process re-reads its state file, so a
	// stop, pause or resume takes effect within about a second. Reading a
	// small file is cheap; no tmux is run for it.
	DefaultPoll = time.Second
	// DefaultWorkerCheck is how often the process looks at the worker
	// between beats (one tmux process), to end when the worker is gone.
	// swarm.py checks every 30 s; so does swarm. Before every beat the
	// worker is looked at anyway.
	DefaultWorkerCheck = 30 * time.Second
	// minWait keeps the loop from spinning when a beat is due in
	// nanoseconds.
	minWait = time.Millisecond
)

// PollEnv overrides DefaultPoll and DefaultWorkerCheck (tests run with
// 100ms); any Go duration.
const PollEnv = "SWARM_POLL_INTERVAL"

// RunOptions adjust Run for tests; zero values are the defaults.
type RunOptions struct {
	// Clock is where the process takes its time from (clock.Real).
	Clock       clock.Clock
	Poll        time.Duration
	WorkerCheck time.Duration
	// Target is the worker beaten into (default: the tmux worker of the
	// registry under root).
	Target Target
	// Log receives one line per event (default: stderr, which Start
	// points at heartbeats/W.log).
	Log io.Writer
}

// ErrRunning is returned by Run when another process already runs the
// worker's heartbeat.
var ErrRunning = errors.New("a heartbeat process is already running")

// Run is the heartbeat process for the worker ("swarm heartbeat run W", the
// hidden command Start runs). It holds heartbeats/W.lock until it returns,
// beats at the interval, and returns nil when the heartbeat ends: stopped,
// expired, the worker gone for good, the state file removed, or ctx done
// (SIGTERM: the state is left as it is, so a resume restarts it).
func Run(ctx context.Context, root, name string) error {
	return RunWith(ctx, root, name, RunOptions{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, root, name string, o RunOptions) error {
	if err := state.ValidateName(name); err != nil {
		return err
	}
	o = o.withDefaults(root, name)
	store := NewStore(root, func(msg string) { fmt.Fprintf(o.Log, "warning: %s\n", msg) })
	held, err := daemon.Lock(store.LockPath(name))
	if errors.Is(err, daemon.ErrHeld) {
		return fmt.Errorf("%w for '%s'", ErrRunning, name)
	}
	if err != nil {
		return err
	}
	defer func() {
		if err := held.Release(); err != nil {
			fmt.Fprintf(o.Log, "warning: cannot release the heartbeat's lock: %v\n", err)
		}
	}()
	b := &beater{store: store, name: name, target: o.Target, log: o.Log, check: o.WorkerCheck, clock: o.Clock}
	if ok, err := b.claim(o.Clock.Now()); !ok || err != nil {
		return err
	}
	defer b.release()
	for {
		now := o.Clock.Now()
		done, err := b.tick(now)
		if done || err != nil {
			return err
		}
		wait := min(o.Poll, b.nextBeat.Sub(now))
		if !o.Clock.Sleep(ctx, max(wait, minWait)) {
			b.logf("signalled; exiting (state left %s)", b.last.Status)
			return nil
		}
	}
}

func (o RunOptions) withDefaults(root, name string) RunOptions {
	o.Clock = clock.Or(o.Clock)
	env := envPoll()
	if o.Poll <= 0 {
		o.Poll = cmp(env, DefaultPoll)
	}
	if o.WorkerCheck <= 0 {
		o.WorkerCheck = cmp(env, DefaultWorkerCheck)
	}
	if o.Target == nil {
		o.Target = newTmuxTarget(root, name)
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	return o
}

// cmp returns v when set, else def.
func cmp(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

func envPoll() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(PollEnv)); err == nil && d > 0 {
		return d
	}
	return 0
}
