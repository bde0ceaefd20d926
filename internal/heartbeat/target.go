package heartbeat

import (
	"errors"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

// Look is what a look at the worker found.
type Look struct {
	// Gone, when set, says why the worker is gone for good: the
	// heartbeat ends.
	Gone string
	// Skip, when set, says why there is nothing to type into now (a ralph
	// worker between iterations): this beat is skipped, the heartbeat
	// goes on.
	Skip string
	// Screen is the visible pane (only when asked for).
	Screen string
}

// Target is the worker a heartbeat beats into.
type Target interface {
	// Look checks the worker; with screen it also reads its pane.
	Look(screen bool) (Look, error)
	// Send types text into the pane found by the last Look, then Enter.
	Send(text string) error
}

// tmuxTarget is a worker of the registry under root.
//
// It talks to tmux directly rather than through internal/worker: worker's
// kill and clean are to end heartbeats (StopFor), and importing worker here
// would make that a cycle. What it does is what worker.Refresh and
// worker.SendText (with Raw) do.
type tmuxTarget struct {
	name   string
	reg    *state.Store
	tc     *tmux.Client
	window string
}

func newTmuxTarget(root, name string) *tmuxTarget {
	return &tmuxTarget{name: name, reg: state.NewStore(root, nil)}
}

// Look finds the worker's window. A worker whose record is gone, that is
// not a tmux worker, whose window is gone, or whose command has exited is
// gone for good; except a ralph worker while its loop is active: the loop
// respawns the pane in the same window every iteration, and the pane is
// dead (or, while a monitor recovers, the window missing) in between. A
// loop state that cannot be read counts as active (it is read without
// internal/state's repair, which a reader here must not do): a heartbeat
// is never ended on a guess.
func (t *tmuxTarget) Look(screen bool) (Look, error) {
	w, err := t.reg.Get(t.name)
	if errors.Is(err, state.ErrNotFound) {
		return Look{Gone: "the worker's record is gone"}, nil
	}
	if err != nil {
		return Look{}, err
	}
	if w.Tmux == nil {
		return Look{Gone: "the worker is not a tmux worker"}, nil
	}
	tc := tmux.NewFor(worker.Server(w))
	win, ok, err := worker.FindWindow(tc, w)
	if err != nil {
		return Look{}, err
	}
	ralph := w.IsRalph()
	switch {
	case !ok && ralph && t.reg.Ralph(t.name).ActiveOrUnreadable():
		return Look{Skip: "the ralph loop's window is not there"}, nil
	case !ok:
		return Look{Gone: "the worker's window is gone"}, nil
	case win.AllDead && !ralph:
		return Look{Gone: "the worker has exited"}, nil
	}
	t.tc, t.window = tc, win.WindowID
	if !screen {
		return Look{}, nil
	}
	ps, text, err := tc.Poll(win.WindowID)
	if tmux.IsNotFound(err) {
		return Look{Skip: "the worker's window vanished"}, nil
	}
	if err != nil {
		return Look{}, err
	}
	if ps.Dead {
		return Look{Skip: "the worker's pane is not running (between ralph iterations)"}, nil
	}
	if kind, _, stuck := agent.For(w.Cmd).Stuck(text); stuck {
		// The message and its Enter would answer it (Enter takes a
		// menu's default): a dialog is for a human.
		return Look{Skip: "the agent shows " + agent.WithArticle(kind)}, nil
	}
	return Look{Screen: text}, nil
}

// Send types the text literally and presses Enter, without clearing the
// input first (as swarm.py's heartbeat): clearing sends Escape, which
// interrupts an agent such as Claude Code in the middle of its work, and a
// nudge must be harmless to a working agent.
func (t *tmuxTarget) Send(text string) error {
	if t.tc == nil {
		return errors.New("no window to send to")
	}
	return t.tc.TypeText(t.window, text, true)
}
