package stresstest

// Issue 16 item 18: a dead output sink. A process worker's output goes
// through a pipe to swarm _logpipe; when the sink died, the worker's next
// write killed it with SIGPIPE. A loop's agent output goes through tmux
// pipe-pane to the same sink; when it died, tmux stopped piping and the
// loop never saw the agent's COMPLETE.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swarmtools/swarm/internal/testenv"
)

// sinks returns the live sink processes writing log path: the sink itself
// (swarm _logpipe ... PATH) and its standby (a shell that will run it).
func sinks(path string) (active, standby []procInfo) {
	for _, p := range processes() {
		if p.zombie() || len(p.argv) < 2 || p.argv[len(p.argv)-1] != path {
			continue
		}
		switch {
		case slices.Contains(p.argv, "swarm-sink-standby"):
			standby = append(standby, p)
		case p.argv[1] == "_logpipe":
			active = append(active, p)
		}
	}
	return active, standby
}

// waitSink waits for exactly one live sink of path other than the pids
// in gone, with its standby (so it has passed its start, where it makes
// itself immune to the stop signals), and returns it.
func waitSink(t *testing.T, path string, gone ...int) procInfo {
	t.Helper()
	var got procInfo
	testenv.Eventually(t, "a sink for "+filepath.Base(path), 20*time.Second, func() bool {
		active, standby := sinks(path)
		if len(active) != 1 || len(standby) != 1 || slices.Contains(gone, active[0].pid) {
			return false
		}
		got = active[0]
		return true
	})
	return got
}

// logHolds waits until the log holds want.
func logHolds(t *testing.T, path, want string) {
	t.Helper()
	testenv.Eventually(t, "the log to hold "+want, 20*time.Second, func() bool {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), want)
	})
}

// TestDeadSinkDoesNotKillAProcessWorker: the stop signals leave the sink
// running; SIGKILL of the sink (twice: the sink that took its place too)
// leaves the worker running, and its later output goes on into the same
// log, through the standby that became the sink. After the worker is
// killed no sink is left.
func TestDeadSinkDoesNotKillAProcessWorker(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must("spawn", "--name", "p", "--", "sh", "-c",
		`i=0; while :; do i=$((i+1)); echo "tick $i"; echo "err $i" >&2; sleep 0.02; done`, w.marker)
	out := filepath.Join(w.e.Home, "logs", "p.stdout.log")
	errLog := filepath.Join(w.e.Home, "logs", "p.stderr.log")
	logHolds(t, out, "tick 3\n")

	sink := waitSink(t, out)
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGHUP, unix.SIGINT} {
		if err := signalConfirmed(sink, sig); err != nil {
			t.Fatal(err)
		}
	}
	var gone []int
	for range 2 {
		gone = append(gone, sink.pid)
		if err := signalConfirmed(sink, unix.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sink = waitSink(t, out, gone...)
	}
	errSink := waitSink(t, errLog)
	if err := signalConfirmed(errSink, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	last := strings.Count(string(data), "tick ")
	testenv.Eventually(t, "later output in the log", 20*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		return strings.Count(string(data), "tick ") > last+20
	})
	if r := w.run("status", "p"); r.code != 0 {
		t.Fatalf("the worker died with its sink: %s", r)
	}
	w.must("kill", "p")
	testenv.Eventually(t, "the sinks to end with the worker", 20*time.Second, func() bool {
		a, s := sinks(out)
		ea, es := sinks(errLog)
		return len(a)+len(s)+len(ea)+len(es) == 0
	})
}

// TestDeadPipeSinkOfALoopIsRestarted: a loop iteration's output sink and
// its standby are killed; tmux stops piping; the loop says so (WARN),
// pipes again, and the COMPLETE the agent prints afterwards ends the loop.
func TestDeadPipeSinkOfALoopIsRestarted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.WriteFile("PROMPT.md", "work")
	dir := t.TempDir()
	goFile := filepath.Join(dir, "go")
	agent := `printf '> '; read line; touch "$1"; i=0
while [ ! -e "$2" ]; do i=$((i+1)); echo "working $i"; sleep 0.1; done
echo "<promise>COMPLETE</promise>"; sleep 600`
	w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3",
		"--inactivity-timeout", "120", "--", "sh", "-c", agent, w.marker, filepath.Join(dir, "took"), goFile)
	out := filepath.Join(w.e.Home, "ralph", "rl", "output", "iteration-0001.log")
	logHolds(t, out, "working 2")
	active, standby := sinks(out)
	if len(active) != 1 {
		t.Fatalf("sinks of %s: %d, standbys %d", out, len(active), len(standby))
	}
	// Both at once: stopped first, neither can take the other's place.
	for _, sig := range []unix.Signal{unix.SIGSTOP, unix.SIGKILL} {
		for _, p := range append(standby, active...) {
			if err := signalConfirmed(p, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	testenv.Eventually(t, "the WARN", 20*time.Second, func() bool {
		return strings.Contains(w.e.RalphLog("rl"), "[WARN] iteration 1: the agent's output stopped reaching its log")
	})
	data, _ := os.ReadFile(out)
	n := strings.Count(string(data), "working ")
	testenv.Eventually(t, "output in the log again", 20*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		return strings.Count(string(data), "working ") >= n+2
	})
	os.WriteFile(goFile, nil, 0o644)
	st := w.waitLoopEnd("rl", 60*time.Second)
	if st["exit_reason"] != "complete" || st["current_iteration"].(float64) != 1 {
		t.Fatalf("loop ended %v after %v iterations\n%s", st["exit_reason"], st["current_iteration"], w.e.RalphLog("rl"))
	}
	testenv.Eventually(t, "the sinks to end with the agent's window", 20*time.Second, func() bool {
		a, s := sinks(out)
		return len(a)+len(s) == 0
	})
}
