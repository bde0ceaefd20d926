package stresstest

// Issue 27, items 4 and 5: a tmux server killed under running loops whose
// monitors live on. Every running iteration ends as docs/ralph.md says
// (tmux-server-gone, a failure), however late its monitor looks: the new
// server another command starts meanwhile has none of the loops' windows,
// and may have given one of their ids to another worker's window, which a
// loop must never take for its own (nor stop its agent).

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKilledServerEndsEveryIterationAsServerGone: two loops run an agent
// each; their monitors are stopped (SIGSTOP), the tmux server killed, and
// another worker spawned, which starts a new server and gets the first
// loop's old window id; the monitors go on (SIGCONT). Both iterations end
// reason=tmux-server-gone, each a failure; the other worker's agent and
// window are untouched.
func TestKilledServerEndsEveryIterationAsServerGone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.WriteFile("PROMPT.md", "work\n")
	loopMarker := w.marker + "-loop"
	// The agents print once and stay: only their tmux server ends them.
	loopAgent := []string{w.e.Agent, "--script", "print working;quiet", loopMarker}
	loops := []string{"la", "lb"}
	ids := map[string]string{}
	for _, l := range loops {
		w.must(append([]string{"ralph", "spawn", "--name", l, "--no-worktree", "--prompt-file", "PROMPT.md",
			"--max-iterations", "1", "--inactivity-timeout", "5s", "--"}, loopAgent...)...)
	}
	var monitors []procInfo
	for _, l := range loops {
		w.e.Eventually("loop "+l+" to deliver its prompt", 30*time.Second, func() bool {
			return w.ralphFlag(l, "prompt_delivered") && w.ralphNum(l, "agent_pid") > 0
		})
		ids[l] = w.e.WindowID(l)
		ms := w.monitors(l)
		if len(ms) != 1 {
			t.Fatalf("loop %s has %d monitors", l, len(ms))
		}
		monitors = append(monitors, ms...)
	}
	for _, m := range monitors {
		if err := signalConfirmed(m, unix.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	cont := func() {
		for _, m := range monitors {
			_ = signalConfirmed(m, unix.SIGCONT) // one already gone needs none
		}
	}
	defer cont()
	if out, err := w.e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	// Workers on the new server until one has the first loop's old id
	// (ids start again from @0 with each server).
	var other string
	for i := 0; i < 5 && other == ""; i++ {
		name := "other" + string(rune('a'+i))
		w.must("spawn", "--name", name, "--tmux", "--", w.e.Agent, "--input", "none", "--script", "print other here;quiet", w.marker)
		if w.e.WindowID(name) == ids["la"] {
			other = name
		}
	}
	if other == "" {
		t.Fatalf("no worker got the window id %s on the new server", ids["la"])
	}
	w.e.Eventually(other+" to start", 10*time.Second, func() bool { return strings.Contains(w.e.Screen(other), "other here") })
	agents := w.markedAgents(processes())
	cont()

	for _, l := range loops {
		st := w.waitLoopEnd(l, 60*time.Second)
		log := w.e.RalphLog(l)
		if !strings.Contains(log, "[END] iteration 1 exit=none reason=tmux-server-gone") ||
			!strings.Contains(log, "[FAIL] iteration 1 exit=the tmux server went away") {
			t.Errorf("loop %s did not end its iteration as tmux-server-gone:\n%s", l, log)
		}
		if st["total_failures"] != float64(1) {
			t.Errorf("loop %s: total_failures %v, want 1", l, st["total_failures"])
		}
	}
	for _, p := range agents {
		if !stillRuns(p) {
			t.Errorf("the agent of another worker (pid %d, %v) was stopped by a loop", p.pid, p.argv)
		}
	}
	if !strings.Contains(w.e.Screen(other), "other here") {
		t.Errorf("%s's window is gone or changed:\n%s", other, w.e.Screen(other))
	}
	recs := w.lsLost()
	if r := recs[other]; r.Status != "running" || r.Lost {
		t.Errorf("%s after the loops ended: %+v", other, r)
	}
}
