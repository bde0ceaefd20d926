package stresstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stressOp is one command of the stress run and what it may answer.
type stressOp struct {
	args []string
	// codes are the exit codes it may end with; on failure, its
	// "swarm: error:" line must match one of fails (any, when empty).
	codes []int
	fails []string
	res   result
}

func (o *stressOp) name() string {
	if i := slices.Index(o.args, "--name"); i >= 0 {
		return o.args[i+1]
	}
	if len(o.args) > 1 && !strings.HasPrefix(o.args[1], "-") {
		return o.args[1]
	}
	return ""
}

func (o *stressOp) is(cmd string) bool { return o.args[0] == cmd }

// TestStressConcurrentOperations runs 50 swarm commands at once against
// one state root and one tmux server: tmux and process spawns (some with
// --worktree), kills and cleans of workers being spawned, duplicate
// spawns, pause and resume of two running ralph loops, kill --all and
// clean --all, ls and status. Then, and again after everything is killed
// and cleaned, swarm's records, tmux, the process table, git and the
// state directory must agree exactly (world.check), every command must
// have ended with a documented code and said why on failure, and no
// worker may be lost, duplicated or revived.
func TestStressConcurrentOperations(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress run: seconds of real tmux, git and processes")
	}
	began := time.Now()
	sd := seed(t)
	t.Logf("seed %d (replay with SWARM_STRESS_SEED=%d)", sd, sd)
	rng := rand.New(rand.NewPCG(sd, 1))
	w := newWorld(t)
	w.initRepo()

	// Two loops whose agents finish an iteration every few hundred ms, so
	// pause, resume and kill --all meet them in every phase.
	prompt := w.e.WriteFile("../PROMPT.md", "stress")
	for _, n := range []string{"r1", "r2"} {
		w.must("spawn", "--name", n, "--ralph", "--prompt-file", prompt, "--max-iterations", "1000",
			"--inactivity-timeout", "60", "--restart-delay", "100ms", "--",
			w.e.Agent, "--script", "print busy;sleep 300ms;exit 0", w.marker)
	}

	spawnFails := []string{"already exists"}
	var ops []*stressOp
	add := func(codes []int, fails []string, args ...string) {
		ops = append(ops, &stressOp{args: args, codes: codes, fails: fails})
	}
	// t10 and p08 are spawned twice at once (the duplicates below): one
	// of each pair wins, the other is told the worker exists.
	codes := func(name string) []int {
		if name == "t10" || name == "p08" {
			return []int{0, 1}
		}
		return []int{0}
	}
	for i := range 16 {
		args := []string{"spawn", "--name", fmt.Sprintf("t%02d", i), "--tmux"}
		if i%4 == 0 {
			args = append(args, "--worktree")
		}
		add(codes(args[2]), spawnFails, append(append(args, "--"), w.agent()...)...)
	}
	for i := range 10 {
		args := []string{"spawn", "--name", fmt.Sprintf("p%02d", i)}
		if i%5 == 0 {
			args = append(args, "--worktree")
		}
		add(codes(args[2]), spawnFails, append(append(args, "--"), w.agent()...)...)
	}
	// Duplicates of workers nobody kills or cleans by name.
	add([]int{0, 1}, spawnFails, append([]string{"spawn", "--name", "t10", "--tmux", "--"}, w.agent()...)...)
	add([]int{0, 1}, spawnFails, append([]string{"spawn", "--name", "p08", "--"}, w.agent()...)...)
	notFound := []string{"not found"}
	for _, n := range []string{"t01", "t05", "t09", "t13", "p01", "p03", "p05", "p07"} {
		add([]int{0, 1}, notFound, "kill", n)
	}
	for _, n := range []string{"t01", "t05", "p01", "t02", "p02", "t03"} {
		add([]int{0, 1}, []string{"not found", "cannot clean running worker"}, "clean", n)
	}
	// clean --all may have removed a loop kill --all ended before its
	// pause or resume looks it up: "not found" (seed 16459433197775796135
	// did so in 6 of 8 runs, on code before and after issue 21's changes).
	loopFails := []string{"has ended", "not found"}
	for _, n := range []string{"r1", "r2"} {
		add([]int{0, 1}, loopFails, "ralph", "pause", n)
		add([]int{0, 1}, loopFails, "ralph", "resume", n)
	}
	add([]int{0}, nil, "kill", "--all")
	add([]int{0}, nil, "clean", "--all")
	add([]int{0}, nil, "ls", "--format", "json")
	add([]int{0, 1, 2}, notFound, "status", "t00")
	if len(ops) != 50 {
		t.Fatalf("%d operations, want 50", len(ops))
	}

	// All at once, each after its own small random delay (from the seed)
	// so that different seeds interleave differently.
	delays := make([]time.Duration, len(ops))
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(300)) * time.Millisecond
	}
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			time.Sleep(delays[i])
			op.res = w.run(op.args...)
		}()
	}
	close(gate)
	wg.Wait()
	t.Logf("50 operations took %v", time.Since(began))
	for _, op := range ops {
		if d := op.res.end.Sub(op.res.start); d > 5*time.Second {
			t.Logf("slow (%v): %s", d.Round(time.Millisecond), op.res)
		}
	}

	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d: "+format, append([]any{sd}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTimeline(t, began, ops)
			for _, n := range []string{"r1", "r2"} {
				for _, f := range []string{"iterations.log", "monitor.log"} {
					data, _ := os.ReadFile(filepath.Join(w.e.Home, "ralph", n, f))
					t.Logf("%s of %s:\n%s", f, n, data)
				}
			}
		}
	})
	for _, op := range ops {
		r := op.res
		if msg := badOutput(r); msg != "" {
			fail("%s: %s", msg, r)
			continue
		}
		if !slices.Contains(op.codes, r.code) {
			fail("undocumented exit code: %s", r)
			continue
		}
		if strings.Contains(r.stderr, "interrupted spawn") {
			// Nothing was interrupted here: every spawn ran to its end.
			fail("a spawn that was not interrupted was taken for a crashed one: %s", r)
		}
		// A status answer (exit 1, stopped or starting, no error) is no
		// failure; other non-zero exits must be one of the op's.
		if r.code != 0 && r.stderr != "" && len(op.fails) > 0 && !slices.ContainsFunc(op.fails, func(f string) bool { return strings.Contains(r.stderr, f) }) {
			fail("unexpected failure: %s", r)
		}
	}

	// Quiesce the loops (resume may have restarted one after kill --all):
	// once kill returns, its monitor has exited. clean --all may have
	// removed a loop's worker, and then no monitor may run for it either.
	for _, n := range []string{"r1", "r2"} {
		r := w.run("kill", n)
		if r.code != 0 && !strings.Contains(r.stderr, "not found") {
			fail("%s", r)
		}
		if m := w.monitors(n); len(m) != 0 {
			fail("loop %s: %d monitor(s) alive after %q", n, len(m), strings.Join(r.args, " "))
		}
	}
	for _, p := range w.check(checkOptions{}) {
		fail("after the run: %s", p)
	}

	// No worker lost, duplicated or revived.
	recs, r, err := w.ls()
	if err != nil {
		t.Fatalf("%v: %s", err, r)
	}
	byName := map[string]record{}
	for _, rec := range recs {
		byName[rec.Name] = rec
	}
	spawned := map[string]int{}
	cleaned := map[string]bool{}
	for _, op := range ops {
		r := op.res
		switch {
		case op.is("spawn") && r.code == 0:
			spawned[op.name()]++
		case op.is("clean") && r.code == 0:
			for _, line := range strings.Split(r.stdout, "\n") {
				if n, ok := strings.CutPrefix(line, "cleaned "); ok {
					cleaned[n] = true
				}
			}
		}
	}
	for _, n := range []string{"t10", "p08"} {
		if spawned[n] == 0 {
			fail("neither spawn of %s succeeded", n)
		}
	}
	for n := range spawned {
		if _, ok := byName[n]; !ok && !cleaned[n] {
			fail("worker %s was spawned, never cleaned, and is gone", n)
		}
	}
	for n := range byName {
		if spawned[n] == 0 && n != "r1" && n != "r2" {
			fail("worker %s is listed but no spawn of it succeeded", n)
		}
	}
	killed := map[string]bool{}
	for _, op := range ops {
		if !op.is("kill") || op.res.code != 0 {
			continue
		}
		for _, line := range strings.Split(op.res.stdout, "\n") {
			n, ok := strings.CutPrefix(line, "killed ")
			if !ok {
				continue
			}
			killed[n] = true
			if spawned[n] > 1 {
				continue
			}
			if rec, ok := byName[n]; ok && rec.Status != "stopped" {
				fail("worker %s was killed (%q) but is %s", n, strings.Join(op.res.args, " "), rec.Status)
			}
		}
	}
	// Nor stopped behind anyone's back: a worker spawned and never
	// killed runs on (its agent runs until killed), and clean, which
	// takes only stopped workers, never took it. A tmux server that
	// died under the run loses every window at once (it did once: tmux
	// 3.3a crashes when a session's current window is killed while a
	// control client attaches; docs/development.md).
	for n := range spawned {
		if killed[n] {
			continue
		}
		if cleaned[n] {
			fail("worker %s was never killed, yet clean took it: it had stopped", n)
		} else if rec, ok := byName[n]; ok && rec.Status != "running" {
			fail("worker %s was never killed, yet it is %s", n, rec.Status)
		}
	}

	// Everything away: nothing may remain anywhere.
	w.must("kill", "--all")
	w.must("clean", "--all")
	for _, p := range w.check(checkOptions{}) {
		fail("after kill --all and clean --all: %s", p)
	}
	if recs, _, _ := w.ls(); len(recs) != 0 {
		fail("records left after kill --all and clean --all: %v", recs)
	}
	t.Logf("took %v", time.Since(began))
}

// logTimeline logs when each operation ran and how it ended, in the order
// they started, so that a failing interleaving can be read.
func logTimeline(t *testing.T, began time.Time, ops []*stressOp) {
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b *stressOp) int { return a.res.start.Compare(b.res.start) })
	var b strings.Builder
	for _, op := range sorted {
		r := op.res
		args := r.args
		if i := slices.Index(args, "--"); i >= 0 {
			args = args[:i]
		}
		fmt.Fprintf(&b, "%6dms %6dms exit %d  swarm %s", r.start.Sub(began).Milliseconds(), r.end.Sub(began).Milliseconds(), r.code, strings.Join(args, " "))
		if out := strings.TrimSpace(r.stdout + r.stderr); out != "" && !op.is("ls") {
			fmt.Fprintf(&b, "  => %s", strings.ReplaceAll(out, "\n", " | "))
		}
		b.WriteString("\n")
	}
	t.Logf("timeline (start, end, since the test began):\n%s", b.String())
}
