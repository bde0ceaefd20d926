// Command bench prints swarm's performance figures (make bench), each
// as a ratio to a floor measured in the same run, with the absolute
// times: swarm --version against a Go hello-world; swarm ls and swarm
// status at 10, 100 and 500 workers against the hello-world plus one
// tmux list-windows -a of the same windows, with the tmux processes each
// runs; one refresh of swarm top (--once) at 500 workers and 100 loops
// against ls; ralph monitors of busy agents (the generic profile and
// Claude Code's, whose screen judgement runs every poll): tmux and other
// processes started per poll, CPU against a loop that runs one tmux
// display-message every 2 s, resident memory; 50 idle monitors' total CPU
// and memory; the time a loop spends between iterations (no agent
// running); swarm kill --all of 60 running loops against one; and swarm
// ls --all-hosts over 4 hosts (real sshd on loopback
// addresses, skipped without OpenSSH) against one host's own ssh HOST
// swarm ls.
//
// Absolute times on a shared machine drift from day to day; a floor
// measured in the same run, in rounds interleaved with what it is the
// floor of, does not. It drives the real swarm binary against a private
// tmux server, and counts tmux processes with a shim (SWARM_TMUX) that
// logs each invocation. These are figures to read and compare, not
// pass/fail thresholds; the targets are printed beside them.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

var (
	swarmBin  = flag.String("swarm", "bin/swarm", "swarm binary to measure")
	sizes     = flag.String("workers", "10,100,500", "worker counts for ls/status")
	runs      = flag.Int("runs", 15, "runs per latency figure")
	loops     = flag.Int("loops", 10, "ralph loops for the busy monitor figures")
	idleLoops = flag.Int("idle-loops", 50, "ralph loops for the idle monitor figure (0: skip it)")
	topLoops  = flag.Int("top-loops", 100, "loops among the most workers for the swarm top figure")
	watch     = flag.Duration("watch", time.Minute, "how long to watch the monitors (long enough for their collections: in 20 s a busy monitor had not collected once, and its RSS was a third lower than a minute later)")
	hosts     = flag.Int("hosts", 4, "hosts for the ls --all-hosts figure (0: skip it)")
	perHost   = flag.Int("host-workers", 100, "workers on each host for the ls --all-hosts figure")
	killLoops = flag.Int("kill-loops", 60, "running loops for the kill --all figure (0: skip it)")
	only      = flag.String("only", "", "run one part only: startup, ls, monitors, idle-monitors, idle, kill or hosts")
)

type env struct {
	dir, home, socket, shim, count string
	windows                        []string // the workers' window ids, by number
}

func main() {
	flag.Parse()
	bin, err := filepath.Abs(*swarmBin)
	check(err)
	*swarmBin = bin
	dir, err := os.MkdirTemp("", "swarm-bench-")
	check(err)
	defer func() { _ = os.RemoveAll(dir) }() // a temporary directory: the system clears what is left
	e := &env{dir: dir, home: filepath.Join(dir, "home"), socket: fmt.Sprintf("swarm-bench-%d", os.Getpid()),
		shim: filepath.Join(dir, "tmux-shim"), count: filepath.Join(dir, "tmux.count")}
	realTmux, err := exec.LookPath("tmux")
	check(err)
	// The shim logs one line per tmux process, then becomes tmux.
	check(writeShim(e.shim, e.count, realTmux))
	defer func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() }() // fails when no part made a server

	fmt.Printf("swarm benchmark  (%s, tmux %s, %d runs per figure, %d cores)\n", *swarmBin, tmuxVersion(), *runs, runtime.NumCPU())
	fmt.Printf("load average at the start: %s\n", loadAvg())
	e.buildFloors(realTmux)
	base, _ := timeRuns(func() { _ = exec.Command("true").Run() }) // timed, not judged: true does not fail
	fmt.Printf("baseline: starting a process (true) takes %s on this machine\n", ms(base))
	parts := []struct {
		name string
		run  func()
	}{
		{"startup", e.startup},
		{"ls", e.lsFigures},
		{"monitors", func() {
			for _, profile := range []string{"generic", "claude"} {
				e.busyMonitors(profile)
			}
		}},
		{"idle-monitors", e.idleMonitors},
		{"idle", e.idlePerIteration},
		{"kill", e.killAll},
		{"hosts", func() {
			if *hosts > 0 {
				e.hostsFanout(*hosts, *perHost)
			}
		}},
	}
	for _, p := range parts {
		if *only == "" || *only == p.name {
			p.run()
		}
	}
	fmt.Printf("\nload average at the end: %s\n", loadAvg())
}

// idlePerIteration runs a loop whose agent exits at once and reports, per
// iteration, the time no agent ran: starting the agent's process, judging
// its exit, the bookkeeping; with --restart-delay 0, then the default 1 s.
func (e *env) idlePerIteration() {
	fmt.Printf("\nidle time per iteration (loop elapsed minus agent run time, agent exits at once, 10 iterations)\n")
	prompt := filepath.Join(e.dir, "PROMPT.md")
	check(os.WriteFile(prompt, []byte("work\n"), 0o644))
	for i, delay := range []string{"0", "1s"} {
		name := fmt.Sprintf("idle%d", i)
		out, err := e.swarm("ralph", "spawn", "--name", name, "--prompt-file", prompt, "--no-worktree", "--prompt-mode", "stdin",
			"--max-iterations", "10", "--restart-delay", delay, "--foreground", "--", "sh", "-c", "cat >/dev/null; echo done")
		if err != nil {
			fmt.Fprintf(os.Stderr, "ralph spawn: %v\n%s", err, out)
			os.Exit(1)
		}
		st, err := state.NewStore(e.home, warn).Ralph(name).Load()
		check(err)
		if st.Started.IsZero() || st.LastIterationEnd.IsZero() || len(st.IterationDurations) == 0 {
			fmt.Fprintf(os.Stderr, "ralph loop %s: no iteration recorded (started %v, last iteration ended %v, %d durations)\n",
				name, st.Started.Time, st.LastIterationEnd.Time, len(st.IterationDurations))
			os.Exit(1)
		}
		ran := 0.0
		for _, d := range st.IterationDurations {
			ran += d
		}
		n := float64(len(st.IterationDurations))
		idle := st.LastIterationEnd.Sub(st.Started.Time).Seconds() - ran
		fmt.Printf("  --restart-delay %-3s  %.0f ms idle per iteration (agent ran %.0f ms per iteration)\n", delay, idle/n*1000, ran/n*1000)
		_, _ = e.swarm("clean", name) // tidying up: the figure is printed
	}
}

func (e *env) environ(extra ...string) []string {
	env := append(os.Environ(), "SWARM_HOME="+e.home, "SWARM_DIR=", "SWARM_TMUX_SOCKET="+e.socket, "SWARM_TMUX="+e.shim, "TMUX=", "SWARM_POLL_INTERVAL=")
	return append(env, extra...)
}

func (e *env) swarm(args ...string) (string, error) { return e.run(true, args...) }

// run runs swarm; counted runs go through the tmux shim, timed runs do not
// (the shim's own shell would add to the latency).
func (e *env) run(counted bool, args ...string) (string, error) {
	cmd := exec.Command(*swarmBin, args...)
	cmd.Env = e.environ()
	if !counted {
		cmd.Env = append(cmd.Env, "SWARM_TMUX=tmux")
	}
	cmd.Dir = e.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// addWorkers creates workers [from, to): tmux windows running sleep,
// tagged and recorded with their window id as swarm spawn does (status
// asks tmux for the recorded window), and their records written in one
// update (the point is to measure ls, not 500 spawns).
func (e *env) addWorkers(from, to int) {
	session := state.DefaultSession(e.home)
	tc := tmux.New(e.socket)
	for i := from; i < to; i++ {
		name := fmt.Sprintf("w%d", i)
		id, err := tc.NewWindow(tmux.WindowSpec{Session: session, Name: name, Command: []string{"sleep", "3600"}, Tag: "bench-" + name})
		check(err)
		e.windows = append(e.windows, id)
	}
	st := state.NewStore(e.home, nil)
	check(st.Update(func(r *state.Registry) error {
		r.Workers = r.Workers[:0]
		for i := 0; i < to; i++ {
			name := fmt.Sprintf("w%d", i)
			r.Workers = append(r.Workers, state.Worker{Name: name, Status: state.StatusRunning,
				Cmd: []string{"sleep", "3600"}, Started: state.Now(), Cwd: e.dir,
				Tmux:     &state.TmuxInfo{Session: session, Window: name, Socket: state.NullString(e.socket)},
				Metadata: map[string]any{worker.WindowIDKey: e.windows[i], worker.WindowTokenKey: "bench-" + name}})
		}
		return nil
	}))
}

// timeRuns returns the median and 90th percentile of -runs runs of f.
func timeRuns(f func()) (time.Duration, time.Duration) {
	var ds []time.Duration
	for i := 0; i < *runs; i++ {
		start := time.Now()
		f()
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*9/10]
}

func (e *env) execsOf(args ...string) int {
	if err := os.Remove(e.count); err != nil && !errors.Is(err, fs.ErrNotExist) {
		check(err)
	}
	_, _ = e.swarm(args...) // counted, not judged: a command that fails runs tmux as well
	return lines(e.count)
}

func lines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// killServer ends the tmux server and waits until it is gone: a server
// with 500 panes takes a while to close them, and a command sent to it
// meanwhile meets a server that exits under it.
func (e *env) killServer() {
	_ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() // the wait below says whether it is gone
	gone := clock.Wait(context.Background(), clock.Real, benchPoll, time.Minute, func() bool {
		out, err := exec.Command("tmux", "-L", e.socket, "list-sessions").CombinedOutput()
		return err != nil && (strings.Contains(string(out), "no server running") || strings.Contains(string(out), "error connecting"))
	})
	if gone {
		return
	}
	fmt.Fprintln(os.Stderr, "the tmux server did not exit within a minute")
	os.Exit(1)
}

// benchPoll paces the bench's waits for tmux and for the loops' logs.
const benchPoll = 50 * time.Millisecond

// waitFor waits until the file holds text, for at most a minute.
func (e *env) waitFor(path, text string) {
	if clock.Wait(context.Background(), clock.Real, benchPoll, time.Minute, func() bool {
		b, err := os.ReadFile(path)
		return err == nil && bytes.Contains(b, []byte(text))
	}) {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: no %q after a minute\n", path, text)
	os.Exit(1)
}

func tmuxVersion() string {
	out, _ := exec.Command("tmux", "-V").Output()
	return strings.TrimSpace(strings.TrimPrefix(string(out), "tmux "))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// warn prints a warning of the state store (a state file it could not
// use: the figures read from it would be wrong).
func warn(msg string) { fmt.Fprintln(os.Stderr, "bench: warning:", msg) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
