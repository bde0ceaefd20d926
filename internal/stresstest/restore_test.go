package stresstest

// Issue 19, item 3: everything back after a reboot. A reboot takes the tmux
// server and every monitor; here the server is killed and the monitors
// SIGKILLed, which is what a reboot leaves for swarm to find.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lsLost is a worker as ls --format json shows it, with its lost mark.
type lsLost struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Lost   bool   `json:"lost"`
}

func (w *world) lsLost() map[string]lsLost {
	w.t.Helper()
	r := w.must("ls", "--format", "json")
	var recs []lsLost
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil {
		w.t.Fatalf("ls json: %v\n%s", err, r.stdout)
	}
	out := map[string]lsLost{}
	for _, rec := range recs {
		out[rec.Name] = rec
	}
	return out
}

var startLine = regexp.MustCompile(`(?m)\[START\] iteration (\d+)/`)

// starts counts the START lines of each iteration of loop name.
func (w *world) starts(name string) map[int]int {
	out := map[int]int{}
	for _, m := range startLine.FindAllStringSubmatch(w.e.RalphLog(name), -1) {
		n, _ := strconv.Atoi(m[1])
		out[n]++
	}
	return out
}

// checkIterations fails unless loop name started iterations 1..n, each
// exactly once, for some n >= least.
func (w *world) checkIterations(name string, least int) {
	w.t.Helper()
	s := w.starts(name)
	for i := 1; i <= len(s); i++ {
		if s[i] != 1 {
			w.t.Errorf("loop %s: iteration %d started %d time(s) (STARTs %v)\n%s", name, i, s[i], s, w.e.RalphLog(name))
		}
	}
	if len(s) < least {
		w.t.Errorf("loop %s: %d iteration(s) started, want at least %d", name, len(s), least)
	}
}

// TestRestoreAfterTmuxServerAndMonitorsDie: three tmux workers (one in a
// worktree, one with env and tags) and two loops (one in a worktree); the
// tmux server is killed and every monitor SIGKILLed. ls keeps them
// stopped, marked lost; no agent survives its window. swarm restore --all
// brings back every worker (same command, env, worktree) and every loop,
// whose iterations go on with none started twice or skipped; a second
// restore does nothing.
func TestRestoreAfterTmuxServerAndMonitorsDie(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.initRepo()
	w.e.WriteFile("PROMPT.md", "work\n")
	w.must(append([]string{"spawn", "--name", "plain", "--tmux", "--"}, w.agent()...)...)
	w.must("spawn", "--name", "envd", "--tmux", "--env", "RESTORE_K=v1", "--tag", "keep", "--",
		w.e.Agent, "--input", "none", "--script", "env RESTORE_K;quiet", w.marker)
	w.must(append([]string{"spawn", "--name", "tree", "--tmux", "--worktree", "--"}, w.agent()...)...)
	// The loops' agents carry a marker of their own: the workers' are
	// counted apart.
	loopMarker := w.marker + "-loop"
	loopAgent := []string{w.e.Agent, "--script", "print working;sleep 700ms;exit 0", loopMarker}
	w.must(append([]string{"ralph", "spawn", "--name", "la", "--no-worktree", "--prompt-file", "PROMPT.md",
		"--max-iterations", "200", "--restart-delay", "100ms", "--"}, loopAgent...)...)
	w.must(append([]string{"ralph", "spawn", "--name", "lb", "--prompt-file", w.e.Dir + "/PROMPT.md",
		"--max-iterations", "200", "--restart-delay", "100ms", "--"}, loopAgent...)...)
	loops := []string{"la", "lb"}
	workers := []string{"plain", "envd", "tree"}
	for _, l := range loops {
		w.e.Eventually("loop "+l+" at iteration 2", 30*time.Second, func() bool { return w.ralphNum(l, "current_iteration") >= 2 })
	}
	w.e.Eventually("envd to print its env", 10*time.Second, func() bool { return strings.Contains(w.e.Screen("envd"), "RESTORE_K=v1") })

	// The reboot: the tmux server and every monitor.
	var monitors []procInfo
	for _, l := range loops {
		ms := w.monitors(l)
		if len(ms) != 1 {
			t.Fatalf("loop %s has %d monitors", l, len(ms))
		}
		monitors = append(monitors, ms...)
	}
	if out, err := w.e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	for _, m := range monitors {
		if err := signalConfirmed(m, unix.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	w.e.Eventually("the monitors to die", 10*time.Second, func() bool {
		return !stillRuns(monitors[0]) && !stillRuns(monitors[1])
	})
	w.e.Eventually("no agent to outlive its window", 10*time.Second, func() bool {
		for _, p := range processes() {
			if !p.zombie() && p.exe == w.e.Agent && (p.carries(w.marker) || p.carries(loopMarker)) {
				return false
			}
		}
		return true
	})
	before := map[string]int{}
	for _, l := range loops {
		before[l] = len(w.starts(l))
	}

	recs := w.lsLost()
	for _, n := range append(workers, loops...) {
		if r := recs[n]; r.Status != "stopped" || !r.Lost {
			t.Errorf("ls after the reboot: %s is %+v, want stopped and lost", n, r)
		}
	}
	if table := w.must("ls").stdout; strings.Count(table, "stopped(lost)") != 5 {
		t.Errorf("ls table does not mark the five lost:\n%s", table)
	}

	r := w.must("restore", "--all")
	for _, n := range workers {
		if !strings.Contains(r.stdout, fmt.Sprintf("restored %s (tmux: %s:%s)\n", n, w.session, n)) {
			t.Errorf("restore --all does not say it restored %s:\n%s", n, r)
		}
	}
	for _, l := range loops {
		if !strings.Contains(r.stdout, "resumed loop "+l+" at iteration ") {
			t.Errorf("restore --all does not say it resumed %s:\n%s", l, r)
		}
	}

	recs = w.lsLost()
	for _, n := range workers {
		if r := recs[n]; r.Status != "running" || r.Lost {
			t.Errorf("after restore: %s is %+v, want running", n, r)
		}
	}
	w.e.Eventually("envd to print its env again", 10*time.Second, func() bool { return strings.Contains(w.e.Screen("envd"), "RESTORE_K=v1") })
	if n := len(w.markedAgents(processes())); n != 3 {
		t.Errorf("%d agents run besides the loops' (want the three workers')", n)
	}
	for _, l := range loops {
		w.e.Eventually("loop "+l+" to go on", 40*time.Second, func() bool { return len(w.starts(l)) >= before[l]+2 })
		if ms := w.monitors(l); len(ms) != 1 {
			t.Errorf("loop %s has %d monitors after restore", l, len(ms))
		}
	}

	// Nothing is restored twice.
	windows := map[string]string{}
	for _, n := range workers {
		windows[n] = w.e.WindowID(n)
	}
	r = w.must("restore", "--all")
	if r.stdout != "nothing to restore\n" || r.stderr != "" {
		t.Errorf("a second restore: %s", r)
	}
	for _, n := range workers {
		if id := w.e.WindowID(n); id != windows[n] {
			t.Errorf("the second restore replaced %s's window (%s, was %s)", n, id, windows[n])
		}
	}
	for _, l := range loops {
		if ms := w.monitors(l); len(ms) != 1 {
			t.Errorf("loop %s has %d monitors after a second restore", l, len(ms))
		}
	}
	w.must("kill", "--all")
	for _, l := range loops {
		w.checkIterations(l, before[l]+2)
	}
}
