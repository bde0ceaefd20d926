package ralph

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// A loop that ended on its cost budget is not resumed while the budget
// stays used up (it would say it resumed, then stop before running
// anything): the refusal changes nothing and its hint raises the budget.
// Raised as the hint says, the loop resumes and runs its next iteration.
func TestResumeOfAUsedUpCostBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var spending sync.WaitGroup
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			spending.Add(1)
			defer spending.Done()
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			for i := 1; i <= 20 && !p.Dead(); i++ {
				think(100 * time.Millisecond)
				a.cost(p, 0.01*float64(i)) // a long turn spending on
			}
		})
		l := hookedLoop(t, a, Options{MaxIterations: 5, MaxCost: 0.05})
		l.expectEnd(0, ReasonMaxCost, 1)
		spending.Wait()
		before := l.state()
		log, _ := os.ReadFile(l.e.RS.LogPath())

		err := ResumeLoop(l.m, "w")
		if err == nil || !strings.HasPrefix(err.Error(), "ralph loop for 'w' has used its cost budget ($0.05, spent $0.0") {
			t.Fatalf("resume of a loop that used its cost budget: %v", err)
		}
		fix := hint.Of(err)
		m := regexp.MustCompile(`^raise it: swarm ralph set w --max-cost ([0-9.]+), then: swarm ralph resume w$`).FindStringSubmatch(fix)
		if m == nil {
			t.Fatalf("hint %q", fix)
		}
		after := l.state()
		logAfter, _ := os.ReadFile(l.e.RS.LogPath())
		if after.Status != before.Status || after.ExitReason != ReasonMaxCost || string(logAfter) != string(log) {
			t.Fatalf("the refused resume changed the loop: %s %s\n%s", after.Status, after.ExitReason, logAfter)
		}

		// The fix as printed: the budget the hint names, then resume.
		raised, err := strconv.ParseFloat(m[1], 64)
		if err != nil || raised <= *before.CostUSD {
			t.Fatalf("the hint's budget %q is not above the %v spent", m[1], *before.CostUSD)
		}
		if _, err := SetLoop(l.m, "w", Settings{MaxCost: &raised}); err != nil {
			t.Fatal(err)
		}
		// The test's engine is the loop's monitor: it holds the monitor
		// lock while resume runs (so resume starts no background one),
		// then runs the loop on in-process.
		held, err := lockMonitor(l.e.RS)
		if err != nil {
			t.Fatal(err)
		}
		err = ResumeLoop(l.m, "w")
		if rerr := held.Release(); rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			t.Fatalf("resume after the budget was raised: %v", err)
		}
		if st := l.state(); st.Status != state.RalphRunning || st.ExitReason != "" {
			t.Fatalf("after the resume: %s %q", st.Status, st.ExitReason)
		}
		l.expectEnd(0, ReasonMaxCost, 2)
		spending.Wait()
		if st := l.state(); *st.CostUSD < raised || a.Runs() != 2 {
			t.Errorf("cost %v of %v, %d agents started", *st.CostUSD, raised, a.Runs())
		}
	})
}

// The token budget alike; and a budget not used up, or a cost no agent
// reported, does not hold a resume back.
func TestNotResumableBudgets(t *testing.T) {
	t.Parallel()
	cost := func(c float64) *float64 { return &c }
	ended := func(reason state.ExitReason, maxCost float64, spent *float64, maxTokens, tokens int64) *state.Ralph {
		st := &state.Ralph{}
		st.Status, st.ExitReason = state.RalphStopped, reason
		st.MaxIterations, st.CurrentIteration = 10, 3
		st.MaxCost, st.CostUSD = maxCost, spent
		st.MaxTokens, st.InputTokens, st.OutputTokens = maxTokens, tokens/2, tokens-tokens/2
		return st
	}
	for _, c := range []struct {
		name     string
		st       *state.Ralph
		err, fix string
	}{
		{"tokens used up", ended(ReasonMaxTokens, 0, nil, 500_000, 512_345),
			"ralph loop for 'w' has used its token budget (500000, spent 512345)",
			"raise it: swarm ralph set w --max-tokens 1012345, then: swarm ralph resume w"},
		{"cost used up", ended(ReasonMaxCost, 5, cost(5.25), 0, 0),
			"ralph loop for 'w' has used its cost budget ($5.00, spent $5.25)",
			"raise it: swarm ralph set w --max-cost 10.25, then: swarm ralph resume w"},
		{"tokens raised", ended(ReasonMaxTokens, 0, nil, 2_000_000, 512_345), "", ""},
		{"cost raised", ended(ReasonMaxCost, 10, cost(5.25), 0, 0), "", ""},
		{"no cost reported", ended(ReasonFailed, 5, nil, 0, 0), "", ""},
		{"budget used up by a failed loop", ended(ReasonFailed, 0, nil, 100, 100),
			"ralph loop for 'w' has used its token budget (100, spent 100)",
			"raise it: swarm ralph set w --max-tokens 200, then: swarm ralph resume w"},
	} {
		err := notResumable("w", c.st, time.Now())
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.err != "" && (err == nil || err.Error() != c.err || hint.Of(err) != c.fix):
			t.Errorf("%s: got %v (hint %q), want %q (hint %q)", c.name, err, hint.Of(err), c.err, c.fix)
		}
	}
}
