package main

import (
	"os"

	"github.com/swarmtools/swarm/internal/daemon"
)

// The background processes swarm starts (a loop's monitor, a worker's
// heartbeat) are this binary running one of its commands, detached. Their
// command lines are the CLI's to know: it gives them to the packages that
// start the processes (worker.Manager.MonitorCommand,
// heartbeat.StartOptions.Command), as it gives its own _logpipe,
// _supervise and _exec to worker.Manager.

// Markers set to "1" in the environment of the background processes, so
// that a command can tell it runs as one.
const (
	monitorMarker   = "SWARM_RALPH_MONITOR"
	heartbeatMarker = "SWARM_HEARTBEAT"
)

// monitorCommand starts the background monitor of loop name: "swarm
// ralph run NAME".
func monitorCommand(name string) (argv, env []string) {
	return selfCommand(monitorMarker, "ralph", "run", name)
}

// heartbeatCommand starts the heartbeat process of worker name: "swarm
// heartbeat run NAME" (hidden).
func heartbeatCommand(name string) (argv, env []string) {
	return selfCommand(heartbeatMarker, "heartbeat", "run", name)
}

// selfCommand is this very binary (os.Executable: it starts the same
// from any directory) with args, and marker set in its environment. Its
// argv is nil when the binary's path is unknown: nothing is started then.
func selfCommand(marker string, args ...string) (argv, env []string) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil
	}
	return append([]string{exe}, args...), []string{marker + "=1"}
}

// isBackgroundMonitor reports whether this process is a loop's background
// monitor (started with monitorCommand).
func isBackgroundMonitor() bool { return daemon.IsDaemon(monitorMarker) }
