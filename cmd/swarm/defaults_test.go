package main

import (
	"strconv"
	"testing"

	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worker"
)

// A flag whose default the packages apply too (an option left zero) shows
// the packages' value: spawn's and ralph spawn's --ready-timeout, ralph
// spawn's --check-timeout and --completion-promise.
func TestFlagDefaultsAreThePackagesDefaults(t *testing.T) {
	t.Parallel()
	f := newFactory(&IO{}, t.TempDir())
	ready := strconv.Itoa(int(worker.DefaultReadyTimeout.Seconds()))
	for _, c := range []struct{ cmd, flag, want string }{
		{"spawn", "ready-timeout", ready},
		{"ralph spawn", "ready-timeout", ready},
		{"ralph spawn", "check-timeout", (&durationValue{p: ptr(ralph.DefaultCheckTimeout)}).String()},
		{"ralph spawn", "completion-promise", ralph.DefaultCompletionPromise},
	} {
		cmd := newCmdSpawn(f, nil)
		if c.cmd == "ralph spawn" {
			cmd = newCmdRalphSpawn(f, nil)
		}
		fl := cmd.Flags().Lookup(c.flag)
		if fl == nil {
			t.Fatalf("%s has no --%s", c.cmd, c.flag)
		}
		if fl.DefValue != c.want {
			t.Errorf("%s --%s defaults to %q, the packages to %q", c.cmd, c.flag, fl.DefValue, c.want)
		}
	}
	if ralph.DefaultReadyTimeout != worker.DefaultReadyTimeout {
		t.Errorf("a loop waits %v for its agent to look ready, spawn %v", ralph.DefaultReadyTimeout, worker.DefaultReadyTimeout)
	}
}

func ptr[T any](v T) *T { return &v }
