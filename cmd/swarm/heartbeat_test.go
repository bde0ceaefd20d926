package main

// In-process tests of the heartbeat commands: options, the bare error
// plumbing, and the commands on stored states (no process is started).
// The heartbeat processes themselves are tested black-box by
// internal/heartbeat's cli_test.go.

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/heartbeat"
)

func TestHeartbeatCommandOptions(t *testing.T) {
	t.Parallel()
	s := ipParse(t, newCmdHeartbeatStart, "w", "--interval", "4h", "--expire", "24h", "--message", "go on", "--force")
	ipEqual(t, "heartbeat start", [3]any{s.Name, s.Config, s.Force},
		[3]any{"w", heartbeat.Config{Interval: 4 * time.Hour, Expire: 24 * time.Hour, Message: "go on"}, true})
	s = ipParse(t, newCmdHeartbeatStart, "--interval", "1h30m", "w")
	ipEqual(t, "heartbeat start defaults", [3]any{s.Name, s.Config, s.Force},
		[3]any{"w", heartbeat.Config{Interval: 90 * time.Minute, Message: "continue"}, false})
	ipEqual(t, "seconds without a unit", ipParse(t, newCmdHeartbeatStart, "w", "--interval", "90").Config.Interval, 90*time.Second)

	for _, newCmd := range []func(*factory, func(*heartbeatOptions) error) *cobra.Command{
		newCmdHeartbeatStop, newCmdHeartbeatPause, newCmdHeartbeatResume, newCmdHeartbeatRun,
	} {
		ipEqual(t, "worker name", ipParse(t, newCmd, "w1").Name, "w1")
	}
	ipEqual(t, "heartbeat list default", ipParse(t, newCmdHeartbeatList).Format, "table")
	ipEqual(t, "heartbeat list --format json", ipParse(t, newCmdHeartbeatList, "--format", "json").Format, "json")
	st := ipParse(t, newCmdHeartbeatStatus, "w", "--format", "json")
	ipEqual(t, "heartbeat status", [2]string{st.Name, st.Format}, [2]string{"w", "json"})
	ipEqual(t, "heartbeat status default", ipParse(t, newCmdHeartbeatStatus, "w").Format, "text")
}

// heartbeat.Error values print bare or with the prefix, however they are
// wrapped, and exit 1 (or the code of the exitError around them).
func TestReportHeartbeatErrors(t *testing.T) {
	t.Parallel()
	notPaused := &heartbeat.Error{Kind: heartbeat.KindNotPaused, Msg: "Heartbeat for w is not paused (status: active)"}
	active := &heartbeat.Error{Kind: heartbeat.KindAlreadyActive, Msg: "heartbeat already active for 'w' (use --force to replace)"}
	cases := []struct {
		err    error
		code   int
		stderr string
	}{
		{notPaused, 1, notPaused.Msg + "\n"},
		{fmt.Errorf("resume: %w", notPaused), 1, notPaused.Msg + "\n"},
		{&exitError{code: exitFail, err: notPaused}, 1, notPaused.Msg + "\n"},
		{active, 1, "swarm: error: " + active.Msg + "\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if code := report(&b, nil, c.err); code != c.code || b.String() != c.stderr {
			t.Errorf("report(%v): exit %d, stderr %q; want exit %d, %q", c.err, code, b.String(), c.code, c.stderr)
		}
	}
}

// hbRun runs swarm in-process on root.
func hbRun(root string, args ...string) ipResult {
	var out, errb bytes.Buffer
	code := execute(newFactory(&IO{In: strings.NewReader(""), Out: &out, Err: &errb}, root), args)
	return ipResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// hbPut stores a heartbeat for name with no process behind it.
func hbPut(t *testing.T, root, name, status string) {
	t.Helper()
	now := time.Now()
	st := &heartbeat.State{
		WorkerName: name, IntervalSeconds: 7200, Message: "continue", Status: status,
		CreatedAt: heartbeat.StampOf(now), ExpireAt: heartbeat.StampOf(now.Add(24 * time.Hour)),
	}
	if status == heartbeat.StatusActive {
		st.NextBeatAt = heartbeat.StampOf(now.Add(2 * time.Hour))
	}
	if _, err := heartbeat.NewStore(root, nil).Update(name, func(*heartbeat.State) (*heartbeat.State, error) { return st, nil }); err != nil {
		t.Fatal(err)
	}
}

// The commands on stored heartbeats, with swarm.py's lines and codes.
// None of these starts a process (resume of an active heartbeat without
// one would: that is left to cli_test.go).
func TestHeartbeatCommandsOnState(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	for _, args := range [][]string{{"heartbeat", "list"}, {"heartbeat", "ls", "--format", "json"}} {
		want := map[bool]string{true: "No heartbeats found\n", false: "[]\n"}[len(args) == 2]
		if r := hbRun(empty, args...); r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("swarm %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	root := t.TempDir()
	hbPut(t, root, "w", heartbeat.StatusActive)
	steps := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"heartbeat", "stop", "nobody"}, 0, "No active heartbeat for nobody\n", ""},
		{[]string{"heartbeat", "pause", "nobody"}, 1, "", "No heartbeat found for nobody\n"},
		{[]string{"heartbeat", "resume", "nobody"}, 1, "", "No heartbeat found for nobody\n"},
		{[]string{"heartbeat", "pause", "w"}, 0, "Heartbeat paused for w\n", ""},
		{[]string{"heartbeat", "pause", "w"}, 1, "", "Heartbeat for w is not active (status: paused)\n"},
		{[]string{"heartbeat", "stop", "w"}, 0, "Heartbeat stopped for w\n", ""},
		{[]string{"heartbeat", "resume", "w"}, 1, "", "Heartbeat for w is not paused (status: stopped)\n"},
		{[]string{"heartbeat", "pause", "w"}, 1, "", "Heartbeat for w is not active (status: stopped)\n"},
	}
	for _, s := range steps {
		if r := hbRun(root, s.args...); r.code != s.code || r.stdout != s.stdout || r.stderr != s.stderr {
			t.Errorf("swarm %q: exit %d, stdout %q, stderr %q; want exit %d, %q, %q",
				s.args, r.code, r.stdout, r.stderr, s.code, s.stdout, s.stderr)
		}
	}
	r := hbRun(root, "heartbeat", "status", "w")
	for _, want := range []string{"Worker: w\n", "Status: stopped\n", "Monitor: not running\n", "Interval: 2h 0m\n", "Next beat: -\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("heartbeat status w lacks %q: exit %d\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	r = hbRun(root, "heartbeat", "status", "w", "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"monitor_running": false`) || !strings.Contains(r.stdout, `"worker_name": "w"`) {
		t.Errorf("heartbeat status --format json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = hbRun(root, "heartbeat", "ls")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "WORKER") || !strings.Contains(r.stdout, "\nw ") {
		t.Errorf("heartbeat ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// errors.As finds heartbeat errors through bareError: a guard against the
// method set of heartbeat.Error changing under the plumbing.
func TestHeartbeatErrorIsBare(t *testing.T) {
	t.Parallel()
	var b bareError
	if !errors.As(error(&heartbeat.Error{Kind: heartbeat.KindNoHeartbeat, Msg: "x"}), &b) || !b.Bare() {
		t.Error("heartbeat.Error does not satisfy bareError")
	}
}
