package heartbeat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/testenv"
)

// Integration tests: real tmux, a real detached heartbeat process. The
// process is this test binary re-executed into TestHelperProcess, which
// calls Run as the hidden "swarm heartbeat run W" will.

const helperEnv = "HEARTBEAT_TEST_HELPER"

// TestHelperProcess is not a test: it is the heartbeat process.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	name := os.Args[len(os.Args)-1]
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := Run(ctx, os.Getenv("SWARM_HOME"), name)
	if os.Getenv(lingerEnv) == "1" {
		// A process stuck in its exit after letting go of its lock. The
		// signal handler above still catches SIGTERM: only SIGKILL ends
		// it (Start's, or the env's cleanup's if a test fails first).
		clock.Real.Sleep(context.Background(), time.Hour)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "swarm: error: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// processMarker is set to "1" in a heartbeat process's environment, by
// cmd/swarm (its heartbeat command) and by these tests' Command alike:
// the cleanup finds the processes by it.
const processMarker = "SWARM_HEARTBEAT"

// lingerEnv, set to "1", keeps the heartbeat process from exiting once Run
// has returned (and released the lock).
const lingerEnv = "HEARTBEAT_TEST_LINGER"

// Test timings.
const (
	// testPoll is the heartbeat process's poll and worker check in these
	// tests (SWARM_POLL_INTERVAL), so that stops and ends show quickly.
	testPoll = "50ms"
	// waitLong bounds every wait for a condition: generous, because two
	// cores are shared with other test runs.
	waitLong = 30 * time.Second
)

type hbEnv struct {
	*testenv.Env
	store *Store
}

func newHBEnv(t *testing.T) *hbEnv {
	t.Parallel()
	e := testenv.New(t)
	h := &hbEnv{Env: e, store: NewStore(e.Home, nil)}
	t.Cleanup(h.cleanup)
	return h
}

// cleanup stops every heartbeat of the env, then anything left of its
// processes (pid confirmed by start time).
func (h *hbEnv) cleanup() {
	states, _ := h.store.List()
	for _, st := range states {
		StopFor(h.Home, st.WorkerName)
	}
	for _, pid := range append(h.procs(), h.procsOf(h.Swarm)...) {
		if start, ok := proc.StartTime(pid); ok && proc.Same(pid, start) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (h *hbEnv) opts(force bool) StartOptions {
	return StartOptions{
		Force: force,
		Command: func(name string) (argv, env []string) {
			return []string{os.Args[0], "-test.run=^TestHelperProcess$", "--", name},
				[]string{helperEnv + "=1", PollEnv + "=" + testPoll, processMarker + "=1"}
		},
	}
}

func (h *hbEnv) start(name, interval, expire string, force bool) (*State, error) {
	c, _, err := Parse(Flags{Interval: interval, Expire: expire, Message: DefaultMessage}, false)
	if err != nil {
		h.T.Fatal(err)
	}
	return Start(h.Home, name, c, h.opts(force))
}

func (h *hbEnv) mustStart(name, interval, expire string) *State {
	h.T.Helper()
	st, err := h.start(name, interval, expire, false)
	if err != nil {
		log, _ := os.ReadFile(h.store.LogPath(name))
		h.T.Fatalf("Start: %v\nlog:\n%s", err, log)
	}
	return st
}

func (h *hbEnv) state(name string) *State {
	h.T.Helper()
	st, err := h.store.Load(name)
	if err != nil || st == nil {
		h.T.Fatalf("heartbeat state of %s: %v %v", name, st, err)
	}
	return st
}

func (h *hbEnv) eventually(what string, cond func() bool) {
	h.T.Helper()
	h.Eventually(what, waitLong, cond)
}

// procs lists the live heartbeat processes of this env, found by their
// program and environment (marker and state root), so a second process
// cannot hide. (Their tmux clients inherit the environment too.)
func (h *hbEnv) procs() []int {
	self, err := os.Executable()
	if err != nil {
		h.T.Fatal(err)
	}
	return h.procsOf(self)
}

// procsOf lists the live heartbeat processes of this env running exe.
func (h *hbEnv) procsOf(self string) []int {
	entries, _ := os.ReadDir("/proc")
	var out, parents []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "environ"))
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", ent.Name(), "exe")); err != nil || exe != self {
			continue
		}
		vars := bytes.Split(data, []byte{0})
		var marker, home bool
		for _, v := range vars {
			marker = marker || string(v) == processMarker+"=1"
			home = home || string(v) == "SWARM_HOME="+h.Home
		}
		if !marker || !home || !proc.Alive(pid) {
			continue
		}
		// The parent is read now, not after the scan: a fork child (see
		// below) runs tmux for milliseconds, and once it is reaped its
		// parent can no longer be read, which made it look like a second
		// heartbeat process. A process gone already is no process.
		if ppid := parentPID(pid); ppid > 0 {
			out = append(out, pid)
			parents = append(parents, ppid)
		}
	}
	// A heartbeat process starting tmux is, for an instant between fork
	// and exec, two processes with its program and environment: leave out
	// children of the others.
	var procs []int
	for i, pid := range out {
		if !slices.Contains(out, parents[i]) {
			procs = append(procs, pid)
		}
	}
	return procs
}

func parentPID(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func (h *hbEnv) log(name string) string {
	data, _ := os.ReadFile(h.store.LogPath(name))
	return string(data)
}

// spawnAgent starts a tmux worker playing an agent that records each
// message and answers it, so the message never stays on its last line.
func (h *hbEnv) spawnAgent(name string) string {
	rec := filepath.Join(h.Dir, "..", name+".record")
	h.MustRun("spawn", "--name", name, "--tmux", "--", h.Agent, "--record", rec,
		"--script", strings.Repeat("print ack;wait;", 100)+"quiet")
	h.eventually("the agent's prompt", func() bool { return strings.Contains(h.Screen(name), "Fake Agent") })
	return rec
}

// never fails the test if cond holds at any time during d. Absence can only
// be seen over a period, so this is the one wait of a set length; d is a
// multiple of the interval under test.
func never(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if clock.Wait(context.Background(), clock.Real, 20*time.Millisecond, d, cond) {
		t.Fatalf("%s", what)
	}
}

func TestBeatsArriveAtInterval(t *testing.T) {
	h := newHBEnv(t)
	rec := h.spawnAgent("w")
	const interval = 400 * time.Millisecond
	started := time.Now()
	st := h.mustStart("w", "400ms", "")
	if st.Status != StatusActive || st.MonitorPID == nil || daemon.Holder(h.store.LockPath("w")) != *st.MonitorPID {
		t.Fatalf("after Start: %+v, holder %d", st, daemon.Holder(h.store.LockPath("w")))
	}
	h.eventually("3 beats", func() bool { return len(testenv.Records(t, rec)) >= 3 })
	recs := testenv.Records(t, rec)
	prev := started
	for i, r := range recs[:3] {
		at, _ := time.Parse(time.RFC3339Nano, r.Time)
		if r.Message != "continue" {
			t.Errorf("message %d = %q", i, r.Message)
		}
		// The agent's record time trails the beat by its latency, which
		// varies under load; beating every poll (50ms) would still fail.
		if gap := at.Sub(prev); gap < interval/2 {
			t.Errorf("beat %d came %v after the previous, interval %v", i+1, gap, interval)
		}
		prev = at
	}
	h.eventually("beat_count to match", func() bool { return h.state("w").BeatCount >= 3 })
	if n := len(h.procs()); n != 1 {
		t.Fatalf("%d heartbeat processes, want 1", n)
	}
}

func TestSkipsWhileMessageStillShown(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.mustStart("w", "200ms", "")
	// cat echoes the message back: it stays on the last line, so every
	// later beat is skipped.
	h.eventually("two skipped beats", func() bool { return h.state("w").SkipCount >= 2 })
	if st := h.state("w"); st.BeatCount != 1 {
		t.Fatalf("beat_count %d while the message was on the last line, want 1", st.BeatCount)
	}
	if strings.Count(h.Screen("w"), "continue") != 2 {
		t.Fatalf("screen:\n%s", h.Screen("w"))
	}
	if !strings.Contains(h.log("w"), "beat skipped: the last line still shows the previous message") {
		t.Errorf("log:\n%s", h.log("w"))
	}
	if _, err := h.Tmux("send-keys", "-t", h.WindowID("w"), "-l", "moved on"); err != nil {
		t.Fatal(err)
	}
	h.Tmux("send-keys", "-t", h.WindowID("w"), "Enter")
	h.eventually("a beat once the line changed", func() bool { return h.state("w").BeatCount == 2 })
}

// A heartbeat never types into a dialog: its message and Enter would
// answer it (Enter takes a menu's default choice).
func TestSkipsWhileAgentShowsADialog(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "sh", "-c",
		`printf 'Do you want to proceed?\n \342\235\257 1. Yes\n   2. No\n'; read answer; echo "answered: $answer"; sleep 600`)
	h.mustStart("w", "200ms", "")
	h.eventually("two skipped beats", func() bool { return h.state("w").SkipCount >= 2 })
	if st := h.state("w"); st.BeatCount != 0 || strings.Contains(h.Screen("w"), "answered") {
		t.Fatalf("beat_count %d: the heartbeat typed into the dialog:\n%s", st.BeatCount, h.Screen("w"))
	}
	if !strings.Contains(h.log("w"), "beat skipped: the agent shows a menu awaiting a choice") {
		t.Errorf("log:\n%s", h.log("w"))
	}
}

func TestExpiryEndsProcess(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.mustStart("w", "200ms", "1s")
	h.eventually("expiry", func() bool { return h.state("w").Status == StatusExpired })
	if !daemon.WaitExit(h.store.LockPath("w"), waitLong) {
		t.Fatal("lock still held after expiry")
	}
	h.eventually("the process to exit", func() bool { return len(h.procs()) == 0 })
	if st := h.state("w"); st.MonitorPID != nil || st.BeatCount < 1 {
		t.Errorf("state after expiry: %+v", st)
	}
}

func TestStopEndsProcessAndReleasesLock(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.mustStart("w", "1h", "")
	if len(h.procs()) != 1 || !daemon.Alive(h.store.LockPath("w")) {
		t.Fatal("no live process after Start")
	}
	found, err := Stop(h.Home, "w")
	if !found || err != nil {
		t.Fatalf("Stop = %v %v", found, err)
	}
	if daemon.Alive(h.store.LockPath("w")) {
		t.Fatal("Stop returned with the lock held")
	}
	if n := len(h.procs()); n != 0 {
		t.Fatalf("Stop returned with %d process(es) left", n)
	}
	if st := h.state("w"); st.Status != StatusStopped || st.MonitorPID != nil {
		t.Fatalf("state %+v", st)
	}
	if found, err := Stop(h.Home, "w"); !found || err != nil {
		t.Fatalf("second Stop = %v %v (swarm.py prints stopped again)", found, err)
	}
	if stopped, err := StopFor(h.Home, "w"); stopped || err != nil {
		t.Fatalf("StopFor of a stopped heartbeat = %v %v", stopped, err)
	}
	if found, err := Stop(h.Home, "nobody"); found || err != nil {
		t.Fatalf("Stop of nothing = %v %v", found, err)
	}
}

func TestConcurrentStartsLeaveOneProcess(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	for _, force := range []bool{false, true} {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = h.start("w", "1h", "", force)
			}()
		}
		wg.Wait()
		var he *Error
		switch {
		case force && (errs[0] != nil || errs[1] != nil):
			t.Fatalf("forced starts: %v / %v", errs[0], errs[1])
		case !force && (errs[0] == nil) == (errs[1] == nil):
			t.Fatalf("unforced starts: %v / %v; want exactly one refused", errs[0], errs[1])
		case !force && !errors.As(errors.Join(errs...), &he):
			t.Fatalf("refusal is not a heartbeat error: %v", errs)
		case !force && he.Kind != KindAlreadyActive || !force && he.Msg != "heartbeat already active for 'w' (use --force to replace)":
			t.Fatalf("refusal %q", he.Msg)
		}
		pids := h.procs()
		holder := daemon.Holder(h.store.LockPath("w"))
		if len(pids) != 1 || pids[0] != holder {
			t.Fatalf("force=%v: processes %v, lock holder %d", force, pids, holder)
		}
		if st := h.state("w"); st.MonitorPID == nil || *st.MonitorPID != holder {
			h.eventually("monitor_pid of the holder", func() bool {
				st := h.state("w")
				return st.MonitorPID != nil && *st.MonitorPID == holder
			})
		}
	}
}

// A replaced process that lets go of its lock but does not exit is killed
// before Start returns: the new process never runs beside it.
func TestForceKillsProcessStuckInExit(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	c, _, err := Parse(Flags{Interval: "1h", Message: DefaultMessage}, false)
	if err != nil {
		t.Fatal(err)
	}
	o := h.opts(false)
	helper := o.Command
	o.Command = func(name string) ([]string, []string) {
		argv, env := helper(name)
		return argv, append(env, lingerEnv+"=1")
	}
	if _, err := Start(h.Home, "w", c, o); err != nil {
		t.Fatal(err)
	}
	old := h.procs()
	// The process never exits: no need to give it the full exitTimeout.
	o = h.opts(true)
	o.ExitTimeout = 500 * time.Millisecond
	st, err := Start(h.Home, "w", c, o)
	if err != nil {
		t.Fatalf("forced Start: %v", err)
	}
	pids := h.procs()
	if len(old) != 1 || len(pids) != 1 || pids[0] != *st.MonitorPID || pids[0] == old[0] {
		t.Fatalf("processes %v before, %v after the forced Start of %d", old, pids, *st.MonitorPID)
	}
	if holder := daemon.Holder(h.store.LockPath("w")); holder != pids[0] {
		t.Fatalf("lock holder %d, want %d", holder, pids[0])
	}
}

func TestPauseResume(t *testing.T) {
	h := newHBEnv(t)
	rec := h.spawnAgent("w")
	h.mustStart("w", "300ms", "")
	pid := daemon.Holder(h.store.LockPath("w"))
	h.eventually("a first beat", func() bool { return len(testenv.Records(t, rec)) >= 1 })
	if err := Pause(h.Home, "w"); err != nil {
		t.Fatal(err)
	}
	// A beat already under way when the pause lands may still arrive;
	// after one poll the process has seen the pause.
	h.eventually("the process to see the pause", func() bool { return strings.Contains(h.log("w"), "paused") })
	n := len(testenv.Records(t, rec))
	never(t, "a beat while paused", 4*300*time.Millisecond, func() bool { return len(testenv.Records(t, rec)) > n })
	resumed := time.Now()
	if err := Resume(h.Home, "w", h.opts(false)); err != nil {
		t.Fatal(err)
	}
	h.eventually("a beat after resume", func() bool { return len(testenv.Records(t, rec)) > n })
	at, _ := time.Parse(time.RFC3339Nano, testenv.Records(t, rec)[n].Time)
	if gap := at.Sub(resumed); gap < 200*time.Millisecond {
		t.Errorf("first beat %v after resume; the next beat is an interval away", gap)
	}
	if got := daemon.Holder(h.store.LockPath("w")); got != pid || len(h.procs()) != 1 {
		t.Fatalf("resume replaced a live process: holder %d, was %d, procs %v", got, pid, h.procs())
	}
}

// A process that died (SIGKILL, a reboot) leaves an active heartbeat
// without a process; resume starts one.
func TestResumeRecoversDeadProcess(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.mustStart("w", "1h", "")
	recoveries := []func() error{
		func() error { return Resume(h.Home, "w", h.opts(false)) },
		func() error {
			n, err := Recover(h.Home, h.opts(false))
			if n != 1 && err == nil {
				err = fmt.Errorf("Recover started %d", n)
			}
			return err
		},
	}
	for _, recover := range recoveries {
		pid := h.killProcess("w")
		if err := recover(); err != nil {
			t.Fatalf("recovery of a dead process: %v", err)
		}
		if holder := daemon.Holder(h.store.LockPath("w")); holder == 0 || holder == pid || len(h.procs()) != 1 {
			t.Fatalf("after recovery: holder %d (old %d), procs %v", holder, pid, h.procs())
		}
	}
	if n, err := Recover(h.Home, h.opts(false)); n != 0 || err != nil {
		t.Fatalf("Recover with a live process = %d %v", n, err)
	}
	err := Resume(h.Home, "w", h.opts(false))
	if err == nil || err.Error() != "Heartbeat for w is not paused (status: active)" {
		t.Fatalf("Resume of a live heartbeat = %v", err)
	}
}

// killProcess SIGKILLs the worker's heartbeat process (pid confirmed by
// the lock and its recorded start time) and waits for its lock to go.
func (h *hbEnv) killProcess(name string) int {
	h.T.Helper()
	st := h.state(name)
	started, ok := st.MonitorStarted.Time()
	if st.MonitorPID == nil || !ok || daemon.Holder(h.store.LockPath(name)) != *st.MonitorPID {
		h.T.Fatalf("cannot confirm the heartbeat process: %+v", st)
	}
	pid := *st.MonitorPID
	if proc.Same(pid, started) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if !daemon.WaitExit(h.store.LockPath(name), waitLong) {
		h.T.Fatal("lock held after SIGKILL")
	}
	return pid
}

func TestWorkerGoneEndsHeartbeat(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "w", "--tmux", "--", "cat")
	h.mustStart("w", "1h", "")
	// Behind swarm's back (swarm kill ends the heartbeat itself).
	if _, err := h.Tmux("kill-window", "-t", h.WindowID("w")); err != nil {
		t.Fatal(err)
	}
	h.eventually("the heartbeat to stop by itself", func() bool { return h.state("w").Status == StatusStopped })
	if !daemon.WaitExit(h.store.LockPath("w"), waitLong) {
		t.Fatal("lock still held")
	}
	if !strings.Contains(h.log("w"), "the worker's window is gone; heartbeat stopped") {
		t.Errorf("log:\n%s", h.log("w"))
	}
}

// A ralph loop respawns the agent in the same window every iteration; the
// heartbeat lives on across iterations, and ends with the loop.
func TestFollowsRalphWorker(t *testing.T) {
	h := newHBEnv(t)
	rec := filepath.Join(h.Dir, "..", "r.record")
	count := filepath.Join(h.Dir, "..", "r.count")
	h.WriteFile("PROMPT.md", "work")
	h.MustRun("spawn", "--name", "r", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "3",
		"--restart-delay", "100ms", "--", h.Agent, "--record", rec, "--counter", count, "--script", "wait;wait;exit 0")
	st := h.mustStart("r", "300ms", "")
	pid := *st.MonitorPID
	h.eventually("a beat in iteration 2", func() bool {
		for _, r := range testenv.Records(t, rec) {
			if r.Iteration >= 2 && r.Message == "continue" {
				return true
			}
		}
		return false
	})
	if got := daemon.Holder(h.store.LockPath("r")); got != pid || h.state("r").Status != StatusActive {
		t.Fatalf("heartbeat did not survive the iteration restart: holder %d, was %d, state %+v", got, pid, h.state("r"))
	}
	h.eventually("the loop to end", func() bool {
		s, _ := h.RalphState("r")["status"].(string)
		return s != "" && s != "running" && s != "paused"
	})
	h.eventually("the heartbeat to end with the loop", func() bool { return h.state("r").Status == StatusStopped })
	if !daemon.WaitExit(h.store.LockPath("r"), waitLong) {
		t.Fatal("lock still held after the loop ended")
	}
}

func TestStartRefusals(t *testing.T) {
	h := newHBEnv(t)
	h.MustRun("spawn", "--name", "bg", "--", "sleep", "100")
	cases := map[string]struct {
		kind Kind
		msg  string
	}{
		"nope": {KindWorkerMissing, "worker 'nope' not found"},
		"bg":   {KindNotTmux, "heartbeat requires tmux worker"},
	}
	for name, want := range cases {
		_, err := h.start(name, "1h", "", false)
		var he *Error
		if !errors.As(err, &he) || he.Kind != want.kind || he.Msg != want.msg || he.Bare() {
			t.Errorf("Start(%s) = %v, want %q", name, err, want.msg)
		}
	}
	if _, err := h.start("../x", "1h", "", false); err == nil {
		t.Error("an invalid name was accepted")
	}
	if st, _ := h.store.Load("bg"); st != nil || len(h.procs()) != 0 {
		t.Error("a refused start left something behind")
	}
}
