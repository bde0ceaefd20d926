package ralph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// Screens in Claude Code's layout (internal/agent/testdata has the real
// ones): its input box between two rules, a footer, a transcript above.
const (
	claudeRule   = "────────────────────────────────────────"
	claudeBanner = " ▐▛███▜▌   Claude Code v2.1.197\n"
)

func claudeScreen(transcript, footer string) string {
	return claudeTyped(transcript, "", footer)
}

// claudeTyped is a screen whose input box holds typed (its first line).
func claudeTyped(transcript, typed, footer string) string {
	box := "❯\u00a0"
	if typed != "" {
		box = "❯ " + firstLine(typed)
	}
	return claudeBanner + transcript + claudeRule + "\n" + box + "\n" + claudeRule + "\n  " + footer + "\n"
}

var (
	claudeIdle    = claudeScreen("", "? for shortcuts")
	claudeWorking = func(prompt string) string {
		return claudeScreen("❯ "+prompt+"\n✻ Thinking… \n", "esc to interrupt")
	}
	claudeAnswered = func(prompt string) string {
		return claudeScreen("❯ "+prompt+"\n● Did one step.\n✻ Worked for 1s\n", "? for shortcuts")
	}
)

// claudeAgent plays Claude Code: idle at start, working when a message
// arrives, then turn(run) decides the screen it ends its turn with.
func claudeAgent(turn func(p *tmuxtest.Pane, run int, msg string)) *tmuxtest.Agent {
	return &tmuxtest.Agent{
		Banner: claudeIdle,
		OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeWorking(firstLine(msg)))
			go func() {
				think(30 * time.Millisecond)
				turn(p, run, msg)
			}()
		},
		// The pasted text shows in the input box until Enter.
		ShowInput: func(p *tmuxtest.Pane, typed string) {
			p.SetScreen(claudeTyped("", typed, "? for shortcuts"))
		},
	}
}

// think is the fake agent taking d to think, or to answer. Engine tests
// run in a synctest bubble: d is fake time, which passes at once when
// every goroutine waits; nothing is ordered by it.
func think(d time.Duration) { time.Sleep(d) }

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func claudeOptions(o Options) Options {
	o.Agent = "claude"
	if o.IdleGrace.Duration == 0 {
		o.IdleGrace.Duration = 50 * time.Millisecond
	}
	return o
}

func TestEngineIdleAfterTurnEndsTheIterationWithoutTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) { p.SetScreen(claudeAnswered(firstLine(msg))) })
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		start := time.Now()
		l.expectEnd(0, ReasonMaxIterations, 3)
		if time.Since(start) > 20*time.Second {
			t.Fatalf("took %s", time.Since(start))
		}
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if strings.Count(string(data), "exit=none reason=idle") != 3 || agentCLI.Runs() != 3 {
			t.Fatalf("runs %d, log:\n%s", agentCLI.Runs(), data)
		}
		if st := l.state(); !st.PromptSent || st.AgentState != "idle" {
			t.Fatalf("delivery not confirmed or state not recorded: %+v", st)
		}
	})
}

func TestEngineAPIErrorIsAFailureWithTheErrorInStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errLine := "● API Error: 529 Overloaded. This is a server-side issue, usually temporary"
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n"+errLine+"\n✻ Worked for 1s\n", "? for shortcuts"))
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 10, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.expectEnd(1, ReasonFailed, 5)
		st := l.state()
		if !strings.HasPrefix(string(st.LastError), "● API Error: 529 Overloaded") || st.TotalFailures != 5 {
			t.Fatalf("last error %q, failures %d", st.LastError, st.TotalFailures)
		}
	})
}

func TestEngineNeverTypesIntoADialogAtStart(t *testing.T) {
	for _, c := range []struct{ name, screen, want string }{
		{"trust", "Accessing workspace:\n /p\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n Enter to confirm · Esc to cancel\n", "folder trust dialog"},
		{"api key", "  Detected a custom API key in your environment\n  Do you want to use this API key?\n    1. Yes\n  ❯ 2. No (recommended)\n", "API key dialog"},
		{"bypass", "  WARNING: Claude Code running in Bypass Permissions mode\n  ❯ 1. No, exit\n    2. Yes, I accept\n", "bypass permissions warning"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				agentCLI := &tmuxtest.Agent{Banner: c.screen}
				l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3}))
				code, err := l.run()
				if code != 1 || err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "swarm never answers it") ||
					!strings.Contains(hint.Of(err), "swarm ralph resume w") {
					t.Fatalf("code %d err %v", code, err)
				}
				if st := l.state(); st.ExitReason != ReasonPreflight || st.PromptSent {
					t.Fatalf("state: reason %q delivered %v", st.ExitReason, st.PromptSent)
				}
				if msgs := agentCLI.Messages(); len(msgs) != 0 {
					t.Fatalf("typed into the dialog: %q", msgs)
				}
				for _, id := range l.srv.Windows() {
					if p := l.srv.Window(id); len(p.Pasted) != 0 || len(p.Keys) != 0 {
						t.Fatalf("keys sent to the dialog: %v %q", p.Keys, p.Pasted)
					}
				}
			})
		})
	}
}

func TestEngineDialogMidRunPausesWithTheAgentLeftAtIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Iteration 1 ends its turn; iteration 2 stops at a permission
		// prompt, which Claude Code's profile names as one (not a generic
		// menu), with how to answer it.
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			if run == 1 {
				p.SetScreen(claudeAnswered(firstLine(msg)))
				return
			}
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Bash(rm -rf build)\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n", "esc to cancel"))
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}))
		done := make(chan struct{})
		defer func() { <-done }()
		var reason string
		paused := func() bool { st, err := l.e.RS.Load(); return err == nil && st.Status == state.RalphPaused }
		go func() {
			defer close(done)
			if !within(paused) {
				t.Error("the loop never paused")
				return
			}
			st, _ := l.e.RS.Load()
			reason = string(st.PauseReason)
			// It stays paused with the agent at its dialog well past the
			// inactivity timeout: a dialog is not inactivity.
			if clock.Wait(context.Background(), clock.Real, 5*time.Millisecond, 1500*time.Millisecond, func() bool { return !paused() }) {
				t.Error("the loop did not stay paused at the dialog")
			}
			l.e.RequestPause()
			markKilled(l.e.RS)
		}()
		l.run()
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if !strings.Contains(string(data), "[PAUSE] iteration 2: agent waits at a permission prompt") || strings.Contains(string(data), "TIMEOUT") ||
			!strings.Contains(l.out.String(), `("Do you want to proceed?")`) {
			t.Fatalf("log:\n%s\n%s", data, l.out)
		}
		if len(agentCLI.Messages()) != 2 {
			t.Fatalf("messages %q", agentCLI.Messages())
		}
		<-done
		if !strings.Contains(reason, "permission prompt") || !strings.Contains(reason, "swarm send "+l.e.Name+" 1 (Yes) or swarm attach "+l.e.Name) ||
			!strings.Contains(reason, "then: swarm ralph resume "+l.e.Name) {
			t.Fatalf("pause reason %q", reason)
		}
	})
}

func TestEngineWaitsOutAUsageLimitThenContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(1500 * time.Millisecond).Add(-limitSlack)
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			switch msg {
			case DefaultLimitMessage:
				p.SetScreen(claudeScreen("● Done.\n<promise>COMPLETE</promise>\n✻ Worked for 1s\n", "? for shortcuts"))
				p.Print("<promise>COMPLETE</promise>\n")
			default:
				p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Claude AI usage limit reached|"+epoch(reset)+"\n", "? for shortcuts"))
			}
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}))
		waited := make(chan bool, 1)
		go func() {
			waited <- clock.Wait(context.Background(), clock.Real, 2*time.Millisecond, 4*time.Second, func() bool {
				st, err := l.e.RS.Load()
				return err == nil && st.Status == state.RalphWaiting && !st.WaitingUntil.IsZero()
			})
		}()
		l.expectEnd(0, ReasonComplete, 1)
		if !<-waited {
			t.Fatal("never in status waiting")
		}
		st := l.state()
		if st.TotalFailures != 0 || agentCLI.Runs() != 1 {
			t.Fatalf("failures %d runs %d", st.TotalFailures, agentCLI.Runs())
		}
		msgs := agentCLI.Messages()
		if len(msgs) != 2 || msgs[1] != DefaultLimitMessage {
			t.Fatalf("messages %q", msgs)
		}
	})
}

func TestEngineFatalStartErrorStopsWithTheFix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := &tmuxtest.Agent{OnStart: func(p *tmuxtest.Pane, run int) {
			p.Print("Error: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n")
			p.Exit(1)
		}}
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5}))
		code, err := l.run()
		if code != 1 || err == nil || !strings.Contains(err.Error(), "root/sudo") || !strings.Contains(hint.Of(err), "IS_SANDBOX=1") {
			t.Fatalf("code %d err %v", code, err)
		}
		if st := l.state(); st.CurrentIteration != 1 || !strings.Contains(string(st.LastError), "root/sudo") {
			t.Fatalf("iterations %d last error %q", st.CurrentIteration, st.LastError)
		}
	})
}

func TestLimitUntil(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	st := &state.Ralph{LoopConfig: state.LoopConfig{LimitWait: state.Seconds{Duration: 30 * time.Minute}}}
	if got := limitUntil(agent.Verdict{Reset: now.Add(time.Hour)}, st, now); !got.Equal(now.Add(time.Hour + time.Minute)) {
		t.Errorf("known reset: %s", got)
	}
	for waits, want := range map[int]time.Duration{0: 30 * time.Minute, 1: time.Hour, 2: 2 * time.Hour, 3: 4 * time.Hour, 7: 4 * time.Hour} {
		st.LimitWaits = waits
		if got := limitUntil(agent.Verdict{}, st, now); !got.Equal(now.Add(want)) {
			t.Errorf("%d waits: %s, want +%s", waits, got.Sub(now), want)
		}
	}
}

// epoch is t as the ten-digit Unix time of an older Claude Code's limit
// message. Fake time in a synctest bubble starts in 2000, whose Unix
// times have nine digits: a leading zero makes them ten.
func epoch(t time.Time) string { return fmt.Sprintf("%010d", t.Unix()) }

// Claude Code shows its input box before it handles a paste, and drops an
// Enter pressed before the paste shows: the loop waits for the echo.
func TestEngineWaitsForThePasteToShowBeforeEnter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) { p.SetScreen(claudeAnswered(firstLine(msg))) })
		agentCLI.EchoAfter = 400 * time.Millisecond
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 2, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.expectEnd(0, ReasonMaxIterations, 2)
		if n := agentCLI.Dropped(); n != 0 || len(agentCLI.Messages()) != 2 {
			t.Fatalf("%d Enters dropped, messages %q", n, agentCLI.Messages())
		}
	})
}

// An Enter the agent dropped after all (the prompt still in its box) is
// pressed again.
func TestEnginePressesEnterAgainWhenTheAgentDroppedIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) { p.SetScreen(claudeAnswered(firstLine(msg))) })
		agentCLI.DropEnters = 1
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.expectEnd(0, ReasonMaxIterations, 1)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if agentCLI.Dropped() != 1 || len(agentCLI.Messages()) != 1 || !strings.Contains(string(data), "pressing Enter again") {
			t.Fatalf("dropped %d, messages %q, log:\n%s", agentCLI.Dropped(), agentCLI.Messages(), data)
		}
	})
}

// slowClaude empties its input box on Enter at once but shows working
// only some time later (the real one takes a moment), its last screen
// meanwhile, and records a message that arrived before the previous one
// was answered.
type slowClaude struct {
	*tmuxtest.Agent
	mu       sync.Mutex
	answered int
	early    []string
	last     string // the screen before the message was typed
}

func newSlowClaude(delay time.Duration, answer func(p *tmuxtest.Pane, msg string)) *slowClaude {
	c := &slowClaude{last: claudeIdle}
	c.Agent = claudeAgent(nil)
	// The typed text shows in the box below the transcript so far.
	c.Agent.ShowInput = func(p *tmuxtest.Pane, typed string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p.SetScreen(strings.Replace(c.last, "\n❯\u00a0\n", "\n❯ "+firstLine(typed)+"\n", 1))
	}
	c.Agent.OnMessage = func(p *tmuxtest.Pane, run int, msg string) {
		c.mu.Lock()
		if n := len(c.Agent.Messages()); c.answered < n-1 {
			c.early = append(c.early, firstLine(msg))
		}
		p.SetScreen(c.last)
		c.mu.Unlock()
		go func() {
			think(delay)
			p.SetScreen(claudeWorking(firstLine(msg)))
			think(30 * time.Millisecond)
			answer(p, msg)
			c.mu.Lock()
			c.answered++
			c.last = p.Screen()
			c.mu.Unlock()
		}()
	}
	return c
}

// --same-session: each continuation is answered before the next one is
// typed; a continuation does not inherit the previous turn's idle screen.
func TestEngineSameSessionWaitsForEachContinuationsAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newSlowClaude(time.Second, func(p *tmuxtest.Pane, msg string) { p.SetScreen(claudeAnswered(firstLine(msg))) })
		l := newFakeLoop(t, c, claudeOptions(Options{MaxIterations: 3, SameSession: true, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.expectEnd(0, ReasonMaxIterations, 3)
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.early) != 0 || c.Runs() != 1 || len(c.Messages()) != 3 {
			t.Fatalf("typed before the previous answer: %q; runs %d, messages %d", c.early, c.Runs(), len(c.Messages()))
		}
	})
}

// After the limit message is typed, the old limit stays the last message
// until the agent answers: it is not waited out again, and the message is
// typed once.
func TestEngineTypesTheLimitMessageOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(800 * time.Millisecond).Add(-limitSlack)
		limitLine := "● Claude AI usage limit reached|" + epoch(reset)
		c := newSlowClaude(300*time.Millisecond, func(p *tmuxtest.Pane, msg string) {
			if msg == DefaultLimitMessage {
				p.SetScreen(claudeScreen("● Done.\n<promise>COMPLETE</promise>\n✻ Worked for 1s\n", "? for shortcuts"))
				p.Print("<promise>COMPLETE</promise>\n")
				return
			}
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n"+limitLine+"\n", "? for shortcuts"))
		})
		l := newFakeLoop(t, c, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		l.expectEnd(0, ReasonComplete, 1)
		msgs := c.Messages()
		if len(msgs) != 2 || msgs[1] != DefaultLimitMessage || l.events("LIMIT") != 1 {
			t.Fatalf("messages %q, %d LIMIT lines", msgs, l.events("LIMIT"))
		}
	})
}

// An agent that gets past a limit by itself and completes while the loop
// waits: the signal ends the loop without waiting out the rest.
func TestEngineActsOnASignalDuringALimitWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(time.Hour)
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Claude AI usage limit reached|"+epoch(reset)+"\n", "? for shortcuts"))
			go func() {
				think(200 * time.Millisecond)
				p.Print("<promise>COMPLETE</promise>\n")
			}()
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		start := time.Now()
		l.expectEnd(0, ReasonComplete, 1)
		if time.Since(start) > 30*time.Second || len(agentCLI.Messages()) != 1 {
			t.Fatalf("took %s, messages %q", time.Since(start), agentCLI.Messages())
		}
		if st := l.state(); st.Status == state.RalphWaiting || !st.WaitingUntil.IsZero() {
			t.Fatalf("still waiting after the end: %s until %v", st.Status, st.WaitingUntil)
		}
	})
}

// The watch polls again when the idle grace ends, not a whole poll later.
func TestNextPollMeetsTheIdleGrace(t *testing.T) {
	e := &Engine{Poll: 2 * time.Second, Clock: clock.Real}
	tn := &turn{session: &session{st: &state.Ralph{LoopConfig: state.LoopConfig{IdleGrace: state.Seconds{Duration: 3 * time.Second}}}}}
	if got := e.nextPoll(tn); got != 2*time.Second {
		t.Fatalf("not idle: %s", got)
	}
	tn.idleSince = time.Now().Add(-2500 * time.Millisecond)
	if got := e.nextPoll(tn); got > 600*time.Millisecond || got < minPollGap {
		t.Fatalf("idle 2.5 s of 3: next poll in %s", got)
	}
	tn.idleSince = time.Now().Add(-time.Hour)
	if got := e.nextPoll(tn); got != minPollGap {
		t.Fatalf("grace over: %s", got)
	}
}

// Between polls, output that flowed and then stopped (a turn that ended)
// brings the next poll forward, no sooner than earlyPollGap, while a turn
// may be running: the last poll saw the agent working, or it has not
// worked since the prompt. Output that never flowed, an agent seen idle
// after working, or one the profile cannot read, waits the whole poll;
// the output's last growth is recorded either way.
func TestWaitPollComesEarlyWhenOutputStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "iteration-0001.log")
		if err := os.WriteFile(out, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		e := &Engine{Poll: 2 * time.Second, Clock: clock.Real}
		tn := &turn{session: &session{st: &state.Ralph{LoopConfig: state.LoopConfig{IdleGrace: state.Seconds{Duration: 15 * time.Second}}}, out: out, profile: agent.Claude()}, shown: agent.Working, worked: true}
		start := time.Now()
		e.waitPoll(context.Background(), tn)
		if d := time.Since(start); d < 1900*time.Millisecond {
			t.Fatalf("no output: the poll came after %s, not the whole 2 s", d)
		}
		burst := func() {
			f, _ := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
			defer f.Close()
			for i := 0; i < 3; i++ {
				f.WriteString("✻ Thinking…\n")
				think(150 * time.Millisecond)
			}
		}
		cases := []struct {
			name    string
			profile *agent.Profile
			shown   agent.State
			worked  bool
			early   bool
		}{
			{"seen working", agent.Claude(), agent.Working, true, true},
			{"first turn, not polled working yet", agent.Claude(), "", false, true},
			{"idle after working", agent.Claude(), agent.Idle, true, false},
			{"unknown screen after working", agent.Claude(), "", true, false},
			{"generic profile", agent.Generic(), agent.Working, true, false},
		}
		for _, c := range cases {
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			tn.profile, tn.shown, tn.worked, tn.off, tn.outputAt = c.profile, c.shown, c.worked, fi.Size(), time.Time{}
			go burst()
			start = time.Now()
			e.waitPoll(context.Background(), tn)
			d := time.Since(start)
			switch {
			case c.early && (d < earlyPollGap || d > 1500*time.Millisecond):
				t.Errorf("%s: output flowed for 0.45 s then stopped: the poll came after %s, want %s to 1.5 s", c.name, d, earlyPollGap)
			case !c.early && d < 1900*time.Millisecond:
				t.Errorf("%s: the poll came early (%s)", c.name, d)
			}
			if c.profile.CanTellIdle() && tn.outputAt.Before(start) {
				t.Errorf("%s: the output's growth was not recorded", c.name)
			}
		}
	})
}

// An agent first seen idle went idle when it drew its idle screen (its
// last output), if that came after it was last seen working.
func TestIdleStart(t *testing.T) {
	now := time.Now()
	worked, drew := now.Add(-3*time.Second), now.Add(-2*time.Second)
	cases := []struct {
		name string
		tn   turn
		want time.Time
	}{
		{"never seen working", turn{outputAt: drew}, now},
		{"output after the working poll", turn{workingAt: worked, outputAt: drew}, drew},
		{"no output since", turn{workingAt: drew, outputAt: worked}, drew},
	}
	for _, c := range cases {
		if got := idleStart(&c.tn, now); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got.Sub(now), c.want.Sub(now))
		}
	}
}

// A turn that thinks longer than the inactivity timeout behind a screen
// that does not change (Claude Code's working screen, its spinner caught
// on one frame) is work, not inactivity: the iteration ends when the turn
// does, with no TIMEOUT.
func TestEngineWorkingAgentIsNeverInactive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const thinking = 2500 * time.Millisecond // 2.5 inactivity timeouts
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			think(thinking)
			p.SetScreen(claudeAnswered(firstLine(msg)))
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}))
		l.expectEnd(0, ReasonMaxIterations, 1)
		if n := l.events("TIMEOUT"); n != 0 {
			data, _ := os.ReadFile(l.e.RS.LogPath())
			t.Fatalf("a working agent timed out:\n%s", data)
		}
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if !strings.Contains(string(data), "reason=idle") {
			t.Fatalf("the iteration did not end with the turn:\n%s", data)
		}
	})
}

// claudePermission is Claude Code's permission prompt for a tool call, a
// numbered menu under its cursor.
const claudePermission = " Bash command\n   ls -la\n Do you want to proceed?\n ❯ 1. Yes\n   2. No, and tell Claude what to do differently (esc)\n"

// dialogLoop runs a loop whose agent asks for a permission right after
// the prompt, and goes on (prints COMPLETE, ends its turn) once answered
// is closed: the human answered the dialog.
func dialogLoop(t *testing.T) (l *fakeLoop, answered chan struct{}, done chan int) {
	answered = make(chan struct{})
	agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
		p.SetScreen(claudePermission)
		<-answered
		p.Print("● Listed the files. <promise>COMPLETE</promise>\n")
		p.SetScreen(claudeAnswered(firstLine(msg)))
	})
	l = newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}))
	done = make(chan int, 1)
	go func() { code, _ := l.run(); done <- code }()
	waitFor(t, "the loop to pause at the dialog", func() bool {
		st := l.state()
		return st.Status == state.RalphPaused && strings.Contains(string(st.PauseReason), "menu awaiting a choice")
	})
	return l, answered, done
}

// A permission prompt right after the prompt's Enter (a tool call at
// once) is a pause, not a pre-flight failure: the agent has the prompt.
// Answered, then resumed: the iteration was held meanwhile (it did not end
// on the COMPLETE the agent printed while the loop was paused), and goes
// on to the end after the resume.
func TestEngineDialogAfterThePromptPausesAnswerThenResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, answered, done := dialogLoop(t)
		close(answered)
		holdsFor(t, "the iteration waits for the resume", 300*time.Millisecond, func() bool {
			st := l.state()
			return st.Status == state.RalphPaused && st.IterationActive && l.events("END") == 0
		})
		if err := ResumeLoop(l.m, "w"); err != nil {
			t.Fatal(err)
		}
		if code := <-done; code != 0 || l.state().ExitReason != ReasonComplete || l.state().CurrentIteration != 1 {
			t.Fatalf("code %d, state %+v\n%s", code, l.state(), l.out)
		}
	})
}

// Resumed first, answered next: the dialog still on screen after the
// resume pauses nothing, and the loop ends when the agent is done.
func TestEngineDialogAfterThePromptResumeThenAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, answered, done := dialogLoop(t)
		if err := ResumeLoop(l.m, "w"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the loop to run again", func() bool { return l.state().Status == state.RalphRunning })
		// Polls that see the same dialog again (every 5 ms) pause nothing.
		holdsFor(t, "the loop stays running", 100*time.Millisecond, func() bool { return l.state().Status == state.RalphRunning })
		close(answered)
		if code := <-done; code != 0 || l.state().ExitReason != ReasonComplete || l.events("PAUSE") != 1 {
			t.Fatalf("code %d, state %+v\n%s", code, l.state(), l.out)
		}
	})
}

// A prompt taken for a slash command ("● Unknown command: /fix", nothing
// sent to the model) fails the same way every time: the loop stops at the
// first, with the fix, instead of five failures in a row.
func TestEngineUnknownSlashCommandStopsWithTheFix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Unknown command: /fix\n", "? for shortcuts"))
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		code, err := l.run()
		st := l.state()
		if code != 1 || st.ExitReason != ReasonFailed || st.CurrentIteration != 1 || !strings.Contains(string(st.ExitDetail), "Unknown command: /fix") ||
			!strings.Contains(string(st.ExitHint), "starts with '/'") || !strings.Contains(string(st.ExitHint), "swarm ralph resume w") || err == nil {
			t.Fatalf("code %d err %v state %+v\n%s", code, err, st, l.out)
		}
	})
}

// An agent that never shows it got the prompt (it sat in the input box,
// nothing reached the model) until the iteration ends by silence: a WARN
// and a failure, never a silent success.
func TestEngineUndeliveredPromptIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// It shows the pasted text in its box and takes the Enter, then sits
		// at an empty box: it never works.
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {})
		agentCLI.OnMessage = func(p *tmuxtest.Pane, run int, msg string) { p.SetScreen(claudeIdle) }
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 2, InactivityTimeout: state.WholeSeconds{Duration: time.Second}}))
		l.expectEnd(0, ReasonMaxIterations, 2)
		st := l.state()
		data, _ := os.ReadFile(l.e.RS.LogPath())
		if st.TotalFailures != 2 || strings.Count(string(data), "never showed it received the prompt") != 2 {
			t.Fatalf("failures %d\n%s", st.TotalFailures, data)
		}
	})
}

// Claude Code 2.1.332 continues by itself at a usage limit's reset
// ("Continuing automatically at 8pm"): once the reset is past and the
// agent works again, the wait is over, and nothing is typed into it (the
// loop's own continuation would be a second one, typed into its work).
func TestEngineAgentThatContinuesByItselfAfterALimitIsNotTypedInto(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Now().Add(time.Second)
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Claude AI usage limit reached|"+epoch(reset)+"\n", "? for shortcuts"))
			think(time.Until(reset) + 200*time.Millisecond)
			p.SetScreen(claudeWorking(firstLine(msg))) // its automatic continue
			think(2 * time.Minute)                     // longer than the loop's slack after a reset
			p.SetScreen(claudeScreen("● Done.\n<promise>COMPLETE</promise>\n✻ Worked for 2m\n", "? for shortcuts"))
			p.Print("<promise>COMPLETE</promise>\n")
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		code, err := l.e.Run(ctx)
		st := l.state()
		if code != 0 || err != nil || st.ExitReason != ReasonComplete || st.CurrentIteration != 1 {
			t.Fatalf("exit %d (%v), reason %q after %d iterations\n%s", code, err, st.ExitReason, st.CurrentIteration, l.out)
		}
		if msgs := agentCLI.Messages(); len(msgs) != 1 {
			t.Errorf("messages %q: the loop typed into an agent that had continued by itself", msgs)
		}
		if log, _ := os.ReadFile(l.e.RS.LogPath()); !strings.Contains(string(log), "the agent continued by itself") {
			t.Errorf("iterations.log:\n%s", log)
		}
	})
}

// Claude Code 2.1.332 at a usage limit, as the real CLI draws it (make
// test-agents, TestLoopUsageLimitWaitsAndContinues): "⎿  You've hit your
// 5-hour limit · resets T", then "● Usage limit reached · set to
// continue automatically at T"; the continuation typed into it cancels
// its own ("● Automatic continue cancelled · /rate-limit-options to wait
// again"). Those lines stay on its screen above the continuation: none
// of them is a new limit, whichever the agent drew first and whether the
// loop typed "continue" or the agent continued by itself. A limit drawn
// after the resume, with a later reset, is one.
func TestEngineLimitLinesFromBeforeAResumeAreNoNewLimit(t *testing.T) {
	// synctest's clock starts at midnight UTC: the limit resets a minute on.
	const (
		hit       = "  ⎿  You've hit your 5-hour limit · resets 12:01am (UTC)\n     /upgrade to increase your usage limit.\n"
		auto      = "● Usage limit reached · set to continue automatically at 12:01am\n"
		cancelled = "● Automatic continue cancelled · /rate-limit-options to wait again\n"
		answer    = "● Continued and finished.\n  <promise>COMPLETE</promise>\n✻ Worked for 0s · done 12:02 AM\n"
		second    = "  ⎿  You've hit your 5-hour limit · resets 12:04am (UTC)\n"
	)
	for _, tc := range []struct {
		name string
		// autoFirst: the agent draws its automatic continue's line before
		// the loop types (else just after).
		autoFirst, itself, newLimit bool
		limits, messages            int
	}{
		{name: "typed, auto line drawn before", autoFirst: true, limits: 1, messages: 2},
		{name: "typed, auto line drawn after", limits: 1, messages: 2},
		{name: "the agent continued by itself", autoFirst: true, itself: true, limits: 1, messages: 1},
		{name: "a new limit after the resume", autoFirst: true, newLimit: true, limits: 2, messages: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reset := time.Now().Add(time.Minute)
				var mu sync.Mutex
				screen := ""
				show := func(p *tmuxtest.Pane, transcript, footer string) {
					mu.Lock()
					screen = transcript
					mu.Unlock()
					p.SetScreen(claudeScreen(transcript, footer))
				}
				shown := func() string { mu.Lock(); defer mu.Unlock(); return screen }
				finish := func(p *tmuxtest.Pane, before string) {
					show(p, before, "esc to interrupt")
					think(500 * time.Millisecond)
					show(p, before+answer, "? for shortcuts")
					p.Print("Continued and finished.\n<promise>COMPLETE</promise>\n")
				}
				continues := 0
				agentCLI := &tmuxtest.Agent{
					Banner: claudeIdle,
					ShowInput: func(p *tmuxtest.Pane, typed string) {
						p.SetScreen(claudeTyped(shown(), typed, "? for shortcuts"))
					},
					OnMessage: func(p *tmuxtest.Pane, run int, msg string) {
						if msg != DefaultLimitMessage {
							limited := "❯ " + firstLine(msg) + "\n" + hit + "\n"
							show(p, limited, "? for shortcuts")
							go func() {
								think(time.Until(reset) + 2*time.Second)
								if tc.autoFirst {
									show(p, limited+auto+"\n", "? for shortcuts")
								}
								if tc.itself {
									think(time.Second)
									finish(p, limited+auto+"\n❯ continue\n\n") // its own continue
								}
							}()
							return
						}
						continues++
						n := continues
						go func() {
							// The typed continuation shows below its limit lines
							// before the agent works on it, then the lines it
							// draws for it, a poll or more apart.
							before := shown()
							show(p, before+"❯ continue\n\n", "? for shortcuts")
							think(time.Second)
							if !tc.autoFirst {
								before += auto + "\n"
								show(p, before+"❯ continue\n\n", "? for shortcuts")
								think(time.Second)
							}
							show(p, before+cancelled+"\n❯ continue\n\n", "? for shortcuts")
							think(time.Second)
							if tc.newLimit && n == 1 {
								show(p, before+cancelled+"\n❯ continue\n"+second+"\n", "? for shortcuts")
								return
							}
							finish(p, before+cancelled+"\n❯ continue\n\n")
						}()
					},
				}
				l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				code, err := l.e.Run(ctx)
				st := l.state()
				log, _ := os.ReadFile(l.e.RS.LogPath())
				if code != 0 || err != nil || st.ExitReason != ReasonComplete || st.CurrentIteration != 1 {
					t.Fatalf("exit %d (%v), reason %q after %d iterations\n%s\n%s", code, err, st.ExitReason, st.CurrentIteration, log, l.out)
				}
				if n := l.events("LIMIT"); n != tc.limits {
					t.Errorf("%d limits waited out, want %d: iterations.log:\n%s", n, tc.limits, log)
				}
				if msgs := agentCLI.Messages(); len(msgs) != tc.messages {
					t.Errorf("messages %q, want %d", msgs, tc.messages)
				}
				if tc.newLimit && !strings.Contains(string(log), "until=2000-01-01T00:05:00") {
					t.Errorf("the second limit is not waited out until its reset: iterations.log:\n%s", log)
				}
			})
		})
	}
}
