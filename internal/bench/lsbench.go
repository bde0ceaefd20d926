package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// startup prints swarm --version against the hello-world.
func (e *env) startup() {
	fmt.Println("\nstart-up: swarm --version against a Go hello-world (interleaved rounds)")
	rounds := 4 * *runs
	med, p90 := interleave(rounds,
		timed{"hello", quiet(false, os.Environ(), e.dir, floor.hello)},
		timed{"version", quiet(false, os.Environ(), e.dir, *swarmBin, "--version")},
	)
	fmt.Printf("  hello-world:     median %s (p90 %s)\n", ms(med["hello"]), ms(p90["hello"]))
	fmt.Printf("  swarm --version: median %s (p90 %s)\n", ms(med["version"]), ms(p90["version"]))
	fmt.Printf("  ratio:           %s  (target: at most 1.5x)\n", ratio(med["version"], med["hello"]))
}

// lsFigures prints ls and status latency at each worker count against
// the floor (the hello-world plus one tmux list-windows -a of the same
// windows), the tmux processes each runs, and then one refresh of swarm
// top at the largest count with loops among the workers.
func (e *env) lsFigures() {
	fmt.Println("\nswarm ls / swarm status latency (median of interleaved rounds), ratio to the floor, tmux processes per command")
	fmt.Println("  floor: a Go hello-world + one tmux list-windows -a of the same windows; targets: ls at most 1.5x the floor,")
	fmt.Println("  status flat (at most 1.2x its time at the fewest workers). tmux1: one tmux list-panes of the one window status asks")
	fmt.Println("  about (tmux's own time grows with the windows it holds), and status against hello + tmux1 (st/fl1)")
	fmt.Printf("  %-8s %-20s %-20s %-7s %-20s %-7s %-8s %-14s %-7s %-8s %-8s\n", "workers", "floor (hello+tmux)", "ls median (p90)", "ls/fl", "status median (p90)", "st/fl", "st/st1", "tmux1 (vs 1st)", "st/fl1", "ls tmux", "st tmux")
	have, last := 0, 0
	var status1, tmux1 time.Duration
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		e.addWorkers(have, n)
		have, last = n, n
		med, p90 := e.lsRounds(n)
		fl := med["hello"] + med["list-windows"]
		if status1 == 0 {
			status1, tmux1 = med["status"], med["one-window"]
		}
		fmt.Printf("  %-8d %-20s %-20s %-7s %-20s %-7s %-8s %-14s %-7s %-8d %-8d\n", n,
			fmt.Sprintf("%s+%s", ms(med["hello"]), ms(med["list-windows"])),
			fmt.Sprintf("%s (%s)", ms(med["ls"]), ms(p90["ls"])), ratio(med["ls"], fl),
			fmt.Sprintf("%s (%s)", ms(med["status"]), ms(p90["status"])), ratio(med["status"], fl), ratio(med["status"], status1),
			fmt.Sprintf("%s (%s)", ms(med["one-window"]), ratio(med["one-window"], tmux1)), ratio(med["status"], med["hello"]+med["one-window"]),
			e.execsOf("ls"), e.execsOf("status", fmt.Sprintf("w%d", n/2)))
	}
	if last > 0 && *topLoops > 0 {
		e.topFigure(last, min(*topLoops, last))
	}
	e.killServer()
	e.windows = nil
	_ = os.RemoveAll(e.home) // the bench's scratch; a leftover is only disk
}

// lsRounds times the floor's parts, ls and status at n workers, in
// interleaved rounds.
func (e *env) lsRounds(n int) (med, p90 map[string]time.Duration) {
	timedEnv := append(e.environ(), "SWARM_TMUX=tmux")
	return interleave(*runs,
		timed{"hello", quiet(false, timedEnv, e.dir, floor.hello)},
		timed{"list-windows", quiet(false, timedEnv, e.dir, "tmux", "-L", e.socket, "list-windows", "-a")},
		timed{"ls", quiet(false, timedEnv, e.dir, *swarmBin, "ls")},
		timed{"status", quiet(true, timedEnv, e.dir, *swarmBin, "status", fmt.Sprintf("w%d", n/2))},
		timed{"one-window", quiet(false, timedEnv, e.dir, "tmux", "-L", e.socket, "list-panes", "-t", e.windows[n/2], "-F", "#{pane_dead}")},
	)
}

// topFigure makes loops of the first n workers' records (state files of
// running loops, every few workers one) and times swarm top --once, one
// refresh of the board printed as text, against ls at the same size.
func (e *env) topFigure(workers, n int) {
	e.addLoops(workers, n)
	timedEnv := append(e.environ(), "SWARM_TMUX=tmux")
	med, p90 := interleave(*runs,
		timed{"ls", quiet(false, timedEnv, e.dir, *swarmBin, "ls")},
		timed{"top", quiet(false, timedEnv, e.dir, *swarmBin, "top", "--once")},
	)
	fmt.Printf("\nswarm top: one refresh (top --once) at %d workers and %d loops, against ls at the same size (interleaved)\n", workers, n)
	fmt.Printf("  ls:         median %s (p90 %s)\n", ms(med["ls"]), ms(p90["ls"]))
	fmt.Printf("  top --once: median %s (p90 %s), %d tmux processes\n", ms(med["top"]), ms(p90["top"]), e.execsOf("top", "--once"))
	fmt.Printf("  ratio:      %s  (target: at most 2x)\n", ratio(med["top"], med["ls"]))
}

// addLoops gives n of the workers a running loop's state, spread over
// them: the files swarm ralph spawn writes, with a history of
// iterations, and no monitor (the board reads the files; nothing runs).
func (e *env) addLoops(workers, n int) {
	st := state.NewStore(e.home, warn)
	step := max(1, workers/n)
	loop := map[string]bool{}
	for i := 0; i < n; i++ {
		loop[fmt.Sprintf("w%d", i*step)] = true
	}
	check(st.Update(func(r *state.Registry) error {
		for i := range r.Workers {
			if loop[r.Workers[i].Name] {
				r.Workers[i].Metadata = map[string]any{"ralph": true}
			}
		}
		return nil
	}))
	started := time.Now().Add(-time.Hour)
	for name := range loop {
		rs := st.Ralph(name)
		check(rs.Create(&state.Ralph{
			LoopConfig: state.LoopConfig{WorkerName: name, PromptFile: "PROMPT.md", MaxIterations: 50,
				InactivityTimeout: state.WholeSeconds{Duration: 180 * time.Second}, PromptMode: state.PromptStdin},
			LoopProgress: state.LoopProgress{CurrentIteration: 6, Status: state.RalphRunning,
				Started:            state.Timestamp{Time: started},
				LastIterationStart: state.Timestamp{Time: started.Add(50 * time.Minute)},
				LastIterationEnd:   state.Timestamp{Time: started.Add(49 * time.Minute)},
				IterationDurations: []float64{600, 580, 610, 590, 550}, IterationActive: true,
				LastScreenChange: state.UTCTimestamp{Time: time.Now().Add(-5 * time.Second)}},
		}))
	}
}
