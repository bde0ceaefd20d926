package main

// The heartbeat flags of spawn and ralph spawn.

import (
	"fmt"

	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/state"
)

// addSpawnHeartbeatFlags registers --heartbeat, --heartbeat-expire and
// --heartbeat-message into raw.
func addSpawnHeartbeatFlags(fs *pflag.FlagSet, raw *heartbeat.Flags) {
	fs.Var(rawDuration{&raw.Interval}, "heartbeat", "start a heartbeat that nudges the worker this often (e.g. 4h; needs tmux)")
	fs.Var(rawDuration{&raw.Expire}, "heartbeat-expire", "end the heartbeat after this long (e.g. 24h; default: never)")
	fs.StringVar(&raw.Message, "heartbeat-message", heartbeat.DefaultMessage, "text the heartbeat types")
}

// parseSpawnHeartbeat checks spawn's heartbeat flags before anything is
// spawned, so bad values leave no worker behind. It returns nil without
// --heartbeat.
func parseSpawnHeartbeat(io *IO, raw heartbeat.Flags, given func(string) bool) (*heartbeat.Config, error) {
	if !given("heartbeat") {
		for _, name := range []string{"heartbeat-expire", "heartbeat-message"} {
			if given(name) {
				io.Warn(fmt.Sprintf("--%s has no effect without --heartbeat", name))
			}
		}
		return nil, nil
	}
	c, warn, err := heartbeat.Parse(raw, true)
	if err != nil {
		return nil, err
	}
	if warn != "" {
		io.Warn(warn)
	}
	return &c, nil
}

// heartbeatNeedsTmux is swarm.py's warning for spawn --heartbeat of a
// process worker, which gets no heartbeat.
const heartbeatNeedsTmux = "--heartbeat requires --tmux, skipping heartbeat"

// startSpawnHeartbeat starts the heartbeat of a worker just spawned and
// prints "heartbeat started (...)". A process worker gets none: there is
// no pane to type into. The worker is not rolled back when the heartbeat
// fails to start: it runs as asked, and the error says how to add the
// heartbeat.
func startSpawnHeartbeat(io *IO, root string, w *state.Worker, c *heartbeat.Config) error {
	if c == nil {
		return nil
	}
	if w.Tmux == nil {
		io.Warn(heartbeatNeedsTmux)
		return nil
	}
	if _, err := heartbeat.Start(root, w.Name, *c, heartbeat.StartOptions{Warn: io.Warn, Command: heartbeatCommand}); err != nil {
		// %v, not %w: the worker's own error must not print bare.
		return fail(exitFail, "worker '%s' is running, but its heartbeat did not start: %v (retry: swarm heartbeat start %s --interval %s)",
			w.Name, err, w.Name, (&durationValue{p: &c.Interval}).String())
	}
	fmt.Fprintln(io.Out, heartbeat.SpawnedMessage(*c))
	return nil
}
