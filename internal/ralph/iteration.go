package ralph

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acarl005/stripansi"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

var errSkip = errors.New("loop not running")

// readPrompt reads the prompt file fresh from disk (edits take effect in
// the next iteration), with the messages the contract gives.
func readPrompt(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("prompt file not found: %s", path)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read prompt file: %s", path)
	}
	return string(data), nil
}

// outputPath is where the agent's raw output of iteration iter is piped.
func (e *Engine) outputPath(iter int) string {
	return filepath.Join(e.RS.Dir, "output", fmt.Sprintf("iteration-%04d.log", iter))
}

// iteration runs one iteration: it starts a fresh agent (or adopts one a
// dead monitor left running), delivers the prompt, and watches until the
// iteration ends. ok is false when the loop was paused or stopped before
// an agent started.
func (e *Engine) iteration(ctx context.Context, st *state.Ralph, w *state.Worker) (o Outcome, iter int, started time.Time, ok bool) {
	tc := worker.Tmux(w)
	if st.IterationActive {
		return e.adopt(ctx, tc, st, w)
	}
	iter = st.CurrentIteration + 1
	prompt, err := readPrompt(st.PromptFile)
	if err != nil {
		return Outcome{End: EndPromptError, Detail: err.Error()}, st.CurrentIteration, time.Now(), true
	}
	delivered := prompt
	if st.Feedback != "" {
		delivered = strings.TrimRight(prompt, "\n") + "\n\n" + string(st.Feedback)
	}
	var head, tree string
	if st.RequireChange {
		head, tree = worktree.Head(st.WorkDir), worktree.TreeState(st.WorkDir)
	}
	started = time.Now()
	var winID string
	var startErr error
	// The status check and the agent's start happen under the state lock:
	// a kill or pause written by another command is either seen here or
	// comes after the window exists (and then stops it).
	_, err = e.RS.Update(func(s *state.Ralph) error {
		if s.Status != state.RalphRunning || s.IterationActive {
			return errSkip
		}
		s.CurrentIteration = iter
		s.LastIterationStart = state.Timestamp{Time: started}
		s.IterationActive = true
		s.OutputOffset = 0
		s.PromptSent = s.PromptMode != ModeType
		s.Delivered = delivered
		s.Feedback = ""
		s.PauseReason = ""
		s.LastScreenChange = state.Timestamp{Time: started}
		s.StartHead, s.StartTree = head, tree
		// Logged with the count, so a monitor dying right after still
		// leaves one START line per iteration.
		e.RS.Log("START", fmt.Sprintf("iteration %d/%d", iter, s.MaxIterations))
		winID, startErr = e.startAgent(tc, w, s, iter, delivered)
		return nil
	})
	if errors.Is(err, errSkip) {
		return Outcome{}, 0, started, false
	}
	if err != nil {
		return Outcome{End: EndStartFailed, Detail: err.Error()}, iter, started, true
	}
	e.M.Store.Update(func(r *state.Registry) error {
		if rec := r.Find(e.Name); rec != nil {
			if rec.Metadata == nil {
				rec.Metadata = map[string]any{}
			}
			rec.Metadata["ralph"] = true
			rec.Metadata["ralph_iteration"] = iter
			rec.Status = state.StatusRunning
		}
		return nil
	})
	e.say("starting iteration %d/%d", iter, st.MaxIterations)
	if startErr != nil {
		return Outcome{End: EndStartFailed, Detail: startErr.Error()}, iter, started, true
	}
	marker, early := e.deliver(ctx, tc, winID, st, iter, delivered)
	if early != nil {
		return *early, iter, started, true
	}
	e.RS.Update(func(s *state.Ralph) error { s.OutputOffset, s.PromptSent = marker, true; return nil })
	o, iter, started = e.watch(ctx, tc, winID, st, iter, started, marker, delivered, time.Now())
	return o, iter, started, true
}

// startAgent runs the agent in the worker's window: the window is created
// once (with an idle placeholder) and every iteration respawns its pane, so
// anyone attached keeps watching across restarts.
func (e *Engine) startAgent(tc *tmux.Client, w *state.Worker, s *state.Ralph, iter int, prompt string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(e.outputPath(iter)), 0o700); err != nil {
		return "", err
	}
	// Keep this and the previous iteration's output for a look afterwards.
	os.Remove(e.outputPath(iter - 2))
	os.Remove(e.exitPath(iter - 2))
	os.Remove(e.exitPath(iter))
	if err := os.WriteFile(e.outputPath(iter), nil, 0o600); err != nil {
		return "", err
	}
	snapshot := e.RS.PromptSnapshotPath()
	if s.PromptMode != ModeType {
		if err := state.WriteFileAtomic(snapshot, []byte(prompt)); err != nil {
			return "", err
		}
	}
	win, ok, err := tc.Lookup(w.Tmux.Session, w.Tmux.Window)
	if err != nil {
		return "", err
	}
	id := win.WindowID
	if !ok {
		id, err = tc.NewWindow(tmux.WindowSpec{
			Session: w.Tmux.Session, Name: w.Tmux.Window, Dir: s.WorkDir,
			Command: []string{"sh", "-c", "while :; do sleep 3600; done"},
		})
		if err != nil {
			return "", fmt.Errorf("failed to create tmux window: %v", err)
		}
	}
	env := worker.EnvList(w.Env)
	if _, set := w.Env["PATH"]; !set {
		env = append(env, "PATH="+os.Getenv("PATH"))
	}
	env = append(env, "SWARM_WORKER="+e.Name, fmt.Sprintf("SWARM_RALPH_ITERATION=%d", iter))
	err = tc.Respawn(id, tmux.RespawnSpec{
		Dir: s.WorkDir, Env: env, Command: agentCommand(s.PromptMode, w.Cmd, snapshot, e.exitPath(iter)),
		PipeTo: e.outputPath(iter), RemainOnExit: true,
	})
	if err != nil {
		return id, fmt.Errorf("cannot start the agent: %v", err)
	}
	return id, nil
}

// agentCommand wraps the worker command for the prompt mode. The wrapper
// shell writes the agent's exit status to a file: tmux's own record of it
// (pane_dead_status) is sometimes never set by tmux 3.3, and the file also
// tells that the agent exited when a child it left behind keeps the pane
// open. A missing command shows as 127, as in a terminal.
func agentCommand(mode string, cmd []string, snapshot, status string) []string {
	const record = `; c=$?; echo "$c" > "$s"; exit "$c"`
	switch mode {
	case ModeStdin:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" < "$f"` + record, "swarm-agent", status, snapshot}, cmd...)
	case ModeArg:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" "$(cat "$f")"` + record, "swarm-agent", status, snapshot}, cmd...)
	}
	return append([]string{"sh", "-c", `s=$1; shift; "$@"` + record, "swarm-agent", status}, cmd...)
}

// exitPath is where the wrapper records the agent's exit status.
func (e *Engine) exitPath(iter int) string {
	return filepath.Join(e.RS.Dir, "output", fmt.Sprintf("iteration-%04d.exit", iter))
}

// readExit returns the recorded exit status of the iteration's agent.
func (e *Engine) readExit(iter int) (int, bool) {
	data, err := os.ReadFile(e.exitPath(iter))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, err == nil
}

// deliver types the prompt in type mode: wait until the agent looks ready,
// paste the prompt as one bracketed paste, let the echo settle, press
// Enter. It returns the output offset from which the agent's reply counts.
// In stdin and arg modes the agent got the prompt at start: offset 0.
func (e *Engine) deliver(ctx context.Context, tc *tmux.Client, id string, st *state.Ralph, iter int, prompt string) (int64, *Outcome) {
	if st.PromptMode != ModeType {
		return 0, nil
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stuck := ""
	res, _ := ready.Wait(rctx, func() (string, bool, error) {
		ps, screen, err := tc.Poll(id)
		if err != nil {
			return "", true, nil
		}
		return screen, ps.Dead, nil
	}, e.ReadyPoll, min(time.Duration(st.ReadyTimeout)*time.Second, e.budgetLeft()), func(kind string) {
		e.warnStuck(iter, kind)
		if iter == 1 {
			stuck = kind
			cancel()
		}
	})
	if stuck != "" {
		e.stopAgent(tc, id)
		return 0, &Outcome{End: EndPreflight, Detail: preflightDetail(e.Name, stuck)}
	}
	if ctx.Err() != nil || res.Dead {
		return 0, nil // watch reports the exit or the interrupt
	}
	if e.budgetLeft() == 0 {
		e.stopAgent(tc, id)
		return 0, &Outcome{End: EndMaxTime}
	}
	if !res.Ready {
		e.RS.Log("WARN", fmt.Sprintf("iteration %d: agent did not look ready within %ds; sending the prompt anyway", iter, st.ReadyTimeout))
	}
	out := e.outputPath(iter)
	if prompt != "" {
		if err := tc.Paste(id, prompt); err != nil {
			return 0, nil
		}
	}
	marker := settle(out)
	tc.SendKeys(id, "Enter")
	return marker, nil
}

func preflightDetail(name, kind string) string {
	return fmt.Sprintf("the agent is waiting at a %s on its first start; run the command once by hand to finish its setup, then: swarm ralph resume %s", kind, name)
}

func (e *Engine) warnStuck(iter int, kind string) {
	e.RS.Log("WARN", fmt.Sprintf("iteration %d: agent shows a %s", iter, kind))
	e.say("agent shows a %s; it needs a human (swarm attach %s)", kind, e.Name)
}

// settle waits until the output file stops growing (the agent finished
// echoing the paste), at most 2 s, and returns its size.
func settle(path string) int64 {
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	last, stable := size(), time.Now()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(25 * time.Millisecond)
		if s := size(); s != last {
			last, stable = s, time.Now()
		} else if time.Since(stable) >= 150*time.Millisecond {
			break
		}
	}
	return last
}

// adopt continues an iteration whose agent a previous monitor started. If
// that monitor died before the prompt was delivered, the agent is started
// again within the same iteration: it may hold half a prompt.
func (e *Engine) adopt(ctx context.Context, tc *tmux.Client, st *state.Ralph, w *state.Worker) (Outcome, int, time.Time, bool) {
	iter := st.CurrentIteration
	started := st.LastIterationStart.Time
	win, ok, err := tc.Lookup(w.Tmux.Session, w.Tmux.Window)
	if err != nil || !ok {
		det := e.detector(st, st.Delivered)
		e.feedFile(det, e.outputPath(iter), st.OutputOffset)
		det.Flush()
		o := Outcome{End: EndWindowLost}
		o.Signal, _ = det.Stop()
		return o, iter, started, true
	}
	if !st.PromptSent {
		e.RS.Log("WARN", fmt.Sprintf("monitor restarted before the prompt was delivered; restarting the agent of iteration %d", iter))
		e.say("restarting the agent of iteration %d (the previous monitor died before delivering the prompt)", iter)
		var startErr error
		var id string
		_, err := e.RS.Update(func(s *state.Ralph) error {
			if s.Status != state.RalphRunning {
				return errSkip
			}
			id, startErr = e.startAgent(tc, w, s, iter, st.Delivered)
			return nil
		})
		if errors.Is(err, errSkip) {
			return Outcome{}, 0, started, false
		}
		if err == nil {
			err = startErr
		}
		if err != nil {
			return Outcome{End: EndStartFailed, Detail: err.Error()}, iter, started, true
		}
		marker, early := e.deliver(ctx, tc, id, st, iter, st.Delivered)
		if early != nil {
			return *early, iter, started, true
		}
		e.RS.Update(func(s *state.Ralph) error { s.OutputOffset, s.PromptSent = marker, true; return nil })
		o, iter, started := e.watch(ctx, tc, id, st, iter, started, marker, st.Delivered, time.Now())
		return o, iter, started, true
	}
	e.RS.Log("WARN", fmt.Sprintf("monitor restarted; adopting iteration %d", iter))
	e.say("adopting running iteration %d", iter)
	o, iter, started := e.watch(ctx, tc, win.WindowID, st, iter, started, st.OutputOffset, st.Delivered, time.Now())
	return o, iter, started, true
}

func (e *Engine) detector(st *state.Ralph, prompt string) *Detector {
	cfg := DetectorConfig{Promise: st.Promise, Word: st.CompletionPromise}
	if st.DonePattern != "" {
		cfg.DonePattern, _ = compilePattern(string(st.DonePattern))
	}
	return NewDetector(cfg, prompt)
}

// primedDetector returns a detector for output from off on, primed with
// the output just before off (the echo of the prompt) as context.
func (e *Engine) primedDetector(st *state.Ralph, prompt, path string, off int64) *Detector {
	det := e.detector(st, prompt)
	if off > 0 {
		if f, err := os.Open(path); err == nil {
			start := max(0, off-2048)
			buf := make([]byte, off-start)
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
// 20 lines of the screen.
func screenHash(screen string) [16]byte {
	lines := strings.Split(stripansi.Strip(screen), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return md5.Sum([]byte(strings.Join(lines, "\n")))
}

// watch polls the agent until the iteration ends. Each poll is one tmux
// process (pane state and screen together) plus a read of the new bytes
// of the output file.
//
// It returns the outcome and the iteration it ended, with that iteration's
// start: with --same-session, watch moves on to later iterations itself.
func (e *Engine) watch(ctx context.Context, tc *tmux.Client, id string, st *state.Ralph, iter int, iterStart time.Time, off int64, prompt string, promptAt time.Time) (Outcome, int, time.Time) {
	out := e.outputPath(iter)
	det := e.primedDetector(st, prompt, out, off)
	var lastHash [16]byte
	lastChange := time.Now()
	if !st.LastScreenChange.IsZero() && st.LastScreenChange.After(lastChange.Add(-time.Hour)) && st.LastScreenChange.Before(lastChange) {
		lastChange = st.LastScreenChange.Time
	}
	warned := map[string]bool{}
	nudged := false
	tasks := 0
	pollErrors := 0
	timeout := time.Duration(st.InactivityTimeout) * time.Second
	end := func(o Outcome) Outcome {
		off = e.feedFile(det, out, off)
		det.Flush()
		e.recordTasks(det, iter, &tasks)
		if s, ok := det.Stop(); ok {
			o.Signal = s
		}
		if st.DoneFile != "" {
			o.DoneFile = o.DoneFile || fileExists(doneFilePath(st))
			o.WaitFile = fileExists(waitFilePath(st))
		}
		return o
	}
	for {
		cur, err := e.RS.Load()
		if err == nil && (cur.Status == state.RalphStopped || cur.Status == state.RalphFailed) {
			e.stopAgent(tc, id)
			return Outcome{End: EndStopped}, iter, iterStart
		}
		if ctx.Err() != nil {
			e.stopAgent(tc, id)
			return Outcome{End: EndInterrupted}, iter, iterStart
		}
		ps, screen, err := tc.Poll(id)
		if err != nil {
			if pollErrors++; tmux.IsNotFound(err) || pollErrors > 5 {
				return end(Outcome{End: EndWindowLost}), iter, iterStart
			}
			time.Sleep(e.Poll)
			continue
		}
		pollErrors = 0
		if next := e.feedFile(det, out, off); next == off {
			// No new output since the last poll: judge what is there
			// with the context there is; more is not on its way.
			det.Flush()
		} else {
			off = next
		}
		e.recordTasks(det, iter, &tasks)
		if h := screenHash(screen); h != lastHash {
			lastHash, lastChange = h, time.Now()
		}
		e.persistScreenChange(lastChange)
		if code, ok := e.readExit(iter); ok {
			// The agent exited; whatever it left running goes too.
			e.stopAgent(tc, id)
			return end(Outcome{End: EndExited, ExitCode: code, ExitKnown: true}), iter, iterStart
		}
		if ps.Dead {
			// Killed by a signal before the wrapper could record a status:
			// take tmux's word if it has one.
			for i := 0; i < 20 && !ps.ExitKnown(); i++ {
				time.Sleep(25 * time.Millisecond)
				if code, ok := e.readExit(iter); ok {
					return end(Outcome{End: EndExited, ExitCode: code, ExitKnown: true}), iter, iterStart
				}
				if p2, _, err := tc.Poll(id); err == nil {
					ps = p2
				}
			}
			return end(Outcome{End: EndExited, ExitCode: ps.ExitCode(), ExitKnown: ps.ExitKnown()}), iter, iterStart
		}
		if _, ok := det.Stop(); ok && st.CheckDoneContinuous {
			e.stopAgent(tc, id)
			return end(Outcome{End: EndSignal}), iter, iterStart
		}
		if st.DoneFile != "" && fileExists(doneFilePath(st)) {
			e.stopAgent(tc, id)
			return end(Outcome{End: EndDoneFile, DoneFile: true}), iter, iterStart
		}
		// The prompt on screen (echoed by the agent) must not look like a
		// stuck screen, a compaction or a context gauge.
		own := withoutEcho(screen, prompt)
		if kind, ok := ready.Stuck(own); ok && !warned[kind] {
			warned[kind] = true
			e.warnStuck(iter, kind)
			if iter == 1 && time.Since(promptAt) < 10*time.Second {
				e.stopAgent(tc, id)
				return Outcome{End: EndPreflight, Detail: preflightDetail(e.Name, kind)}, iter, iterStart
			}
		}
		if ready.FatalPattern.MatchString(own) {
			e.RS.Log("FATAL", fmt.Sprintf("iteration %d: %s; restarting with a fresh context", iter, ready.FatalPattern.String()))
			e.say("agent is compacting its context; restarting it fresh")
			e.stopAgent(tc, id)
			return end(Outcome{End: EndFatal}), iter, iterStart
		}
		if st.MaxContext > 0 {
			if pct, ok := ready.ContextPercent(own); ok {
				switch {
				case pct >= st.MaxContext+15:
					e.RS.Log("FATAL", fmt.Sprintf("iteration %d: context at %d%% (limit %d%%+15); restarting", iter, pct, st.MaxContext))
					e.stopAgent(tc, id)
					return end(Outcome{End: EndContext}), iter, iterStart
				case pct >= st.MaxContext && !nudged:
					nudged = true
					e.RS.Log("WARN", fmt.Sprintf("iteration %d: context at %d%%; asked the agent to commit and exit", iter, pct))
					worker.SendText(tc, id, "Your context window is almost full. Commit your work now, update the plan with what is left, and exit.", worker.SendOptions{})
				}
			}
		}
		if st.MaxTime > 0 && time.Since(st.Started.Time) >= seconds(st.MaxTime) {
			e.stopAgent(tc, id)
			return end(Outcome{End: EndMaxTime}), iter, iterStart
		}
		if time.Since(lastChange) >= timeout {
			if st.SameSession && cur != nil && cur.Status == state.RalphRunning {
				if _, stopping := det.Stop(); !stopping && iter < st.MaxIterations {
					next, newPrompt, err := e.continueSession(tc, id, st, iter, iterStart)
					if err != nil {
						e.stopAgent(tc, id)
						return Outcome{End: EndPromptError, Detail: err.Error()}, iter, iterStart
					}
					off = e.feedFile(det, out, off)
					iter, prompt = next, newPrompt
					off = settle(out)
					det = e.primedDetector(st, prompt, out, off)
					tc.SendKeys(id, "Enter")
					e.RS.Update(func(s *state.Ralph) error { s.OutputOffset = off; return nil })
					lastChange, promptAt, iterStart, nudged, tasks = time.Now(), time.Now(), time.Now(), false, 0
					continue
				}
			}
			e.RS.Log("TIMEOUT", fmt.Sprintf("iteration %d inactivity_timeout=%ds", iter, st.InactivityTimeout))
			e.say("inactivity timeout (%ds), restarting", st.InactivityTimeout)
			e.stopAgent(tc, id)
			return end(Outcome{End: EndInactive}), iter, iterStart
		}
		select {
		case <-ctx.Done():
		case <-time.After(e.Poll):
		}
	}
}

// withoutEcho drops the screen lines that are part of the prompt (as the
// agent echoed it, however re-wrapped or framed), keeping the agent's own.
func withoutEcho(screen, prompt string) string {
	p := normalize(prompt)
	if p == "" {
		return screen
	}
	lines := strings.Split(screen, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if n := normalize(l); utf8.RuneCountInString(n) >= 4 && strings.Contains(p, n) {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// continueSession is --same-session: the agent went quiet without a
// completion signal, so instead of restarting it, type a continuation into
// the same session and count a new iteration. The prompt is pasted; the
// caller presses Enter once the echo settled.
func (e *Engine) continueSession(tc *tmux.Client, id string, st *state.Ralph, iter int, iterStart time.Time) (int, string, error) {
	prompt, err := readPrompt(st.PromptFile)
	if err != nil {
		return iter, "", err
	}
	word := st.CompletionPromise
	msg := fmt.Sprintf("You stopped without printing <promise>%s</promise>. Continue the task below; print it only when the task is fully done.\n\n%s", word, prompt)
	next := iter + 1
	now := time.Now()
	e.RS.Log("TIMEOUT", fmt.Sprintf("iteration %d inactivity_timeout=%ds", iter, st.InactivityTimeout))
	e.RS.Log("END", fmt.Sprintf("iteration %d exit=none duration=%s", iter, duration.Compact(now.Sub(iterStart))))
	e.RS.Update(func(s *state.Ralph) error {
		s.IterationDurations = append(s.IterationDurations, now.Sub(iterStart).Seconds())
		s.LastIterationEnd = state.Timestamp{Time: now}
		s.CurrentIteration = next
		s.LastIterationStart = state.Timestamp{Time: now}
		s.Delivered = msg
		s.ConsecutiveFailures = 0
		return nil
	})
	e.M.Store.Update(func(r *state.Registry) error {
		if rec := r.Find(e.Name); rec != nil && rec.Metadata != nil {
			rec.Metadata["ralph_iteration"] = next
		}
		return nil
	})
	e.RS.Log("START", fmt.Sprintf("iteration %d/%d (same session)", next, st.MaxIterations))
	e.say("agent went quiet without a completion signal; continuing in the same session (iteration %d/%d)", next, st.MaxIterations)
	// A failed paste shows as continued silence: the next timeout restarts.
	tc.Paste(id, msg)
	return next, msg, nil
}

// recordTasks stores task ids reported done in this iteration.
func (e *Engine) recordTasks(det *Detector, iter int, seen *int) {
	tasks := det.Tasks()
	if len(tasks) <= *seen {
		return
	}
	fresh := tasks[*seen:]
	*seen = len(tasks)
	e.RS.Update(func(s *state.Ralph) error {
		for _, t := range fresh {
			s.TasksDone = append(s.TasksDone, state.TaskDone{Iteration: iter, ID: t})
		}
		return nil
	})
	for _, t := range fresh {
		e.say("task %s done (iteration %d)", t, iter)
	}
}

// persistScreenChange records the time of the last screen change for
// ralph status: at most one write a second, and the latest change is
// always written eventually.
func (e *Engine) persistScreenChange(t time.Time) {
	if t.Equal(e.persisted) || time.Since(e.lastPersist) < time.Second {
		return
	}
	e.lastPersist, e.persisted = time.Now(), t
	e.RS.Update(func(s *state.Ralph) error {
		s.LastScreenChange = state.Timestamp{Time: t}
		return nil
	})
}

// stopAgent stops the pane's process and everything it started (SIGTERM
// to its process groups, SIGKILL after the grace period) and waits until
// tmux sees the pane dead. The window stays (remain-on-exit).
func (e *Engine) stopAgent(tc *tmux.Client, id string) {
	ps, _, err := tc.Poll(id)
	if err != nil || ps.Dead || ps.PID <= 0 {
		return
	}
	proc.Terminate(ps.PID, e.StopGrace)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		ps, _, err := tc.Poll(id)
		if err != nil || ps.Dead {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}
