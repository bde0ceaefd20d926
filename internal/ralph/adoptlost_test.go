package ralph

// Issue 27, items 1 and 5: swarm restore's monitor adopts an iteration
// whose window went with its tmux server and its monitor (a reboot).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// leftByADeadMonitor sets the loop's state as a monitor leaves it when it
// dies with the tmux server (a reboot) during iteration 1, after typing
// the prompt and pressing Enter: prompt_entered, and prompt_delivered if
// it had seen the agent take the prompt; the agent's events, and its exit
// status if its wrapper recorded one. The window is gone.
func leftByADeadMonitor(t *testing.T, l *fakeLoop, delivered bool, events []agent.Event, exit string) {
	t.Helper()
	prompt := "do the next task\n"
	sum, size, err := l.e.RS.SaveDelivered(prompt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.e.RS.Update(func(s *state.Ralph) error {
		s.CurrentIteration, s.IterationActive = 1, true
		s.LastIterationStart = state.Timestamp{Time: time.Now()}
		s.PromptSHA256, s.PromptBytes = sum, size
		s.PromptEntered, s.PromptSent = !delivered, delivered
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	logEvent(l.e.RS, EventStart, "iteration 1/1")
	out := outputPath(l.e.RS, 1)
	if err := l.e.RS.MakeDir(filepath.Dir(out)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(prompt+"working on it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		line, _ := json.Marshal(ev)
		if err := state.AppendEvent(eventsPath(l.e.RS, 1), line, false); err != nil {
			t.Fatal(err)
		}
	}
	if exit != "" {
		if err := os.WriteFile(exitPath(l.e.RS, 1), []byte(exit+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l.srv.KillServer()
}

// swarm restore of a loop whose agent had taken its prompt ends that
// iteration window-lost, not as a prompt never received and not as a
// failure: whether the agent reported taking it (Claude Code's
// UserPromptSubmit, which the dead monitor never read) or the monitor
// had seen it (prompt_delivered). An agent that showed nothing of the
// kind is still "never showed it received the prompt", a failure.
func TestEngineRestoreOfATakenPromptIsWindowLost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		delivered bool
		events    []agent.Event
		failures  int
	}{
		{"reported", false, []agent.Event{{Name: agent.EventSessionStart, Kind: "startup"}, {Name: agent.EventUserPromptSubmit}}, 0},
		{"seen", true, nil, 0},
		{"never shown", false, []agent.Event{{Name: agent.EventSessionStart, Kind: "startup"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newFakeLoop(t, claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {}), claudeOptions(Options{MaxIterations: 1}))
				l.e.Hooks = testHooks
				leftByADeadMonitor(t, l, tc.delivered, tc.events, "")
				l.expectEnd(0, ReasonMaxIterations, 1)
				data, _ := os.ReadFile(l.e.RS.LogPath())
				never := strings.Contains(string(data), "never showed it received the prompt")
				if !strings.Contains(string(data), "[END] iteration 1 exit=none reason=window-lost") || never != (tc.failures > 0) {
					t.Fatalf("log:\n%s\n%s", data, l.out)
				}
				if st := l.state(); st.TotalFailures != tc.failures {
					t.Fatalf("failures %d, want %d\n%s", st.TotalFailures, tc.failures, data)
				}
			})
		})
	}
}

// swarm restore keeps the exit status the agent's wrapper recorded before
// the window went: the iteration ends as that exit (exit=3, a failure),
// as ralph resume ends it when the window is still there.
func TestEngineRestoreKeepsTheRecordedExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLoop(t, claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {}), claudeOptions(Options{MaxIterations: 1}))
		leftByADeadMonitor(t, l, true, nil, "3")
		l.expectEnd(0, ReasonMaxIterations, 1)
		data, _ := os.ReadFile(l.e.RS.LogPath())
		st := l.state()
		if !strings.Contains(string(data), "[END] iteration 1 exit=3 ") || st.TotalFailures != 1 || st.LastExitCode == nil || *st.LastExitCode != 3 {
			t.Fatalf("failures %d, last exit %v\n%s", st.TotalFailures, st.LastExitCode, data)
		}
	})
}
