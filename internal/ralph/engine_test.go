package ralph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
	"github.com/swarmtools/swarm/internal/worker"
)

// fakeLoop is a loop whose monitor runs in the test process against a
// fake tmux server: the engine's iteration paths and decisions without a
// terminal, in milliseconds. Its tests run in a testing/synctest bubble:
// the engine's clock (clock.Real) is fake time there, which moves on only
// when every goroutine of the test waits, so backoffs, timeouts and an
// agent's think time cost no real time, and the order of events does not
// depend on how busy the machine is.
type fakeLoop struct {
	t      *testing.T
	srv    *tmuxtest.Server
	m      *worker.Manager
	e      *Engine
	out    *syncBuffer
	prompt string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newFakeLoop creates worker "w" and its loop state with opts (prompt file
// and iteration cap filled in when unset), with agent playing the agent.
func newFakeLoop(t *testing.T, agent tmuxtest.Program, opts Options) *fakeLoop {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "home")
	srv := tmuxtest.New()
	srv.Program = func(cmd []string) tmuxtest.Program {
		if len(cmd) > 3 && cmd[3] == "swarm-agent" {
			return agent
		}
		return nil // the window's idle placeholder
	}
	m := worker.New(root, nil)
	m.TmuxFor = func(tmux.Server) worker.Tmux { return srv }
	l := &fakeLoop{t: t, srv: srv, m: m, out: &syncBuffer{}, prompt: filepath.Join(dir, "PROMPT.md")}
	if err := os.WriteFile(l.prompt, []byte("do the next task\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if opts.PromptFile == "" {
		opts.PromptFile = l.prompt
	}
	if opts.MaxIterations == 0 {
		opts.MaxIterations = 3
	}
	if opts.InactivityTimeout.Duration == 0 {
		opts.InactivityTimeout.Duration = time.Minute
	}
	opts.Promise = true
	opts.CheckDoneContinuous = true
	_, err := Spawn(m, SpawnOptions{
		Worker:     worker.SpawnOptions{Name: "w", Command: []string{"sh"}, Cwd: dir},
		Loop:       opts,
		Foreground: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(m, "w", l.out)
	e.TmuxFor = func(tmux.Server) Tmux { return srv }
	e.Poll, e.ReadyPoll = 5*time.Millisecond, 5*time.Millisecond
	l.e = e
	return l
}

// waitFor waits until cond holds, looking every 5 ms, for at most a
// minute (of fake time, in a synctest bubble).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.EventuallyEvery(t, what, 5*time.Millisecond, time.Minute, cond)
}

// within waits as waitFor does and reports whether cond held: a
// goroutine of a test must not end the test (t.Fatal), it reports with
// t.Error.
func within(cond func() bool) bool {
	return clock.Wait(context.Background(), clock.Real, 5*time.Millisecond, time.Minute, cond)
}

// holdsFor checks that cond stays true for d: an absence can only be
// watched for a while, never waited for.
func holdsFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if clock.Wait(context.Background(), clock.Real, 5*time.Millisecond, d, func() bool { return !cond() }) {
		t.Fatalf("%s: broke within %v", what, d)
	}
}

// run drives the loop to its end and returns its exit code.
func (l *fakeLoop) run() (int, error) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, err := l.e.Run(ctx)
	if ctx.Err() != nil {
		l.t.Fatalf("loop did not end:\n%s\n%s", l.out, l.srv.Summary())
	}
	return code, err
}

func (l *fakeLoop) state() *state.Ralph {
	l.t.Helper()
	st, err := l.e.RS.Load()
	if err != nil {
		l.t.Fatal(err)
	}
	return st
}

func (l *fakeLoop) events(kind string) int {
	data, _ := os.ReadFile(l.e.RS.LogPath())
	return strings.Count(string(data), "["+kind+"]")
}

func (l *fakeLoop) expectEnd(code int, reason state.ExitReason, iterations int) {
	l.t.Helper()
	got, _ := l.run()
	st := l.state()
	if got != code || st.ExitReason != reason || st.CurrentIteration != iterations {
		data, _ := os.ReadFile(l.e.RS.LogPath())
		l.t.Fatalf("got exit %d reason %q after %d iterations; want %d %q after %d\n%s\n%s", got, st.ExitReason, st.CurrentIteration, code, reason, iterations, data, l.out)
	}
}

func TestEngineRunsToTheCapWithAFreshAgentEachIteration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			p.Print("did it\n")
			p.Exit(0)
		}}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		l.expectEnd(0, ReasonMaxIterations, 3)
		if agent.Runs() != 3 || len(agent.Messages()) != 3 || agent.Messages()[0] != "do the next task\n" {
			t.Fatalf("runs %d, messages %q", agent.Runs(), agent.Messages())
		}
		if n := l.events("START"); n != 3 {
			t.Fatalf("%d START lines", n)
		}
		if w, _ := l.m.Get("w"); w.Status != state.StatusStopped || w.Metadata["ralph_iteration"] != float64(3) {
			t.Fatalf("worker record after the loop: %+v", w)
		}
		if len(l.srv.Windows()) != 0 {
			t.Fatalf("window left behind:\n%s", l.srv.Summary())
		}
	})
}

func TestEngineStopsOnPromiseInIterationTwo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			if run == 2 {
				p.Print("all done <promise>COMPLETE</promise>\n")
				return // the loop stops the agent
			}
			p.Exit(0)
		}}
		l := newFakeLoop(t, agent, Options{MaxIterations: 5})
		l.expectEnd(0, ReasonComplete, 2)
	})
}

func TestEngineBacksOffThenFailsAfterFiveFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) { p.Exit(3) }}
		l := newFakeLoop(t, agent, Options{MaxIterations: 10})
		l.expectEnd(1, ReasonFailed, 5)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		for _, want := range []string{"attempt=1/5 backoff=1s", "attempt=2/5 backoff=2s", "attempt=3/5 backoff=4s", "attempt=4/5 backoff=8s", "attempt=5/5"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("log lacks %q:\n%s", want, data)
			}
		}
		if st := l.state(); st.TotalFailures != 5 || st.ConsecutiveFailures != 5 {
			t.Fatalf("failures %d/%d", st.ConsecutiveFailures, st.TotalFailures)
		}
	})
}

func TestEngineCountsAWindowThatCannotBeCreatedAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 10})
		l.srv.FailNewWindow = &tmuxtestError{"server exited unexpectedly"}
		l.expectEnd(1, ReasonFailed, 5)
		if !strings.Contains(l.out.String(), "start failed") {
			t.Fatalf("output: %s", l.out)
		}
	})
}

type tmuxtestError struct{ msg string }

func (e *tmuxtestError) Error() string { return e.msg }

func TestEngineJudgesAVanishedWindowOnItsOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answered := make(chan struct{})
		agent := &tmuxtest.Agent{}
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			p.Print("<promise>COMPLETE</promise>\n")
			close(answered)
		}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3, CheckDoneContinuous: false})
		l.e.RS.Update(func(s *state.Ralph) error { s.CheckDoneContinuous = false; return nil })
		agent.OnStart = func(p *tmuxtest.Pane, run int) {}
		go func() {
			// The window disappears (a user closed it) after the answer,
			// once the loop has recorded the delivery.
			<-answered
			if !within(func() bool { st, err := l.e.RS.Load(); return err == nil && st.PromptSent }) {
				t.Error("the delivery was never recorded")
			}
			for _, id := range l.srv.Windows() {
				l.srv.KillWindow(id)
			}
		}()
		l.expectEnd(0, ReasonComplete, 1)
	})
}

func TestEngineSameSessionContinuesTheQuietAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen("thinking done, waiting\n> ")
		}}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3, SameSession: true, InactivityTimeout: state.WholeSeconds{Duration: time.Second}})
		l.expectEnd(0, ReasonMaxIterations, 3)
		if agent.Runs() != 1 {
			t.Fatalf("the agent was started %d times; want 1", agent.Runs())
		}
		msgs := agent.Messages()
		if len(msgs) != 3 || !strings.HasPrefix(msgs[1], "You stopped without printing <promise>COMPLETE</promise>") {
			t.Fatalf("messages: %q", msgs)
		}
		if n := l.events("END"); n != 3 {
			t.Fatalf("%d END lines, want 3", n)
		}
	})
}

func TestEngineStopsWhenKilledFromOutside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			go markKilled(l.e.RS)
		}
		l.expectEnd(1, ReasonKilled, 1)
		if len(l.srv.Windows()) != 0 {
			t.Fatalf("window left behind:\n%s", l.srv.Summary())
		}
	})
}

// A worker record removed behind the loop's back (by hand, or by a tool
// that knows nothing of loops) ends the loop at the next turn, and its
// window, which only the loop still knows, goes with it.
func TestEngineClosesItsWindowWhenTheRecordIsRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			if err := l.m.Remove("w"); err != nil {
				t.Error(err)
			}
			p.Exit(0)
		}
		l.expectEnd(1, ReasonKilled, 1)
		if st := l.state(); st.ExitDetail != "worker record removed" {
			t.Errorf("exit detail %q", st.ExitDetail)
		}
		if len(l.srv.Windows()) != 0 {
			t.Fatalf("window left behind:\n%s", l.srv.Summary())
		}
	})
}

// Clean and resume of an ended loop never both succeed: a cleaned worker
// is not resumed, and a resumed loop's worker is not cleaned.
func TestCleanAndResumeExcludeEachOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
		l.m.Hooks = NewHooks(l.m)
		// A loop that ran an iteration and was killed; resume first. Its
		// monitor would start in another process; here the loop state alone
		// tells clean that the loop runs again.
		if _, err := l.e.RS.Update(func(s *state.Ralph) error { s.CurrentIteration = 1; return nil }); err != nil {
			t.Fatal(err)
		}
		markKilled(l.e.RS)
		if _, err := l.e.RS.Update(func(s *state.Ralph) error { s.Status = state.RalphRunning; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := l.m.Clean("w", worker.CleanOptions{}); err == nil || err.Error() != "cannot clean running worker 'w'" {
			t.Fatalf("clean of a resumed loop: %v", err)
		}
		// And inside the removal itself: the loop resumed after clean looked.
		err := l.m.Hooks.RemoveUnlessLoopHolds("w", func() error { t.Fatal("removed the record of a running loop"); return nil })
		var held *worker.LoopHoldsError
		if !errors.As(err, &held) || held.Status != string(state.RalphRunning) {
			t.Fatalf("RemoveUnlessLoopHolds of a running loop: %v", err)
		}
		// Clean first: the resume is refused, and the loop stays ended.
		markKilled(l.e.RS)
		if _, err := l.m.Clean("w", worker.CleanOptions{}); err != nil {
			t.Fatalf("clean of a killed loop: %v", err)
		}
		if err := ResumeLoop(l.m, "w"); !errors.Is(err, worker.ErrNotFound) {
			t.Fatalf("resume of a cleaned worker: %v", err)
		}
		if st := l.state(); st.Status != state.RalphStopped || st.ExitReason != ReasonKilled {
			t.Fatalf("after the refused resume: %s %s", st.Status, st.ExitReason)
		}
	})
}

// A loop made with --no-run and never run does not hold its worker: clean
// removes it as swarm.py does. A monitor started for it afterwards claims
// no iteration (it checks the record under the lock clean removed it
// under) and ends without ever making a window.
func TestCleanedNeverStartedLoopRunsNoIteration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		l.m.Hooks = NewHooks(l.m)
		w, err := l.m.Get("w") // as a monitor read it just before the clean
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.m.Clean("w", worker.CleanOptions{}); err != nil {
			t.Fatalf("clean of a loop never started: %v", err)
		}
		if err := l.e.claim(l.e.freshTurn(l.state(), w, 1, time.Now(), "work")); !errors.Is(err, errSkip) {
			t.Fatalf("claim of an iteration for a cleaned worker: %v", err)
		}
		if st := l.state(); st.CurrentIteration != 0 || st.IterationActive {
			t.Fatalf("claim changed the loop: iteration %d, active %v", st.CurrentIteration, st.IterationActive)
		}
		l.expectEnd(1, ReasonKilled, 0)
		if agent.Runs() != 0 || l.events("START") != 0 || len(l.srv.Windows()) != 0 {
			t.Fatalf("%d agent runs, %d START lines after the clean:\n%s", agent.Runs(), l.events("START"), l.srv.Summary())
		}
	})
}

// A resume that lands while kill waits for the monitor to exit keeps the
// monitor (Engine.stayForResume): kill returns at once instead of waiting
// out its timeout and warning that the monitor did not exit.
func TestKillDoesNotWaitForAResumedMonitor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
		var warned []string
		l.m.Warn = func(s string) { warned = append(warned, s) }
		lock, err := lockMonitor(l.e.RS) // the monitor, carrying on
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
		w, err := l.m.Get("w")
		if err != nil {
			t.Fatal(err)
		}
		h := NewHooks(l.m)
		h.BeforeKill(w)
		if st := l.state(); st.Active() {
			t.Fatalf("kill left the loop %s", st.Status)
		}
		if _, err := l.e.RS.Update(func(s *state.Ralph) error { s.Status = state.RalphRunning; return nil }); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		h.AfterKill(w)
		if d := time.Since(began); d > killWait(worker.PollInterval(DefaultPoll))/2 || len(warned) != 0 {
			t.Fatalf("AfterKill took %v, warnings %q", d, warned)
		}
	})
}

// A setup screen before the prompt could be typed stops the loop
// (pre-flight), and the agent is left at it, in its window, so that the
// fix printed (swarm attach, answer, swarm ralph resume) can be done.
func TestEnginePreflightStopsAtASetupScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{Banner: "Select login method:\n 1. Claude account\n"}
		l := newFakeLoop(t, agent, Options{MaxIterations: 1})
		code, err := l.run()
		if code != 1 || err == nil || !strings.Contains(err.Error(), "login method picker") || !strings.Contains(hint.Of(err), "swarm attach w") {
			t.Fatalf("code %d err %v", code, err)
		}
		st := l.state()
		if st.ExitReason != ReasonPreflight || st.CurrentIteration != 0 {
			t.Fatalf("reason %q after %d iterations; want preflight_failed after 0 (the iteration never got its prompt)", st.ExitReason, st.CurrentIteration)
		}
		ids := l.srv.Windows()
		if len(ids) != 1 || l.srv.Window(ids[0]).Dead() || !strings.Contains(l.srv.Window(ids[0]).Screen(), "Select login method") {
			t.Fatalf("the agent was not left at its dialog:\n%s", l.srv.Summary())
		}
	})
}

func TestEngineFailsWhenThePromptFileIsGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			os.Remove(l.prompt)
			p.Exit(0)
		}
		code, err := l.run()
		if code != 1 || err == nil || !strings.Contains(err.Error(), "prompt file not found") {
			t.Fatalf("code %d err %v", code, err)
		}
		if st := l.state(); st.CurrentIteration != 1 || st.Status != state.RalphFailed {
			t.Fatalf("state %s after %d", st.Status, st.CurrentIteration)
		}
	})
}

func TestEngineSIGTERMPausesAfterTheIteration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			l.e.RequestPause() // as SIGTERM does
			p.Exit(0)
		}
		if code, err := l.run(); code != 0 || err != nil {
			t.Fatalf("code %d err %v", code, err)
		}
		if st := l.state(); st.Status != state.RalphPaused || st.CurrentIteration != 1 || st.IterationActive {
			t.Fatalf("status %s at %d (active %v)", st.Status, st.CurrentIteration, st.IterationActive)
		}
	})
}

func TestEngineWaitExitCodePausesTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) { p.Exit(WaitExitCode) }}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			if !within(func() bool { st, err := l.e.RS.Load(); return err == nil && st.Status == state.RalphPaused }) {
				t.Error("the loop never paused")
			}
			l.e.RequestPause() // let the paused monitor exit
		}()
		if code, err := l.run(); code != 0 || err != nil {
			t.Fatalf("code %d err %v", code, err)
		}
		st := l.state()
		if st.Status != state.RalphPaused || !strings.Contains(string(st.PauseReason), "exit 42") || st.ConsecutiveFailures != 0 {
			t.Fatalf("status %s reason %q failures %d", st.Status, st.PauseReason, st.ConsecutiveFailures)
		}
	})
}

func TestReadPromptRefusesFIFOsAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readPrompt(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO prompt blocked")
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, MaxPromptBytes+1), 0o600)
	if _, err := readPrompt(big); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("big: %v", err)
	}
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("fine"), 0o600)
	if s, err := readPrompt(ok); err != nil || s != "fine" {
		t.Fatalf("ok: %q %v", s, err)
	}
	o := Options{PromptFile: fifo, MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "not a regular file: "+fifo) {
		t.Fatalf("validate fifo: %v", err)
	}
}

// On a full disk the monitor cannot record the loop's end: it backs off
// instead of re-driving (and re-adopting) the loop every poll.
func TestEngineBacksOffWhenStateCannotBeWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) { p.Exit(0) }}
		l := newFakeLoop(t, agent, Options{MaxIterations: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := &sleepRecorder{Clock: clock.Real, cancelAfter: 200, cancel: cancel}
		l.e.Clock = rec
		restore := func() {}
		agent.OnStart = func(p *tmuxtest.Pane, run int) {
			restore = state.FailWrites(syscall.ENOSPC) // after the iteration is claimed
		}
		done := make(chan struct{})
		go func() { l.e.Run(ctx); close(done) }()
		waitFor(t, "a growing backoff", func() bool { return rec.count(time.Second) >= 3 })
		cancel()
		<-done
		restore()
		if n := strings.Count(l.out.String(), "adopting"); n > 3 {
			t.Fatalf("re-adopted %d times:\n%s", n, l.out)
		}
		if !strings.Contains(l.out.String(), "cannot write the loop state; trying again in") {
			t.Fatalf("output:\n%s", l.out)
		}
	})
}

// tmux kill-server under a loop is a failed iteration, logged as such, and
// the next iteration starts a new server.
func TestEngineCountsALostTmuxServerAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{}
		l := newFakeLoop(t, agent, Options{MaxIterations: 2})
		agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
			if run == 1 {
				go l.srv.KillServer()
				return
			}
			p.Exit(0)
		}
		l.expectEnd(0, ReasonMaxIterations, 2)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if !strings.Contains(string(data), "[END] iteration 1 exit=none reason=tmux-server-gone") ||
			!strings.Contains(string(data), "[FAIL] iteration 1 exit=the tmux server went away attempt=1/5") {
			t.Fatalf("log:\n%s", data)
		}
		if st := l.state(); st.TotalFailures != 1 {
			t.Fatalf("failures %d", st.TotalFailures)
		}
	})
}

// A poll that read the wrapper's end marker before the exit was noticed
// leaves nothing for drain to find: drain must not then wait out
// drainWait for a marker already read (every exit took 5 s).
func TestDrainKnowsTheMarkerAPollRead(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "iteration-0001.log")
	// The marker split across two reads, as a pipe may deliver it.
	half := len(endMarker) / 2
	if err := os.WriteFile(out, []byte("done\n"+endMarker[:half]), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Clock: clock.Real}
	tn := &turn{session: &session{st: &state.Ralph{}, out: out}}
	tn.det = e.primedDetector(tn)
	e.feed(tn)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(endMarker[half:])
	f.Close()
	e.feed(tn) // the poll that reads the rest of the marker
	start := time.Now()
	e.drain(tn)
	if d := time.Since(start); d >= drainWait/2 {
		t.Fatalf("drain took %s after a poll had read the end marker", d)
	}
	if !tn.ended {
		t.Fatal("the end marker split across two reads was not noticed")
	}
}

// TestEngineRestartsADeadOutputPipe: tmux stops piping the agent's output
// when the log writer dies; the loop says so (WARN), pipes again, and a
// COMPLETE printed afterwards ends the loop.
func TestEngineRestartsADeadOutputPipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			p.StopPipe()
			go func() {
				if !within(func() bool { return p.PipePath() != "" }) {
					t.Error("the output was never piped again")
				}
				p.Print("done <promise>COMPLETE</promise>\n")
			}()
		}}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		l.expectEnd(0, ReasonComplete, 1)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if n := l.events("WARN"); n != 1 || !strings.Contains(string(data), "iteration 1: the agent's output stopped reaching its log") {
			t.Errorf("%d WARN lines:\n%s", n, data)
		}
	})
}

// sleepRecorder is the real clock (fake time in a synctest bubble) that
// records the waits asked of it, and cancels the loop after cancelAfter
// of them.
type sleepRecorder struct {
	clock.Clock
	mu          sync.Mutex
	sleeps      []time.Duration
	cancelAfter int
	cancel      func()
}

func (r *sleepRecorder) Sleep(ctx context.Context, d time.Duration) bool {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	n := len(r.sleeps)
	r.mu.Unlock()
	if n > r.cancelAfter {
		r.cancel()
	}
	return r.Clock.Sleep(ctx, d)
}

// count is how many of the waits were of at least d.
func (r *sleepRecorder) count(d time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.sleeps {
		if s >= d {
			n++
		}
	}
	return n
}

// A background monitor's lines (monitor.log) start with the time they
// were written; in a terminal, the loop prints swarm.py's lines as they
// are.
func TestMonitorLinesAreTimestamped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		e := &Engine{Name: "w", Out: &out, Clock: clock.Real}
		e.say("starting iteration %d/%d", 1, 3)
		e.Timestamps = true
		e.say("starting iteration %d/%d", 2, 3)
		want := "[ralph] w: starting iteration 1/3\n" + time.Now().Format(time.RFC3339) + " [ralph] w: starting iteration 2/3\n"
		if out.String() != want {
			t.Fatalf("output %q, want %q", out.String(), want)
		}
	})
}

func TestEngineTrimsOnceAfterTheFirstPollOfEachWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var trims []int // the agent's runs at each Trim: its launch is behind it
		trimmed := func() int { mu.Lock(); defer mu.Unlock(); return len(trims) }
		agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			go func() {
				// Working until this iteration's Trim, and for a few polls
				// after it: no second Trim comes.
				if !within(func() bool { return trimmed() >= run }) {
					t.Errorf("run %d: no Trim", run)
				}
				time.Sleep(20 * time.Millisecond)
				p.Print("did it\n")
				p.Exit(0)
			}()
		}}
		l := newFakeLoop(t, agent, Options{MaxIterations: 3})
		l.e.Trim = func() error {
			mu.Lock()
			defer mu.Unlock()
			trims = append(trims, agent.Runs())
			return errors.New("no /proc here")
		}
		l.expectEnd(0, ReasonMaxIterations, 3)
		if !slices.Equal(trims, []int{1, 2, 3}) {
			t.Fatalf("Trim called at runs %v; want once per iteration, after each launch", trims)
		}
		if n := strings.Count(l.out.String(), "cannot give back the memory start-up used: no /proc here"); n != 1 {
			t.Fatalf("Trim's error said %d times; want once:\n%s", n, l.out)
		}
	})
}
