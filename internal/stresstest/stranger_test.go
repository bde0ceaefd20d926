package stresstest

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKillNeverSignalsAStranger: a stale pid in swarm's files that now
// names an unrelated process (a sleep of the test's own, in its own
// process group) must never get it signalled, whatever command runs:
//   - a process worker whose record's pid is the stranger's, with a wrong
//     start_ticks, or (a swarm.py record) no start_ticks and a `started`
//     an hour before the stranger started: ls, status, kill, kill --all
//     and clean;
//   - a ralph loop whose pane is dead and whose state's agent_pid is the
//     stranger's with a wrong agent_start_ticks: kill with no monitor
//     running, and resume (a new monitor adopts the iteration and stops
//     what the old agent left) followed by kill.
func TestKillNeverSignalsAStranger(t *testing.T) {
	t.Parallel()
	t.Run("process worker", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		for _, variant := range []string{"wrong start_ticks", "no start_ticks, started an hour off"} {
			w.must(append([]string{"spawn", "--name", "pw", "--"}, w.agent()...)...)
			w.must("kill", "pw")
			_, stranger := startOwnSleep(t)
			w.editState(func(ws []map[string]any) {
				for _, r := range ws {
					if r["name"] != "pw" {
						continue
					}
					r["pid"] = stranger.pid
					meta := r["metadata"].(map[string]any)
					if variant == "wrong start_ticks" {
						meta["start_ticks"] = stranger.start + 12345
					} else {
						delete(meta, "start_ticks")
						r["started"] = time.Now().Add(-time.Hour).Format("2006-01-02T15:04:05.000000")
					}
				}
			})
			if r := w.run("status", "pw"); r.code != 1 {
				t.Errorf("%s: a stranger's pid counts as the worker: %s", variant, r)
			}
			for _, args := range [][]string{{"ls"}, {"kill", "pw"}, {"kill", "--all"}, {"clean", "pw"}} {
				r := w.run(args...)
				if msg := badOutput(r); msg != "" || r.code != 0 {
					t.Errorf("%s: %s %s", variant, msg, r)
				}
				if !stillRuns(stranger) {
					t.Fatalf("%s: swarm %v signalled a process that is not its worker", variant, args)
				}
			}
		}
	})
	for _, resume := range []bool{false, true} {
		name := "ralph loop, kill"
		if resume {
			name = "ralph loop, resume then kill"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			prompt := w.e.WriteFile("../PROMPT.md", "work")
			w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", prompt, "--max-iterations", "3",
				"--inactivity-timeout", "60", "--restart-delay", "100ms", "--",
				w.e.Agent, "--script", "print hi;sleep 1500ms;exit 0", w.marker)
			num := func(k string) int { return w.ralphNum("rl", k) }
			flag := func(k string) bool { return w.ralphFlag("rl", k) }
			w.e.Eventually("prompt delivered", 30*time.Second, func() bool {
				return num("current_iteration") == 1 && flag("iteration_active") && flag("prompt_delivered")
			})
			// The monitor goes (SIGKILL, confirmed), so nothing watches the
			// agent; it exits and its pane is left dead.
			mons := w.monitors("rl")
			if len(mons) != 1 {
				t.Fatalf("monitors: %v", mons)
			}
			if err := signalConfirmed(mons[0], unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			w.e.Eventually("monitor gone", 10*time.Second, func() bool { return len(w.monitors("rl")) == 0 })
			w.e.Eventually("pane dead", 30*time.Second, func() bool {
				panes, _ := w.panes()
				for _, p := range panes {
					if p.windowName == "rl" {
						return p.dead
					}
				}
				return false
			})
			_, stranger := startOwnSleep(t)
			w.editRalph("rl", func(m map[string]any) {
				m["agent_pid"] = stranger.pid
				m["agent_start_ticks"] = stranger.start + 12345
			})
			if resume {
				w.must("ralph", "resume", "rl")
				// The new monitor adopts iteration 1, finds its agent gone
				// and moves on to iteration 2.
				w.e.Eventually("iteration 2", 30*time.Second, func() bool { return num("current_iteration") >= 2 })
				if !stillRuns(stranger) {
					t.Fatal("the resumed monitor signalled a process that is not its agent")
				}
			}
			if r := w.run("kill", "rl"); r.code != 0 {
				t.Errorf("%s", r)
			}
			if !stillRuns(stranger) {
				t.Fatal("kill signalled a process that is not the loop's agent")
			}
			for _, f := range w.check(checkOptions{allowTemps: true}) {
				t.Error(f)
			}
		})
	}
}
