package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// killRounds is how many times the one-loop kill is timed: it waits for
// the monitor's next poll, anywhere from 0 to 2 s, so one run says little.
const killRounds = 5

// killAll times swarm kill --all of -kill-loops running loops (agents
// waiting, default 2 s poll) against its time for one loop (the median of
// killRounds). Each kill waits for its loop's monitor to see it at its
// next poll and exit; one after another, 60 loops took 57 s.
func (e *env) killAll() {
	n := *killLoops
	if n <= 0 {
		return
	}
	fmt.Printf("\nswarm kill --all: %d running loops against one (--agent generic, agents waiting, default 2 s poll)\n", n)
	var ones []time.Duration
	for i := 0; i < killRounds; i++ {
		d, _ := e.timeKillAll(fmt.Sprintf("k1r%d", i), 1)
		ones = append(ones, d)
	}
	sort.Slice(ones, func(i, j int) bool { return ones[i] < ones[j] })
	one := ones[len(ones)/2]
	all, killed := e.timeKillAll("k", n)
	mean := time.Duration(0)
	for _, d := range ones {
		mean += d
	}
	mean /= time.Duration(len(ones))
	fmt.Printf("  one loop:       %s median of %d, mean %s (%s to %s: 2 s when its monitor sees the kill at its next poll)\n",
		secs(one), killRounds, secs(mean), secs(ones[0]), secs(ones[len(ones)-1]))
	fmt.Printf("  %d loops:       %s (%d killed); ratio %.2fx the median, %.2fx the mean  (target: at most 3x)\n",
		n, secs(all), killed, all.Seconds()/one.Seconds(), all.Seconds()/mean.Seconds())
}

// timeKillAll starts n loops named prefix0..., times swarm kill --all, and
// removes them; it returns the time and the loops kill said it killed.
func (e *env) timeKillAll(prefix string, n int) (time.Duration, int) {
	set := e.startMonitors(prefix, n, "generic", idleAgent)
	defer set.stop(e)
	start := time.Now()
	cmd := exec.Command(*swarmBin, "kill", "--all")
	cmd.Env = append(e.environ(), "SWARM_TMUX=tmux")
	cmd.Dir = e.dir
	ob, err := cmd.CombinedOutput()
	out := string(ob)
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "swarm kill --all: %v\n%s", err, out)
		set.stop(e)
		os.Exit(1)
	}
	if n > 1 {
		// What kill --all itself costs (with the tmux processes it
		// runs): on a loaded machine its time is mostly this, shared.
		fmt.Printf("  %d loops' kill CPU: %s (user %s, system %s; with its tmux processes)\n", n,
			secs(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()), secs(cmd.ProcessState.UserTime()), secs(cmd.ProcessState.SystemTime()))
	}
	return took, strings.Count(out, "killed ")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
