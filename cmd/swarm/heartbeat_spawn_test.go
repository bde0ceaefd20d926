package main

// spawn's and ralph spawn's --heartbeat flags: parsed and checked before
// anything runs; warnings that do not stop the command.

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/heartbeat"
)

func TestSpawnHeartbeatOptions(t *testing.T) {
	t.Parallel()
	want := &heartbeat.Config{Interval: 4 * time.Hour, Expire: 24 * time.Hour, Message: "continue"}
	o := ipParse(t, newCmdSpawn, "--name", "w", "--tmux", "--heartbeat", "4h", "--heartbeat-expire", "24h", "--", "claude")
	ipEqual(t, "spawn --heartbeat", o.Heartbeat, want)
	ipEqual(t, "spawn command", o.Worker.Command, []string{"claude"})
	o = ipParse(t, newCmdSpawn, "--name", "w", "--tmux", "--", "claude", "--heartbeat", "4h")
	if o.Heartbeat != nil {
		t.Errorf("--heartbeat after the command word was taken by spawn: %+v", o.Heartbeat)
	}
	o = ipParse(t, newCmdSpawn, "--name", "r", "--ralph", "--prompt-file", "P.md", "--max-iterations", "3",
		"--heartbeat", "30m", "--heartbeat-message", "keep going", "--", "claude")
	ipEqual(t, "spawn --ralph --heartbeat", o.Heartbeat, &heartbeat.Config{Interval: 30 * time.Minute, Message: "keep going"})

	r := ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "P.md", "--heartbeat", "4h", "--heartbeat-expire", "24h", "--", "claude")
	ipEqual(t, "ralph spawn --heartbeat", r.Heartbeat, want)
	r = ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "P.md", "--", "claude")
	if r.Heartbeat != nil {
		t.Errorf("ralph spawn without --heartbeat: %+v", r.Heartbeat)
	}
}

// ipStreams runs args through the command built by newCmd with a runF that
// does nothing, and returns what it printed and its exit code.
func ipStreams[T any](t *testing.T, newCmd func(*factory, func(*T) error) *cobra.Command, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
	cmd := newCmd(newFactory(streams, t.TempDir()), func(*T) error { return nil })
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	code = runCommand(streams, cmd, args)
	return code, out.String(), errb.String()
}

// Warnings are printed while the command line is checked, before anything
// runs; they do not stop the command.
func TestHeartbeatWarnings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		run    func() (int, string, string)
		stderr string
	}{
		{"heartbeat start short", func() (int, string, string) {
			return ipStreams(t, newCmdHeartbeatStart, "w", "--interval", "30s")
		}, "swarm: warning: very short interval (30s), consider using at least 1m\n"},
		{"spawn short", func() (int, string, string) {
			return ipStreams(t, newCmdSpawn, "--name", "w", "--tmux", "--heartbeat", "45", "--", "a")
		}, "swarm: warning: very short heartbeat interval (45), consider using at least 1m\n"},
		{"ralph spawn short", func() (int, string, string) {
			return ipStreams(t, newCmdRalphSpawn, "--name", "w", "--prompt-file", "P", "--heartbeat", "10s", "--", "a")
		}, "swarm: warning: very short heartbeat interval (10s), consider using at least 1m\n"},
		{"expire without heartbeat", func() (int, string, string) {
			return ipStreams(t, newCmdSpawn, "--name", "w", "--heartbeat-expire", "1h", "--heartbeat-message", "x", "--", "a")
		}, "swarm: warning: --heartbeat-expire has no effect without --heartbeat\nswarm: warning: --heartbeat-message has no effect without --heartbeat\n"},
		{"no warning at 1m", func() (int, string, string) {
			return ipStreams(t, newCmdHeartbeatStart, "w", "--interval", "1m")
		}, ""},
	}
	for _, c := range cases {
		code, stdout, stderr := c.run()
		if code != 0 || stdout != "" || stderr != c.stderr {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want stderr %q", c.name, code, stdout, stderr, c.stderr)
		}
	}
}
