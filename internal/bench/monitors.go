package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
)

// busyAgent is, per profile, an agent that works for ever: a line every
// 0.5 s, and for claude a screen as Claude Code's while it works (its
// spinner line redrawn ten times a second, "esc to interrupt").
var busyAgent = map[string]string{
	"generic": "#!/bin/sh\ncat >/dev/null &\ni=0; while :; do i=$((i+1)); echo \"working $i\"; sleep 0.5; done\n",
	"claude":  "#!/bin/sh\ncat >/dev/null &\ni=0; while :; do i=$((i+1)); printf '\\r\\342\\234\\273 Working\\342\\200\\246 (%ds \\302\\267 esc to interrupt)' $((i/10)); sleep 0.1; done\n",
}

// idleAgent prints once and then waits for ever: a loop watching an
// agent that thinks, or waits at a prompt nobody answers.
const idleAgent = "#!/bin/sh\ncat >/dev/null &\necho started\nexec sleep 100000\n"

// forkWatch is how long the monitors' process starts are counted (with
// strace, which slows what it traces: apart from the CPU figures).
const forkWatch = 10 * time.Second

// memTarget is the bound on a monitor's resident memory.
const memTarget = 10 << 10 // KiB

// busyMonitors starts ralph loops whose agents keep printing (the
// busiest case for a monitor: the screen changes every poll) and
// measures them against as many poll loops watching their windows.
func (e *env) busyMonitors(profile string) {
	fmt.Printf("\nralph monitors: %d loops, --agent %s, agents printing all the time, default 2 s poll, watched for %s\n", *loops, profile, *watch)
	set := e.startMonitors("m", *loops, profile, busyAgent[profile])
	defer set.stop(e)
	e.measureMonitors(set)
}

// idleMonitors starts -idle-loops loops whose agents print once and then
// wait, and prints what they cost in all.
func (e *env) idleMonitors() {
	if *idleLoops <= 0 {
		return
	}
	fmt.Printf("\nralph monitors: %d loops, --agent generic, agents waiting (no output), default 2 s poll, watched for %s\n", *idleLoops, *watch)
	set := e.startMonitors("i", *idleLoops, "generic", idleAgent)
	defer set.stop(e)
	e.measureMonitors(set)
}

// monitorSet is the loops of one figure.
type monitorSet struct {
	names   []string
	pids    []int
	windows []string // tmux window ids
}

// startMonitors spawns n loops of agent (a script) with profile and waits
// until each has started its first iteration.
func (e *env) startMonitors(prefix string, n int, profile, script string) *monitorSet {
	agent := filepath.Join(e.dir, "agent-"+prefix+"-"+profile+".sh")
	check(os.WriteFile(agent, []byte(script), 0o755))
	prompt := filepath.Join(e.dir, "PROMPT.md")
	check(os.WriteFile(prompt, []byte("work\n"), 0o644))
	ms := &monitorSet{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		ms.names = append(ms.names, name)
		out, err := e.swarm("ralph", "spawn", "--name", name, "--prompt-file", prompt, "--no-worktree",
			"--prompt-mode", "stdin", "--max-iterations", "5", "--inactivity-timeout", "600", "--agent", profile, "--", agent)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ralph spawn: %v\n%s", err, out)
			ms.stop(e)
			os.Exit(1)
		}
	}
	for _, name := range ms.names {
		st, err := state.NewStore(e.home, warn).Ralph(name).Load()
		check(err)
		ms.pids = append(ms.pids, st.MonitorPID)
		// Measure the steady state: every loop past its first
		// iteration's start (on a machine still busy with the 500
		// workers' teardown, a spawn can return before it).
		e.waitFor(filepath.Join(e.home, "ralph", name, "iterations.log"), "[START] iteration 1/")
	}
	// The monitor makes its agent's window after the START line: on a
	// loaded machine the first loop's server may not be up yet.
	var windows map[string]string
	if !clock.Wait(context.Background(), clock.Real, benchPoll, time.Minute, func() bool {
		windows = e.windowIDs()
		for _, name := range ms.names {
			if windows[name] == "" {
				return false
			}
		}
		return true
	}) {
		fmt.Fprintln(os.Stderr, "the loops' windows did not all appear within a minute")
		ms.stop(e)
		os.Exit(1)
	}
	for _, name := range ms.names {
		ms.windows = append(ms.windows, windows[name])
	}
	return ms
}

// stop kills and removes the loops.
func (ms *monitorSet) stop(e *env) {
	for _, name := range ms.names {
		_, _ = e.swarm("kill", name)           // best effort: the bench's server is killed at the end
		_, _ = e.swarm("clean", name)          // best effort, as kill
		_, _ = e.swarm("ralph", "clean", name) // best effort, as kill
	}
}

// windowIDs maps window names to ids on the bench's server (none while
// there is no server).
func (e *env) windowIDs() map[string]string {
	ids := map[string]string{}
	out, err := exec.Command("tmux", "-L", e.socket, "list-windows", "-a", "-F", "#{window_name}\t#{window_id}").Output()
	if err != nil {
		return ids // no server yet: none
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, id, ok := strings.Cut(line, "\t"); ok {
			ids[name] = id
		}
	}
	return ids
}

// measureMonitors prints the monitors' tmux processes and other process
// starts per poll, their CPU against as many poll loops (one tmux
// display-message of the same windows every 2 s), run over the same
// time, and their memory.
func (e *env) measureMonitors(ms *monitorSet) {
	n := len(ms.pids)
	floorN := min(n, *loops)
	var fl []*exec.Cmd
	for i := 0; i < floorN; i++ {
		cmd := exec.Command(floor.pollLoop, floor.pollShim, "-L", e.socket, "display-message", "-p", "-t", ms.windows[i], "#{pane_pid}")
		check(cmd.Start())
		fl = append(fl, cmd)
	}
	defer func() {
		for _, c := range fl {
			_ = c.Process.Kill() // the floor's own loop: gone already is fine
			_ = c.Wait()         // killed: its exit status says so
		}
	}()
	flPids := make([]int, len(fl))
	for i, c := range fl {
		flPids[i] = c.Process.Pid
	}
	clock.Real.Sleep(context.Background(), 3*time.Second)
	_ = os.Remove(e.count)         // counting starts afresh; none yet is fine
	_ = os.Remove(floor.pollCount) // as e.count
	m0, f0 := cpuOf(ms.pids), cpuOf(flPids)
	start := time.Now()
	clock.Real.Sleep(context.Background(), *watch)
	el := time.Since(start)
	m1, f1 := cpuOf(ms.pids), cpuOf(flPids)
	execs, flExecs := lines(e.count), lines(floor.pollCount)
	polls := el.Seconds() / 2.0 * float64(n)
	perLoop := func(c0, c1 cpu, k int) (own, all float64) {
		d := c1.sub(c0)
		return pct(d.own, el) / float64(k), pct(d.own+d.children, el) / float64(k)
	}
	mOwn, mAll := perLoop(m0, m1, n)
	fOwn, fAll := perLoop(f0, f1, floorN)
	fmt.Printf("  tmux processes per poll per loop:   %.2f  (%d in %s for %d loops at one poll per 2 s; the poll loops ran %d)\n",
		float64(execs)/polls, execs, el.Round(time.Second), n, flExecs)
	if other, ok := e.otherForks(ms.pids); ok {
		fmt.Printf("  other processes started per poll:   %.2f  (counted with strace for %s)\n", other, forkWatch)
	}
	fmt.Printf("  CPU per loop, with its tmux calls:  %.3f%% of one core; poll loop %.3f%%; ratio %s  (target: at most 1.2x)\n",
		mAll, fAll, pctRatio(mAll, fAll))
	fmt.Printf("  CPU per loop, the process alone:    %.3f%%; poll loop %.3f%%; ratio %s\n", mOwn, fOwn, pctRatio(mOwn, fOwn))
	if n > *loops {
		fmt.Printf("  CPU of all %d monitors:             %.2f%% of one core (with their tmux calls)\n", n, mAll*float64(n))
	}
	rss, pss := memOf(ms.pids)
	sort.Ints(rss)
	sum, psum := 0, 0
	for i := range rss {
		sum, psum = sum+rss[i], psum+pss[i]
	}
	fmt.Printf("  monitor RSS:                        median %d KiB, max %d KiB (target: at most %d KiB)\n", rss[n/2], rss[n-1], memTarget)
	fmt.Printf("  memory of all %d monitors:          RSS %.1f MiB in sum, PSS %.1f MiB (shared pages counted once)\n", n, float64(sum)/1024, float64(psum)/1024)
}

// cpu is CPU time: a process's own (all its threads, from the
// scheduler's nanosecond counts) and its waited-for children's (clock
// ticks, counted when they are reaped).
type cpu struct{ own, children time.Duration }

func (c cpu) sub(o cpu) cpu { return cpu{c.own - o.own, c.children - o.children} }

// clockTick is the unit of /proc's process times (USER_HZ).
const clockTick = 10 * time.Millisecond

// cpuOf sums the CPU time of pids.
func cpuOf(pids []int) cpu {
	var c cpu
	for _, p := range pids {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				c.own += time.Duration(ns)
			}
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		cu, _ := strconv.Atoi(f[13])
		cs, _ := strconv.Atoi(f[14])
		c.children += time.Duration(cu+cs) * clockTick
	}
	return c
}

// pct is d as a percentage of one core over el.
func pct(d, el time.Duration) float64 { return float64(d) / float64(el) * 100 }

func pctRatio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// otherForks counts, with strace, the programs the monitors start other
// than tmux (through the shim, or directly) during forkWatch, per poll:
// every process a Go program starts execs a program.
func (e *env) otherForks(pids []int) (float64, bool) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		return 0, false
	}
	out := filepath.Join(e.dir, "strace.out")
	args := []string{"-f", "-qq", "-e", "trace=execve", "-o", out}
	for _, p := range pids {
		args = append(args, "-p", strconv.Itoa(p))
	}
	cmd := exec.Command(strace, args...)
	if cmd.Start() != nil {
		return 0, false
	}
	start := time.Now()
	clock.Real.Sleep(context.Background(), forkWatch)
	el := time.Since(start)
	_ = cmd.Process.Signal(syscall.SIGINT) // strace ends on it; one gone already is fine
	_ = cmd.Wait()                         // interrupted: its exit status says so
	polls := el.Seconds() / 2.0 * float64(len(pids))
	return float64(otherExecs(out, e.shim)) / polls, true
}

// otherExecs counts the programs in strace's log of execve calls other
// than the tmux shim and the tmux it becomes.
func otherExecs(path, shim string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		_, call, ok := strings.Cut(l, "execve(\"")
		if !ok {
			continue
		}
		prog, _, _ := strings.Cut(call, "\"")
		if prog != shim && filepath.Base(prog) != "tmux" {
			n++
		}
	}
	return n
}

// memOf returns each pid's resident memory and proportional share
// (shared pages divided among the processes that map them), in KiB.
func memOf(pids []int) (rss, pss []int) {
	for _, p := range pids {
		rss = append(rss, kbField(fmt.Sprintf("/proc/%d/status", p), "VmRSS:"))
		pss = append(pss, kbField(fmt.Sprintf("/proc/%d/smaps_rollup", p), "Pss:"))
	}
	return rss, pss
}

// kbField reads "Key: N kB" from a /proc file.
func kbField(path, key string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return 0
}
