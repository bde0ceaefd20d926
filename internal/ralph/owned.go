package ralph

import (
	"errors"

	"github.com/swarmtools/swarm/internal/tmux"
)

// errNotOurs is what a look at the session's window returns when the
// window at its id is not the one the session's agent runs in: window ids
// start again from @0 with every tmux server, so after the server was
// killed (or crashed, or the machine rebooted) and another started, the
// id may name another worker's window. Only a new server can do that (a
// server never hands an id out twice), so the iteration's agent went with
// its server (EndServerLost).
var errNotOurs = errors.New("the window's id names another tmux server's window: the tmux server went away")

// ownWindow is a session's tmux client: every call about the session's
// window first checks the window is still the one the session started
// its agent in (owns): the window's tag is the token the record gave it,
// and the server answering is the one first seen to hold it. A window
// that is not is never polled as the agent's, typed into, piped from,
// respawned or killed, and its process is never stopped (stopAgent finds
// no pane to stop). Calls about other windows go through as they are.
type ownWindow struct {
	Tmux
	s *session
}

// Poll polls the pane, and fails with errNotOurs when the session's
// window at that id is not the session's.
func (o ownWindow) Poll(target string) (tmux.PaneStatus, string, error) {
	ps, screen, err := o.Tmux.Poll(target)
	if err != nil || target != o.s.window {
		return ps, screen, err
	}
	if err := o.s.owns(ps); err != nil {
		return tmux.PaneStatus{}, "", err
	}
	return ps, screen, nil
}

// check looks at target before a call that acts on it: the session's
// window must be the session's (a poll, owns).
func (o ownWindow) check(target string) error {
	if target == "" || target != o.s.window {
		return nil
	}
	_, _, err := o.Poll(target)
	return err
}

func (o ownWindow) Paste(target, text string) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.Paste(target, text)
}

func (o ownWindow) SendKeys(target string, keys ...string) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.SendKeys(target, keys...)
}

func (o ownWindow) TypeText(target, text string, enter bool) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.TypeText(target, text, enter)
}

func (o ownWindow) PipeTo(target, path string, via []string) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.PipeTo(target, path, via)
}

func (o ownWindow) Respawn(target string, spec tmux.RespawnSpec) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.Respawn(target, spec)
}

// Capture: a promise tag is confirmed only on the session's own pane,
// never on another server's window that took its id.
func (o ownWindow) Capture(target string, opts tmux.CaptureOptions) (string, error) {
	if err := o.check(target); err != nil {
		return "", err
	}
	return o.Tmux.Capture(target, opts)
}

func (o ownWindow) KillWindow(target string) error {
	if err := o.check(target); err != nil {
		return err
	}
	return o.Tmux.KillWindow(target)
}

// setWindow makes id (with the token its record gave it, "" for a record
// of an older swarm) the session's window; the server holding it is
// learned from the first poll of it.
func (s *session) setWindow(id, token string) {
	s.window, s.token, s.server = id, token, ""
}

// owns reports whether the pane status ps, polled at the session's
// window id, is the session's window: it carries the session's token
// (when the record has one), and comes from the server that answered the
// first poll of it.
func (s *session) owns(ps tmux.PaneStatus) error {
	if s.token != "" && ps.Tag != s.token {
		return errNotOurs
	}
	switch {
	case ps.Server == "":
		// Nothing to compare.
	case s.server == "":
		s.server = ps.Server
	case ps.Server != s.server:
		return errNotOurs
	}
	return nil
}

// serverReplaced reports, after the session's window was not found,
// whether the tmux server that held it is gone: none answers now, or
// another one does. A window closed on a server that goes on is not.
func (s *session) serverReplaced(err error) bool {
	if errors.Is(err, errNotOurs) || tmux.IsNoServer(err) || tmux.IsServerGone(err) {
		return true
	}
	if s.server == "" {
		return false // never seen: nothing to compare with
	}
	now, err := s.tc.ServerID()
	return tmux.IsNoServer(err) || tmux.IsServerGone(err) || (err == nil && now != s.server)
}
