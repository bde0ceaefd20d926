package ralph

import (
	"context"
	"crypto/md5"
	"io"
	"os"
	"strings"
	"time"

	"github.com/acarl005/stripansi"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

// contextNudge is typed into an agent whose context passed --max-context.
const contextNudge = "Your context window is almost full. Commit your work now, update the plan with what is left, and exit."

// watch polls the agent until the iteration ends. Each poll is one tmux
// process (pane state and screen together) plus a read of the new bytes
// of the output file, and then these checks, in this order: stopped from
// outside, exited, a completion signal seen, the time budget, the screen's
// verdict, quiet for the inactivity timeout. The agent is left as it is:
// conclude stops it once the decision is made.
func (e *Engine) watch(ctx context.Context, a *attempt) Outcome {
	if a.det == nil {
		a.det = e.primedDetector(a)
	}
	a.lastChange = time.Now()
	for {
		if o, ok := e.stoppedFromOutside(ctx); ok {
			return o
		}
		ps, screen, err := a.tc.Poll(a.window)
		if err != nil {
			if a.pollErrors++; tmux.IsNotFound(err) || a.pollErrors > maxPollErrors {
				return e.final(a, Outcome{End: EndWindowLost})
			}
			e.Sleep(ctx, e.Poll)
			continue
		}
		a.pollErrors = 0
		e.readOutput(a)
		e.noteScreen(a, screen)
		checks := []func() (Outcome, bool){
			func() (Outcome, bool) { return e.exited(a, ps) },
			func() (Outcome, bool) { return e.signalled(a) },
			func() (Outcome, bool) { return e.overBudget(a) },
			func() (Outcome, bool) { return e.judge(a, screen) },
			func() (Outcome, bool) { return e.quiet(a) },
		}
		for _, check := range checks {
			if o, ok := check(); ok {
				return o
			}
		}
		e.Sleep(ctx, e.Poll)
	}
}

// stoppedFromOutside ends the iteration when another command ended the
// loop (kill, stop) or Ctrl-C interrupted the foreground run.
func (e *Engine) stoppedFromOutside(ctx context.Context) (Outcome, bool) {
	if cur, err := e.RS.Load(); err == nil && (cur.Status == state.RalphStopped || cur.Status == state.RalphFailed) {
		return Outcome{End: EndStopped}, true
	}
	if ctx.Err() != nil {
		return Outcome{End: EndInterrupted}, true
	}
	return Outcome{}, false
}

// readOutput feeds the agent's new output to the detector and records
// task ids reported done.
func (e *Engine) readOutput(a *attempt) {
	if next := e.feedFile(a.det, a.out, a.off); next == a.off {
		// No new output since the last poll: judge what is there with
		// the context there is; more is not on its way.
		a.det.Flush()
	} else {
		a.off = next
	}
	e.recordTasks(a)
}

// noteScreen updates the inactivity fingerprint.
func (e *Engine) noteScreen(a *attempt, screen string) {
	if h := screenHash(screen); h != a.lastHash {
		a.lastHash, a.lastChange = h, time.Now()
	}
	e.persistScreenChange(a.lastChange)
}

// exited: the agent's wrapper recorded an exit status, or tmux shows the
// pane dead (killed by a signal before the wrapper could record one).
func (e *Engine) exited(a *attempt, ps tmux.PaneStatus) (Outcome, bool) {
	if code, ok := a.readExit(); ok {
		return e.final(a, Outcome{End: EndExited, ExitCode: code, ExitKnown: true}), true
	}
	if !ps.Dead {
		return Outcome{}, false
	}
	// tmux may mark the pane dead a moment before the status is readable.
	for i := 0; i < exitStatusLooks && !ps.ExitKnown(); i++ {
		time.Sleep(exitStatusGap)
		if code, ok := a.readExit(); ok {
			return e.final(a, Outcome{End: EndExited, ExitCode: code, ExitKnown: true}), true
		}
		if p2, _, err := a.tc.Poll(a.window); err == nil {
			ps = p2
		}
	}
	return e.final(a, Outcome{End: EndExited, ExitCode: ps.ExitCode(), ExitKnown: ps.ExitKnown()}), true
}

// signalled: a completion signal in the output (acted on while the agent
// runs unless --no-check-done-continuous), or the done file.
func (e *Engine) signalled(a *attempt) (Outcome, bool) {
	if _, ok := a.det.Stop(); ok && a.st.CheckDoneContinuous {
		return e.final(a, Outcome{End: EndSignal}), true
	}
	if a.st.DoneFile != "" && fileExists(doneFilePath(a.st)) {
		return e.final(a, Outcome{End: EndDoneFile, DoneFile: true}), true
	}
	return Outcome{}, false
}

// overBudget: the loop's --max-time is used up.
func (e *Engine) overBudget(a *attempt) (Outcome, bool) {
	if a.st.MaxTime > 0 && time.Since(a.st.Started.Time) >= seconds(a.st.MaxTime) {
		return e.final(a, Outcome{End: EndMaxTime}), true
	}
	return Outcome{}, false
}

// judge acts on the screen's verdict (JudgeScreen): setup screens a human
// must pass, a compaction, the context gauge.
func (e *Engine) judge(a *attempt, screen string) (Outcome, bool) {
	v := JudgeScreen(screen, a.prompt, int(a.st.MaxContext))
	if v.Stuck != "" && !a.warned[v.Stuck] {
		a.warned[v.Stuck] = true
		e.warnStuck(a.iter, v.Stuck)
		if a.iter == 1 && time.Since(a.promptAt) < preflightWindow {
			return Outcome{End: EndPreflight, Detail: preflightDetail(e.Name, v.Stuck)}, true
		}
	}
	switch {
	case v.Compacting:
		e.log("FATAL", "iteration %d: %s; restarting with a fresh context", a.iter, compactionText)
		e.say("agent is compacting its context; restarting it fresh")
		return e.final(a, Outcome{End: EndFatal}), true
	case v.Context == ContextRestart:
		e.log("FATAL", "iteration %d: context at %d%% (limit %d%%+%d); restarting", a.iter, v.ContextPercent, a.st.MaxContext, contextRestartMargin)
		return e.final(a, Outcome{End: EndContext}), true
	case v.Context == ContextNudge && !a.nudged:
		a.nudged = true
		e.log("WARN", "iteration %d: context at %d%%; asked the agent to commit and exit", a.iter, v.ContextPercent)
		worker.SendText(a.tc, a.window, contextNudge, worker.SendOptions{})
	}
	return Outcome{}, false
}

// quiet: the screen has not changed for the inactivity timeout.
func (e *Engine) quiet(a *attempt) (Outcome, bool) {
	if time.Since(a.lastChange) < time.Duration(a.st.InactivityTimeout)*time.Second {
		return Outcome{}, false
	}
	e.log("TIMEOUT", "iteration %d inactivity_timeout=%ds", a.iter, a.st.InactivityTimeout)
	return e.final(a, Outcome{End: EndInactive}), true
}

// final completes an outcome with what the rest of the output holds: the
// strongest signal, task ids, the done and WAIT files.
func (e *Engine) final(a *attempt, o Outcome) Outcome {
	if a.det == nil {
		a.det = e.primedDetector(a)
	}
	a.off = e.feedFile(a.det, a.out, a.off)
	a.det.Flush()
	e.recordTasks(a)
	if s, ok := a.det.Stop(); ok {
		o.Signal = s
	}
	if a.st.DoneFile != "" {
		o.DoneFile = o.DoneFile || fileExists(doneFilePath(a.st))
		o.WaitFile = fileExists(waitFilePath(a.st))
	}
	return o
}

func (e *Engine) detector(st *state.Ralph, prompt string) *Detector {
	cfg := DetectorConfig{Promise: st.Promise, Word: st.CompletionPromise}
	if st.DonePattern != "" {
		cfg.DonePattern, _ = compilePattern(string(st.DonePattern))
	}
	return NewDetector(cfg, prompt)
}

// primedDetector returns a detector for the attempt's output from a.off
// on, primed with the output just before it (the echo of the prompt) as
// context.
func (e *Engine) primedDetector(a *attempt) *Detector {
	det := e.detector(a.st, a.prompt)
	if a.off > 0 {
		if f, err := os.Open(a.out); err == nil {
			start := max(0, a.off-echoContext)
			buf := make([]byte, a.off-start)
			n, _ := f.ReadAt(buf, start)
			f.Close()
			det.Prime(buf[:n])
		}
	}
	return det
}

// feedFile feeds det the output file from off to its end; it returns the
// new offset.
func (e *Engine) feedFile(det *Detector, path string, off int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return off
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			det.Feed(buf[:n])
			off += int64(n)
		}
		if err == io.EOF || n == 0 || err != nil {
			return off
		}
	}
}

// screenHash is the inactivity fingerprint: MD5 of the ANSI-stripped last
// 20 lines of the screen (docs/ralph.md).
func screenHash(screen string) [16]byte {
	lines := strings.Split(stripansi.Strip(screen), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return md5.Sum([]byte(strings.Join(lines, "\n")))
}

// recordTasks stores task ids reported done in this iteration.
func (e *Engine) recordTasks(a *attempt) {
	tasks := a.det.Tasks()
	if len(tasks) <= a.tasks {
		return
	}
	fresh := tasks[a.tasks:]
	a.tasks = len(tasks)
	e.update(func(s *state.Ralph) error {
		for _, t := range fresh {
			s.TasksDone = append(s.TasksDone, state.TaskDone{Iteration: a.iter, ID: t})
		}
		return nil
	})
	for _, t := range fresh {
		e.say("task %s done (iteration %d)", t, a.iter)
	}
}

// persistScreenChange records the time of the last screen change for
// ralph status: at most one write a second, and the latest change is
// always written eventually.
func (e *Engine) persistScreenChange(t time.Time) {
	if t.Equal(e.persisted) || time.Since(e.lastPersist) < screenChangePersist {
		return
	}
	e.lastPersist, e.persisted = time.Now(), t
	e.update(func(s *state.Ralph) error {
		s.LastScreenChange = state.UTCTimestamp{Time: t}
		return nil
	})
}

// stopAgent stops the pane's process and everything it started (SIGTERM
// to its process groups, SIGKILL after the grace period) and waits until
// tmux sees the pane dead. The window stays (remain-on-exit).
func (e *Engine) stopAgent(tc Tmux, id string) {
	if id == "" {
		return
	}
	ps, _, err := tc.Poll(id)
	if err != nil || ps.Dead || ps.PID <= 0 {
		return
	}
	proc.Terminate(ps.PID, e.StopGrace)
	deadline := time.Now().Add(paneDeadWait)
	for time.Now().Before(deadline) {
		ps, _, err := tc.Poll(id)
		if err != nil || ps.Dead {
			return
		}
		time.Sleep(exitStatusGap)
	}
}
