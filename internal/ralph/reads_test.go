package ralph

import (
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
	"github.com/swarmtools/swarm/internal/worker"
)

// The engine decides between polls on the loop state as it last read or
// wrote it; it reads the file again only at a poll, where another command
// (pause, kill, ralph set) may have changed it.

// TestEngineBudgetLeftReadsNoFile: budgetLeft, which every wait consults,
// reads no file, and a new budget written by another process (ralph set)
// counts once the engine has looked at the state again.
func TestEngineBudgetLeftReadsNoFile(t *testing.T) {
	t.Parallel()
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxTime: state.Seconds{Duration: time.Hour}})
	st := l.state()
	l.e.RS.KeepFallback(st) // as Run does
	before, _ := l.e.RS.Reads()
	for range 50 {
		if left := l.e.budgetLeft(); left <= 59*time.Minute || left > time.Hour {
			t.Fatalf("budget left %s of 1h", left)
		}
	}
	if looks, _ := l.e.RS.Reads(); looks != before {
		t.Fatalf("50 budgetLeft calls read the state file %d times; want none", looks-before)
	}
	// ralph set --max-time 2h, from another process.
	two := 2 * time.Hour
	if _, err := SetLoop(worker.New(l.m.Store.Root, nil), "w", Settings{MaxTime: &two}); err != nil {
		t.Fatal(err)
	}
	if left := l.e.budgetLeft(); left > time.Hour {
		t.Fatalf("budget left %s before the engine looked again", left)
	}
	if _, err := l.e.RS.Load(); err != nil { // the next poll's look
		t.Fatal(err)
	}
	if left := l.e.budgetLeft(); left <= time.Hour {
		t.Fatalf("budget left %s after ralph set --max-time 2h and a poll", left)
	}
}

// TestEngineLooksAtTheStateOncePerPoll runs one iteration of an agent that
// works until the inactivity timeout and counts the engine's reads of the
// loop state: at most one look per poll of the agent's pane (the watch's,
// where a kill or pause is noticed) plus the one between iterations. The
// read-modify-writes (Update) are counted apart: each must read the file
// under its lock, so as not to undo another command's change.
func TestEngineLooksAtTheStateOncePerPoll(t *testing.T) {
	t.Parallel()
	agent := &tmuxtest.Agent{OnMessage: func(p *tmuxtest.Pane, run int, msg string) { p.Print("working on it\n") }}
	l := newFakeLoop(t, agent, Options{MaxIterations: 1, InactivityTimeout: state.WholeSeconds{Duration: time.Second}})
	l.expectEnd(0, ReasonMaxIterations, 1)
	looks, changes := l.e.RS.Reads()
	polls := l.srv.Calls["Poll"]
	t.Logf("one iteration: %d looks, %d read-modify-writes, %d polls", looks, changes, polls)
	if looks > int64(polls)+1 {
		t.Fatalf("%d looks at the loop state in one iteration of %d polls; want at most %d", looks, polls, polls+1)
	}
}
