package main

import (
	"fmt"
	"os"
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
	fmt.Printf("  one loop:      %s median of %d (%s to %s)\n", secs(one), killRounds, secs(ones[0]), secs(ones[len(ones)-1]))
	fmt.Printf("  %d loops:      %s (%d killed); ratio %.2fx  (target: at most 3x)\n", n, secs(all), killed, all.Seconds()/one.Seconds())
}

// timeKillAll starts n loops named prefix0..., times swarm kill --all, and
// removes them; it returns the time and the loops kill said it killed.
func (e *env) timeKillAll(prefix string, n int) (time.Duration, int) {
	set := e.startMonitors(prefix, n, "generic", idleAgent)
	defer set.stop(e)
	start := time.Now()
	out, err := e.run(false, "kill", "--all")
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "swarm kill --all: %v\n%s", err, out)
		set.stop(e)
		os.Exit(1)
	}
	return took, strings.Count(out, "killed ")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
