// Command bench prints swarm's performance figures (make bench): latency of
// swarm ls and swarm status at 10, 100 and 500 workers, the number of tmux
// processes each runs; for ralph monitors the tmux processes per poll per
// worker, resident memory and CPU, with the generic profile and with
// Claude Code's (whose screen judgement runs every poll); the time a
// loop spends between iterations (no agent running); and swarm ls
// --all-hosts over 4 hosts (real sshd on loopback addresses, skipped
// without OpenSSH) against one host's own ssh HOST swarm ls.
//
// It drives the real swarm binary against a private tmux server, and counts
// tmux processes with a shim (SWARM_TMUX) that logs each invocation. These
// are figures to read and compare, not pass/fail thresholds.
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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
)

var (
	swarmBin = flag.String("swarm", "bin/swarm", "swarm binary to measure")
	sizes    = flag.String("workers", "10,100,500", "worker counts for ls/status")
	runs     = flag.Int("runs", 15, "runs per latency figure")
	loops    = flag.Int("loops", 10, "ralph loops for the monitor figures")
	watch    = flag.Duration("watch", 20*time.Second, "how long to watch the monitors")
	hosts    = flag.Int("hosts", 4, "hosts for the ls --all-hosts figure (0: skip it)")
	perHost  = flag.Int("host-workers", 100, "workers on each host for the ls --all-hosts figure")
	only     = flag.String("only", "", "run one part only: ls, monitors, idle or hosts")
)

type env struct {
	dir, home, socket, shim, count string
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
	check(os.WriteFile(e.shim, []byte(fmt.Sprintf("#!/bin/sh\necho x >> %s\nexec %s \"$@\"\n", e.count, realTmux)), 0o755))
	defer func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() }() // fails when no part made a server

	fmt.Printf("swarm benchmark  (%s, tmux %s, %d runs per figure)\n", *swarmBin, tmuxVersion(), *runs)
	base, _ := timeRuns(func() { _ = exec.Command("true").Run() }) // timed, not judged: true does not fail
	fmt.Printf("baseline: starting a process (true) takes %s on this machine\n", ms(base))
	if *only == "" || *only == "ls" {
		e.lsFigures()
	}
	if *only == "" || *only == "monitors" {
		for _, profile := range []string{"generic", "claude"} {
			fmt.Printf("\nralph monitors: %d loops, --agent %s, default 2 s poll, watched for %s\n", *loops, profile, *watch)
			e.monitors(profile)
		}
	}
	if *only == "" || *only == "idle" {
		fmt.Printf("\nidle time per iteration (loop elapsed minus agent run time, agent exits at once, 10 iterations)\n")
		e.idlePerIteration()
	}
	if (*only == "" || *only == "hosts") && *hosts > 0 {
		e.hostsFanout(*hosts, *perHost)
	}
}

// lsFigures prints ls and status latency at each worker count.
func (e *env) lsFigures() {
	fmt.Println("\nswarm ls / swarm status latency and tmux processes per command")
	fmt.Printf("%-8s  %-22s  %-22s  %-10s  %-10s\n", "workers", "ls median (p90)", "status median (p90)", "ls tmux", "status tmux")
	have := 0
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		e.addWorkers(have, n)
		have = n
		lsMed, lsP90 := e.latency("ls")
		stMed, stP90 := e.latency("status", fmt.Sprintf("w%d", n/2))
		fmt.Printf("%-8d  %-22s  %-22s  %-10d  %-10d\n", n,
			fmt.Sprintf("%s (%s)", ms(lsMed), ms(lsP90)), fmt.Sprintf("%s (%s)", ms(stMed), ms(stP90)),
			e.execsOf("ls"), e.execsOf("status", fmt.Sprintf("w%d", n/2)))
	}
	e.killServer()
	check(os.RemoveAll(e.home))
}

// idlePerIteration runs a loop whose agent exits at once and reports, per
// iteration, the time no agent ran: starting the agent's process, judging
// its exit, the bookkeeping; with --restart-delay 0, then the default 1 s.
func (e *env) idlePerIteration() {
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

// addWorkers creates workers [from, to): tmux windows running sleep, made
// with chained tmux commands, and their records written in one update (the
// point is to measure ls, not 500 spawns).
func (e *env) addWorkers(from, to int) {
	session := state.DefaultSession(e.home)
	tmux := func(args ...string) {
		out, err := exec.Command("tmux", append([]string{"-L", e.socket}, args...)...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "tmux: %v %s\n", err, out)
			os.Exit(1)
		}
	}
	if from == 0 {
		tmux("new-session", "-d", "-s", session, "-n", "w0", "--", "sleep", "3600")
		from = 1
	}
	for i := from; i < to; {
		var args []string
		for j := 0; j < 50 && i < to; j, i = j+1, i+1 {
			if j > 0 {
				args = append(args, ";")
			}
			args = append(args, "new-window", "-d", "-t", "="+session+":", "-n", fmt.Sprintf("w%d", i), "--", "sleep", "3600")
		}
		tmux(args...)
	}
	st := state.NewStore(e.home, nil)
	check(st.Update(func(r *state.Registry) error {
		r.Workers = r.Workers[:0]
		for i := 0; i < to; i++ {
			r.Workers = append(r.Workers, state.Worker{Name: fmt.Sprintf("w%d", i), Status: state.StatusRunning,
				Cmd: []string{"sleep", "3600"}, Started: state.Now(), Cwd: e.dir,
				Tmux: &state.TmuxInfo{Session: session, Window: fmt.Sprintf("w%d", i), Socket: state.NullString(e.socket)}})
		}
		return nil
	}))
}

func (e *env) latency(args ...string) (time.Duration, time.Duration) {
	return timeRuns(func() {
		if out, err := e.run(false, args...); err != nil && args[0] != "status" {
			fmt.Fprintf(os.Stderr, "swarm %v: %v\n%s", args, err, out)
			os.Exit(1)
		}
	})
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

// busyAgent is, per profile, an agent that works for ever: a line every
// 0.5 s, and for claude a screen as Claude Code's while it works (its
// spinner line redrawn ten times a second, "esc to interrupt").
var busyAgent = map[string]string{
	"generic": "#!/bin/sh\ncat >/dev/null &\ni=0; while :; do i=$((i+1)); echo \"working $i\"; sleep 0.5; done\n",
	"claude":  "#!/bin/sh\ncat >/dev/null &\ni=0; while :; do i=$((i+1)); printf '\\r\\342\\234\\273 Working\\342\\200\\246 (%ds \\302\\267 esc to interrupt)' $((i/10)); sleep 0.1; done\n",
}

// monitors starts ralph loops whose agents keep printing (the busiest case
// for a monitor: the screen changes every poll) and measures them.
func (e *env) monitors(profile string) {
	agent := filepath.Join(e.dir, "agent-"+profile+".sh")
	check(os.WriteFile(agent, []byte(busyAgent[profile]), 0o755))
	prompt := filepath.Join(e.dir, "PROMPT.md")
	check(os.WriteFile(prompt, []byte("work\n"), 0o644))
	for i := 0; i < *loops; i++ {
		out, err := e.swarm("ralph", "spawn", "--name", fmt.Sprintf("m%d", i), "--prompt-file", prompt, "--no-worktree",
			"--prompt-mode", "stdin", "--max-iterations", "5", "--inactivity-timeout", "600", "--agent", profile, "--", agent)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ralph spawn: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	defer func() {
		for i := 0; i < *loops; i++ {
			_, _ = e.swarm("kill", fmt.Sprintf("m%d", i))           // tidying up: the figures are printed
			_, _ = e.swarm("clean", fmt.Sprintf("m%d", i))          // tidying up
			_, _ = e.swarm("ralph", "clean", fmt.Sprintf("m%d", i)) // tidying up
		}
	}()
	pids := make([]int, *loops)
	for i := range pids {
		st, err := state.NewStore(e.home, warn).Ralph(fmt.Sprintf("m%d", i)).Load()
		check(err)
		pids[i] = st.MonitorPID
	}
	// Measure the steady state: every loop past its first iteration's
	// start (on a machine still busy with the 500 workers' teardown, a
	// spawn can return before it), then a few polls more.
	for i := range pids {
		e.waitFor(filepath.Join(e.home, "ralph", fmt.Sprintf("m%d", i), "iterations.log"), "[START] iteration 1/")
	}
	clock.Real.Sleep(context.Background(), 3*time.Second)
	if err := os.Remove(e.count); err != nil && !errors.Is(err, fs.ErrNotExist) {
		check(err)
	}
	cpu0 := cpuTicks(pids)
	start := time.Now()
	clock.Real.Sleep(context.Background(), *watch)
	el := time.Since(start)
	cpu1 := cpuTicks(pids)
	execs := lines(e.count)
	polls := el.Seconds() / 2.0 * float64(*loops)
	var rss []int
	for _, p := range pids {
		rss = append(rss, rssKB(p))
	}
	sort.Ints(rss)
	cpuPct := float64(cpu1-cpu0) / 100.0 / el.Seconds() * 100 / float64(*loops)
	fmt.Printf("  tmux processes per poll per worker: %.2f  (%d tmux runs in %s for %d loops at one poll per 2 s)\n", float64(execs)/polls, execs, el.Round(time.Second), *loops)
	fmt.Printf("  monitor RSS per worker:             median %d KiB, max %d KiB\n", rss[len(rss)/2], rss[len(rss)-1])
	fmt.Printf("  monitor CPU per worker:             %.2f%% of one core\n", cpuPct)
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

// cpuTicks sums utime+stime (clock ticks, 100/s on Linux) of pids.
func cpuTicks(pids []int) int {
	total := 0
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		u, _ := strconv.Atoi(f[11])
		k, _ := strconv.Atoi(f[12])
		total += u + k
	}
	return total
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return 0
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
