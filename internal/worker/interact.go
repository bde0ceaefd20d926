package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/tmux"
)

// KeyGap separates the pre-clear keys from the text: agents parse ESC
// followed quickly by another key as one Alt chord.
var KeyGap = 60 * time.Millisecond

// running returns a running tmux worker, or the error commands print: a
// worker whose window exists (withWindow) and runs.
func (m *Manager) running(name string) (*Live, error) {
	l, err := m.withWindow(name)
	if err != nil {
		return nil, err
	}
	if !l.Running() {
		return nil, notRunning(name)
	}
	return l, nil
}

// SendOptions control send.
type SendOptions struct {
	NoEnter bool
	// Raw skips clearing pending input (Escape, Ctrl-U) first.
	Raw bool
}

// Send types text into the worker's pane literally, then Enter. Multi-line
// text arrives as one bracketed paste, so the agent sees one message.
//
// Pending input is cleared first (Escape, Ctrl-U) unless o.Raw, or unless
// the agent shows a dialog or menu: there Escape is an answer (Claude Code
// takes it for "No"), and what is typed is the answer the user means.
func (m *Manager) Send(name, text string, o SendOptions) error {
	l, err := m.running(name)
	if err != nil {
		return err
	}
	tc := m.tmux(&l.Worker)
	if !o.Raw && atDialog(tc, l.WindowID, l.Cmd) {
		o.Raw = true
	}
	return SendText(tc, l.WindowID, text, o)
}

// atDialog reports whether the pane shows a dialog or menu its command's
// agent profile (or the generic one) knows.
func atDialog(tc Tmux, id string, cmd []string) bool {
	_, screen, err := tc.Poll(id)
	if err != nil {
		return false
	}
	_, _, stuck := agent.For(cmd).Stuck(screen)
	return stuck
}

// SendText delivers text to a pane as Send does.
func SendText(tc Keyboard, target, text string, o SendOptions) error {
	if !o.Raw {
		if err := tc.SendKeys(target, "Escape"); err != nil {
			return err
		}
		clock.Real.Sleep(context.Background(), KeyGap)
		if err := tc.SendKeys(target, "C-u"); err != nil {
			return err
		}
		clock.Real.Sleep(context.Background(), KeyGap)
	}
	return tc.TypeText(target, text, !o.NoEnter)
}

// Interrupt sends Ctrl-C once.
func (m *Manager) Interrupt(name string) error { return m.keys(name, "C-c") }

// EOF sends Ctrl-D.
func (m *Manager) EOF(name string) error { return m.keys(name, "C-d") }

func (m *Manager) keys(name string, keys ...string) error {
	l, err := m.running(name)
	if err != nil {
		return err
	}
	return m.tmux(&l.Worker).SendKeys(l.WindowID, keys...)
}

// Peek returns the last lines of the worker's pane; a stopped worker
// whose window is kept (its command exited) shows its last screen.
func (m *Manager) Peek(name string, lines int) (string, error) {
	l, err := m.withWindow(name)
	if err != nil {
		return "", err
	}
	return peekWindow(m.tmux(&l.Worker), l.WindowID, lines)
}

// withWindow returns a tmux worker whose window exists (running, or
// stopped with its dead pane kept), or the error commands print.
func (m *Manager) withWindow(name string) (*Live, error) {
	l, err := m.Status(name)
	if err != nil {
		return nil, err
	}
	if l.Tmux == nil {
		return nil, notTmux(name)
	}
	if l.WindowID == "" {
		return nil, notRunning(name)
	}
	return l, nil
}

// DefaultPeekLines is peek's default (swarm.py's -n 30).
const DefaultPeekLines = 30

// peekWindow captures the last lines from the scrollback too: tmux moves
// a dead pane's screen into its history when it shows "Pane is dead".
func peekWindow(tc Tmux, id string, lines int) (string, error) {
	if lines <= 0 {
		lines = DefaultPeekLines
	}
	out, err := tc.Capture(id, tmux.CaptureOptions{Start: fmt.Sprint(-lines)})
	if err != nil {
		return "", err
	}
	return lastLines(out, lines), nil
}

// PeekResult is one worker's screen for peek --all.
type PeekResult struct {
	Name string
	Text string
}

// PeekAll returns the screens of all running tmux workers.
func (m *Manager) PeekAll(lines int) ([]PeekResult, error) {
	live, err := m.RunningTmux()
	if err != nil {
		return nil, err
	}
	var out []PeekResult
	for _, l := range live {
		text, err := peekWindow(m.tmux(&l.Worker), l.WindowID, lines)
		if err != nil {
			continue
		}
		out = append(out, PeekResult{Name: l.Name, Text: text})
	}
	return out, nil
}

// RunningTmux returns the running tmux workers (the targets of --all for
// peek, send and interrupt).
func (m *Manager) RunningTmux() ([]Live, error) {
	live, err := m.List()
	if err != nil {
		return nil, err
	}
	var out []Live
	for _, l := range live {
		if l.Tmux != nil && l.Running() && l.WindowID != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// Attach replaces this process with a tmux client on the worker's window.
// ready, if not nil, is asked once the worker is known to be attachable
// (a running tmux worker) and before tmux runs: what attach needs of the
// caller (a terminal) is reported only for a worker it could attach to.
func (m *Manager) Attach(name string, ready func() error) error {
	l, err := m.running(name)
	if err != nil {
		return err
	}
	if ready != nil {
		if err := ready(); err != nil {
			return err
		}
	}
	return m.tmux(&l.Worker).Attach(l.Tmux.Session, l.WindowID)
}
