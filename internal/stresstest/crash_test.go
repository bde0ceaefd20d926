package stresstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"
)

// crashVariant is a kind of spawn to crash.
type crashVariant struct {
	name  string
	flags []string // spawn flags before "--"
}

var crashVariants = []crashVariant{
	{"tmux", []string{"--tmux"}},
	{"process", nil},
	{"tmux+worktree", []string{"--tmux", "--worktree"}},
	{"process+worktree", []string{"--worktree"}},
}

func (w *world) spawnArgs(name string, v crashVariant) []string {
	args := append([]string{"spawn", "--name", name}, v.flags...)
	return append(append(args, "--"), w.agent()...)
}

// tally groups findings of many tries by kind, so a bug that every try
// hits is reported once, with how often and its first instance.
type tally struct {
	mu    sync.Mutex
	seen  map[string]int
	first map[string]string
}

var digits = regexp.MustCompile(`[0-9]+`)

func (ta *tally) note(label, msg string) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.seen == nil {
		ta.seen, ta.first = map[string]int{}, map[string]string{}
	}
	key := digits.ReplaceAllString(msg, "N")
	if len(key) > 160 {
		key = key[:160]
	}
	if ta.seen[key] == 0 {
		ta.first[key] = label + ": " + msg
	}
	ta.seen[key]++
}

func (ta *tally) report(t *testing.T, prefix string) {
	t.Helper()
	keys := make([]string, 0, len(ta.seen))
	for k := range ta.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s: %d time(s); first: %s", prefix, ta.seen[k], ta.first[k])
	}
}

// TestCrashSpawnRandom SIGKILLs swarm spawn (tmux, process, and both with
// --worktree) at random points, 8 tries each: a delay from 2 ms to 1.2
// times a normal spawn on this machine (at least 10 ms), so most tries
// land inside a spawn however fast the machine.
// Only swarm is killed: a tmux or git child it was waiting for runs on
// (git killed too can leave its own ref locks, which no tool but git
// should remove). After each crash, ls, status, kill, clean and a new spawn
// of the same name must work, nothing may be orphaned (world.check), and
// kill of the new worker must leave any older window of the same name,
// and a decoy window of that name, alone. The seed is in every failure.
func TestCrashSpawnRandom(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real tmux, git and processes")
	}
	sd := seed(t)
	t.Logf("seed %d (replay with SWARM_STRESS_SEED=%d)", sd, sd)
	for vi, v := range crashVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			crashRandom(t, v, rand.New(rand.NewPCG(sd, uint64(vi))), sd)
		})
	}
}

const crashTries = 8

func crashRandom(t *testing.T, v crashVariant, rng *rand.Rand, sd uint64) {
	began := time.Now()
	w := newWorld(t)
	if slices.Contains(v.flags, "--worktree") {
		w.initRepo()
	}
	// A worker nobody touches keeps the tmux server and session up, and
	// must be running at the end; the decoy is a window named like the
	// crashed worker that swarm did not make.
	w.must(append([]string{"spawn", "--name", "keeper", "--tmux", "--"}, w.agent()...)...)
	decoyID, decoyProc := w.decoy("c")

	// How long a spawn of this kind takes here, to spread the kill points
	// over all of it.
	t0 := time.Now()
	w.must(w.spawnArgs("c", v)...)
	normal := time.Since(t0)
	w.must("kill", "c")
	w.must("clean", "c")
	maxMs := max(10, int(normal.Milliseconds()*12/10))

	var ta tally
	// killed counts the tries whose SIGKILL ended a running spawn; in the
	// others the spawn had finished before its kill point.
	killed := 0
	cmdOK := func(label string, r result, codes []int, fails ...string) bool {
		if msg := badOutput(r); msg != "" {
			ta.note(label, msg+": "+r.String())
			return false
		}
		if !slices.Contains(codes, r.code) {
			ta.note(label, "unexpected exit: "+r.String())
			return false
		}
		if r.code != 0 && len(fails) > 0 && !slices.ContainsFunc(fails, func(f string) bool { return strings.Contains(r.stderr, f) }) {
			ta.note(label, "unexpected failure: "+r.String())
			return false
		}
		return true
	}
	for i := range crashTries {
		delay := time.Duration(2+rng.IntN(maxMs-1)) * time.Millisecond
		label := fmt.Sprintf("seed %d, %s try %d: SIGKILL after %v", sd, v.name, i, delay)

		cmd, _, _ := w.startWith(nil, w.spawnArgs("c", v)...)
		time.Sleep(delay) // the kill point itself, not a wait for a condition
		if ok, err := killSpawn(cmd); err != nil {
			t.Fatalf("%s: %v", label, err)
		} else if ok {
			killed++
		} else {
			label += " (the spawn had finished)"
		}

		// The first command after the crash rolls it back.
		found := w.check(checkOptions{allowTemps: true})
		var oldWindows []string
		for _, f := range found {
			ta.note(label, "after the crash: "+f.msg)
			if f.kind == orphanWindow {
				oldWindows = append(oldWindows, f.windowID)
			}
		}
		cmdOK(label, w.run("status", "c"), []int{0, 1, 2}, "not found")
		cmdOK(label, w.run("kill", "c"), []int{0, 1}, "not found")
		cmdOK(label, w.run("clean", "c"), []int{0, 1}, "not found")
		if cmdOK(label, w.run(w.spawnArgs("c", v)...), []int{0}) {
			cmdOK(label, w.run("kill", "c"), []int{0})
			// kill c goes by the new worker's window id: the crash's
			// leftover window of the same name, and the decoy, stay.
			panes, _ := w.panes()
			for _, id := range append(oldWindows, decoyID) {
				if !slices.ContainsFunc(panes, func(p pane) bool { return p.windowID == id }) {
					ta.note(label, fmt.Sprintf("kill c removed window %s, which was not the new c's", id))
				}
			}
			cmdOK(label, w.run("clean", "c"), []int{0})
		}
		after := w.check(checkOptions{allowTemps: true})
		for _, f := range after {
			if !slices.ContainsFunc(found, func(g finding) bool { return g.msg == f.msg }) {
				ta.note(label, "after kill, clean and a new spawn: "+f.msg)
			}
		}
		w.clearOrphans(append(found, after...))
	}
	if !stillRuns(decoyProc) {
		ta.note("end", "the decoy window's process was signalled")
	}
	if r := w.run("status", "keeper"); r.code != 0 {
		ta.note("end", "keeper is not running: "+r.String())
	}
	ta.report(t, fmt.Sprintf("seed %d, %s", sd, v.name))
	t.Logf("%s: %d tries, %d killed a running spawn (a normal spawn took %v), kill points up to %dms, took %v",
		v.name, crashTries, killed, normal.Round(time.Millisecond), maxMs, time.Since(began))
	if killed == 0 {
		t.Errorf("seed %d, %s: none of the %d tries killed a running spawn: every spawn had finished at its kill point", sd, v.name, crashTries)
	}
}

// TestCrashSpawnAfterEachStep SIGKILLs swarm spawn at the exact moment
// each thing it makes exists but is not yet written into its "starting"
// record: the tmux window, the process, the worktree. It holds the state
// lock once the record is reserved, so the spawn makes the thing and then
// waits to record it; the test sees the thing appear, SIGKILLs swarm,
// and lets the lock go. The next command must roll everything back: no
// window, process or worktree may be left that no record accounts for.
func TestCrashSpawnAfterEachStep(t *testing.T) {
	t.Parallel()
	steps := []struct {
		name    string
		variant crashVariant
		made    func(w *world, swarmPID int) bool
	}{
		{"tmux window made", crashVariants[0], func(w *world, _ int) bool {
			panes, _ := w.panes()
			return slices.ContainsFunc(panes, func(p pane) bool { return p.windowName == "c" && !w.decoys[p.windowID] })
		}},
		{"process started", crashVariants[1], func(w *world, swarmPID int) bool {
			// The agent's parent is its supervisor, which the spawn started.
			all := processes()
			return slices.ContainsFunc(w.markedAgents(all), func(p procInfo) bool { return all[p.ppid].ppid == swarmPID })
		}},
		{"worktree made", crashVariants[3], func(w *world, swarmPID int) bool {
			// Made means git is done: a git killed half way (its stderr
			// pipe breaks when swarm dies) removes its own half-made
			// worktree.
			for _, p := range processes() {
				if p.ppid == swarmPID {
					return false
				}
			}
			return slices.Contains(w.worktrees(), filepath.Join(w.repo+"-worktrees", "c"))
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.initRepo()
			w.must(append([]string{"spawn", "--name", "keeper", "--tmux", "--"}, w.agent()...)...)
			w.decoy("c")
			crashAt(t, w, st.variant, st.made)

			r := w.run("ls")
			if msg := badOutput(r); msg != "" || r.code != 0 {
				t.Fatalf("ls after the crash: %s %s", msg, r)
			}
			found := w.check(checkOptions{allowTemps: true})
			for _, f := range found {
				t.Errorf("SIGKILL once the %s: %s", st.name, f)
			}
			// Everything works afterwards, whatever was left, and kill
			// goes by the new worker's own window.
			w.must(w.spawnArgs("c", st.variant)...)
			w.must("kill", "c")
			panes, _ := w.panes()
			for _, f := range found {
				if f.kind == orphanWindow && !slices.ContainsFunc(panes, func(p pane) bool { return p.windowID == f.windowID }) {
					t.Errorf("kill c removed window %s, which was not the new c's", f.windowID)
				}
			}
			w.must("clean", "c")
			after := w.check(checkOptions{allowTemps: true})
			for _, f := range after {
				if !slices.ContainsFunc(found, func(g finding) bool { return g.msg == f.msg }) {
					t.Errorf("after a new spawn, kill and clean: %s", f)
				}
			}
			w.clearOrphans(append(found, after...))
		})
	}
}

// crashAt starts a spawn of c, holds the state lock from just after the
// spawn reserved its record (and, with --worktree, recorded the branch it
// is about to make) until made reports the next thing exists, SIGKILLs
// the spawn there and releases the lock.
func crashAt(t *testing.T, w *world, v crashVariant, made func(w *world, pid int) bool) {
	t.Helper()
	lock := flock.New(filepath.Join(w.e.Home, "state.lock"))
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			t.Fatal("could not hold the spawn between reserving its record and recording what it made")
		}
		cmd, _, _ := w.startWith(nil, w.spawnArgs("c", v)...)
		deadline := time.Now().Add(20 * time.Second)
		// A spawn that makes a branch records that (under the repository
		// lock) before git runs: the hold starts after that write.
		reserved := func(r map[string]any) bool {
			meta, _ := r["metadata"].(map[string]any)
			return r["name"] == "c" && (!slices.Contains(v.flags, "--worktree") || meta["swarm_branch_created"] != nil)
		}
		for !slices.ContainsFunc(w.e.Workers(), reserved) {
			if time.Now().After(deadline) {
				t.Fatal("spawn never reserved its record")
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := lock.Lock(); err != nil {
			t.Fatal(err)
		}
		// Only a record that has nothing recorded yet is the moment sought.
		var rec map[string]any
		for _, r := range w.e.Workers() {
			if r["name"] == "c" {
				rec = r
			}
		}
		meta, _ := rec["metadata"].(map[string]any)
		early := rec["status"] == "starting" && meta["tmux_window_id"] == nil && rec["pid"] == nil && meta["swarm_worktree_created"] == nil
		if !early {
			lock.Unlock()
			cmd.Wait()
			w.run("kill", "c")
			w.run("clean", "c")
			continue
		}
		deadline = time.Now().Add(20 * time.Second)
		for !made(w, cmd.Process.Pid) {
			if time.Now().After(deadline) {
				lock.Unlock()
				t.Fatal("the spawn never made the thing")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// The spawn waits for the lock: it cannot have finished.
		ok, err := killSpawn(cmd)
		lock.Unlock()
		if err != nil || !ok {
			t.Fatalf("SIGKILL of the held spawn: killed %v, %v", ok, err)
		}
		return
	}
}

// TestCrashRalphMonitor SIGKILLs a ralph loop's monitor mid-iteration (the
// prompt delivered), between iterations (in the restart delay), and at
// the start of an iteration, resuming the loop after each. At no time may
// more than one monitor drive the loop; it must run to its cap with
// exactly one START line per iteration, and leave nothing behind.
func TestCrashRalphMonitor(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real tmux, git and processes")
	}
	w := newWorld(t)
	prompt := w.e.WriteFile("../PROMPT.md", "work")
	w.must("spawn", "--name", "loop", "--ralph", "--prompt-file", prompt, "--max-iterations", "4",
		"--inactivity-timeout", "30", "--restart-delay", "1s", "--",
		w.e.Agent, "--script", "print busy;sleep 800ms;exit 0", w.marker)

	// Count monitors all along.
	var mu sync.Mutex
	most := 0
	var seen []procInfo
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ms := w.monitors("loop")
			mu.Lock()
			if len(ms) > most {
				most, seen = len(ms), ms
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()

	st := func() map[string]any { return w.e.RalphState("loop") }
	num := func(k string) int { return w.ralphNum("loop", k) }
	flag := func(k string) bool { return w.ralphFlag("loop", k) }
	crash := func(what string, when func() bool) {
		t.Helper()
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("state: %v\nlog:\n%s", st(), w.e.RalphLog("loop"))
			}
		})
		w.e.Eventually(what, 30*time.Second, when)
		mons := w.monitors("loop")
		if len(mons) != 1 || mons[0].pid != num("monitor_pid") {
			t.Fatalf("%s: monitors %v, state says pid %d", what, mons, num("monitor_pid"))
		}
		if err := signalConfirmed(mons[0], unix.SIGKILL); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		w.e.Eventually("monitor gone", 10*time.Second, func() bool { return len(w.monitors("loop")) == 0 })
		r := w.must("ralph", "resume", "loop")
		if n := len(w.monitors("loop")); n != 1 {
			mlog, _ := os.ReadFile(filepath.Join(w.e.Home, "ralph", "loop", "monitor.log"))
			t.Fatalf("after resume (%s): %d monitors; resume said %s\nmonitor.log:\n%s", what, n, r, mlog)
		}
	}
	crash("iteration 1 running with its prompt delivered", func() bool {
		return num("current_iteration") == 1 && flag("iteration_active") && flag("prompt_delivered")
	})
	crash("between iterations 2 and 3", func() bool {
		return num("current_iteration") == 2 && !flag("iteration_active") && st()["status"] == "running"
	})
	crash("iteration 3 started", func() bool {
		return num("current_iteration") == 3 && flag("iteration_active")
	})
	w.waitLoopEnd("loop", 60*time.Second)
	close(stop)
	<-done

	log := w.e.RalphLog("loop")
	if st()["exit_reason"] != "max_iterations" || num("current_iteration") != 4 {
		t.Errorf("loop ended %v at iteration %d\n%s", st()["exit_reason"], num("current_iteration"), log)
	}
	for i := 1; i <= 4; i++ {
		if n := strings.Count(log, fmt.Sprintf("[START] iteration %d/", i)); n != 1 {
			t.Errorf("iteration %d has %d START lines\n%s", i, n, log)
		}
	}
	if strings.Count(log, "[START]") != 4 {
		t.Errorf("START lines:\n%s", log)
	}
	if most > 1 {
		t.Errorf("%d monitors ran the loop at once: %+v", most, seen)
	}
	w.e.Eventually("monitor exit", 10*time.Second, func() bool { return len(w.monitors("loop")) == 0 })
	// A monitor SIGKILLed while writing the loop state leaves its temp
	// file, swept by the next write a minute later (state.sweepStaleTemps).
	for _, f := range w.check(checkOptions{allowTemps: true}) {
		t.Error(f)
	}
}
