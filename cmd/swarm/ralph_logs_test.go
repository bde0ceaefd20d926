package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// rlRaw is an iteration's output as pipe-pane records it: colours, a
// progress line redrawn with carriage returns, CRLF line ends, a window
// title, and the wrapper's end marker.
const rlRaw = "\x1b]0;agent\x07\x1b[1;32mworking\x1b[0m\r\n" +
	"10%\r50%\r\x1b[K100%\r\n" +
	"<promise>COMPLETE</promise>\r\n" +
	"\x1b]7777;swarm-end\x07"

// rlSeed writes an ended loop whose iteration 1 printed rlRaw.
func rlSeed(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	st := state.NewStore(home, func(w string) { t.Errorf("warning: %s", w) })
	rs := st.Ralph("lg")
	started := state.Timestamp{Time: time.Now().Add(-time.Minute)}
	if err := rs.Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "lg", MaxIterations: 3},
		LoopProgress: state.LoopProgress{Status: state.RalphStopped, CurrentIteration: 1,
			Started: started, LastIterationEnd: started, ExitReason: "complete"}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(rs.Dir, "output", "iteration-0001.log")
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(rlRaw), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// ralph logs --iteration and --agent print the agent's output as text;
// --raw prints what the terminal got.
func TestRalphLogsOfTheAgentAreText(t *testing.T) {
	t.Parallel()
	home := rlSeed(t)
	text := "working\n100%\n<promise>COMPLETE</promise>\n"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ralph", "logs", "lg", "--iteration", "1"}, text},
		{[]string{"ralph", "logs", "lg", "--agent"}, text},
		{[]string{"ralph", "logs", "lg", "--iteration", "1", "--raw"}, rlRaw},
		{[]string{"ralph", "logs", "lg", "--agent", "--raw"}, rlRaw},
	}
	for _, c := range cases {
		r := hbRun(home, c.args...)
		if r.code != 0 || r.stdout != c.want || r.stderr != "" {
			t.Errorf("swarm %q: exit %d\nstdout %q\nwant   %q\nstderr %q", c.args, r.code, r.stdout, c.want, r.stderr)
		}
	}
}
