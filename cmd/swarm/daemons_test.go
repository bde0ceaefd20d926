package main

import (
	"os"
	"slices"
	"testing"
)

// The background monitor and the heartbeat process are this binary
// running its own commands, marked in their environment: the CLI owns
// these command lines and hands them to internal/ (every manager it
// makes starts monitors with monitorCommand).
func TestDaemonCommandsAreThisBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		command func(string) ([]string, []string)
		argv    []string
		env     []string
	}{
		{"monitor", monitorCommand, []string{self, "ralph", "run", "w"}, []string{"SWARM_RALPH_MONITOR=1"}},
		{"heartbeat", heartbeatCommand, []string{self, "heartbeat", "run", "w"}, []string{"SWARM_HEARTBEAT=1"}},
	} {
		argv, env := c.command("w")
		if !slices.Equal(argv, c.argv) || !slices.Equal(env, c.env) {
			t.Errorf("%s: %q %q; want %q %q", c.name, argv, env, c.argv, c.env)
		}
	}
	if m := newManager(t.TempDir(), nil); m.MonitorCommand == nil {
		t.Error("the commands' manager cannot start a background monitor")
	}
	t.Setenv(monitorMarker, "1")
	if !isBackgroundMonitor() {
		t.Error("a process with the monitor's marker is not taken for a background monitor")
	}
}
