package tmux

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/clock"
)

// WindowSpec describes a window to create.
type WindowSpec struct {
	Session string
	Name    string
	Dir     string
	// Env entries (K=V) are set for the window's command itself (-e), not
	// only inherited from a server that may be older than the caller.
	// They are on tmux's argv, and new-session puts them in the session's
	// environment, which every later window of it inherits: secrets go
	// through Launch instead.
	Env []string
	// Command is run directly (argv form, no shell parsing).
	Command []string
	// Launch, when set, gives the command instead of Command, once for
	// every try to make the window, with a function that undoes what it
	// prepared, called when that try fails. A command that takes a
	// one-time resource (an env file its wrapper reads and removes) needs
	// a fresh one each try: a failed try's window may have started and
	// taken its own before it was removed.
	Launch func() (command []string, undo func(), err error)
	// Width and Height size a session this call creates (0: tmux default),
	// and become its default-size: the size of its windows while no
	// client is attached (an attached client resizes them to its own).
	Width, Height int
	// RemainOnExit keeps the pane, dead, after the command exits: its
	// exit status and last screen stay readable (peek, logs, status).
	RemainOnExit bool
	// FocusEvents turns the server's focus-events on when this call
	// creates the session (only on swarm's own server, a -L socket:
	// agents such as Claude Code complain without it).
	FocusEvents bool
	// Tag, when set, is stored in the window (a user option, listed as
	// Pane.Tag) by the same tmux call that creates it: whoever recorded
	// the tag before the call can find the window even if the caller dies
	// before it learns the window's id.
	Tag string
}

// tagOption is the window option that holds WindowSpec.Tag.
const tagOption = "@swarm_spawn"

// common is what new-window and new-session share: the start directory
// (format-expanded by tmux, so escaped for it) and the environment (not
// expanded).
func (s WindowSpec) common() []string {
	var args []string
	if s.Dir != "" {
		args = append(args, "-c", escapeFormat(s.Dir))
	}
	for _, e := range s.Env {
		args = append(args, "-e", e)
	}
	return args
}

// commands returns the new-window chain, which adds the window to an
// existing session, and the new-session chain, which creates the session
// with this window. The session target is exact and not expanded; the
// names given to -s and -n are format-expanded, so escaped.
//
// With RemainOnExit or a Tag the window is created under a unique
// temporary name, remain-on-exit and the tag are set on it and it is
// renamed, all in one invocation: a command that exits at once still
// leaves its pane, and no other window (a stale one of the same name) can
// be touched by the name targets.
func (s WindowSpec) commands() (newWindow, newSession [][]string) {
	command := directCommand(s.Command)
	name := s.Name
	var after [][]string
	if s.RemainOnExit || s.Tag != "" {
		name = "swarm-new-" + uuid.NewString()
		target := "=" + s.Session + ":=" + name
		if s.RemainOnExit {
			after = append(after, []string{"set-option", "-w", "-t", target, "remain-on-exit", "on"})
		}
		if s.Tag != "" {
			after = append(after, []string{"set-option", "-w", "-t", target, tagOption, s.Tag})
		}
		after = append(after, []string{"rename-window", "-t", target, escapeFormat(s.Name)})
	}
	nw := append([]string{"new-window", "-d", "-P", "-F", "#{window_id}",
		"-t", "=" + s.Session + ":", "-n", escapeFormat(name)}, s.common()...)
	nw = append(append(nw, "--"), command...)

	ns := append([]string{"new-session", "-d", "-P", "-F", "#{window_id}",
		"-s", escapeFormat(s.Session), "-n", escapeFormat(name)}, s.common()...)
	var sized [][]string
	if s.Width > 0 && s.Height > 0 {
		ns = append(ns, "-x", fmt.Sprint(s.Width), "-y", fmt.Sprint(s.Height))
		// set-option takes a session as "=S:" (not "=S").
		sized = [][]string{{"set-option", "-t", "=" + s.Session + ":", "default-size", fmt.Sprintf("%dx%d", s.Width, s.Height)}}
	}
	ns = append(append(ns, "--"), command...)
	newWindow = append([][]string{nw}, after...)
	newSession = append(append([][]string{ns}, sized...), after...)
	if s.FocusEvents {
		newSession = append(newSession, []string{"set-option", "-s", "focus-events", "on"})
	}
	return newWindow, newSession
}

// NewWindow creates the window and returns its id (@N). When the session
// does not exist yet it is created with this window as its only one, so no
// stray shell window appears; two concurrent callers racing to create the
// session both end up with a window in it. The command is executed
// directly, never parsed by a shell (directCommand).
func (c *Client) NewWindow(spec WindowSpec) (string, error) {
	if len(spec.Command) == 0 && spec.Launch == nil {
		return "", fmt.Errorf("no command")
	}
	if err := CheckSessionName(spec.Session); err != nil {
		return "", err
	}
	// The server may be starting (another spawn created it a moment ago)
	// or shutting down (its last window just closed) while we talk to it:
	// both show as transient errors, and a retry moments later succeeds.
	// Retries are jittered so that many spawns racing one server do not
	// keep colliding in step. Each try has a temporary name of its own,
	// and a window a failed try made is removed: a retry never leaves a
	// window behind or finds another try's.
	var id string
	var created bool
	var fatal, lastWindow, lastSession error
	tries := 0
	clock.Wait(context.Background(), clock.Real, minRetryGap, newWindowRetry, func() bool {
		if tries > 0 {
			// The jitter on top of Wait's pause between tries.
			clock.Real.Sleep(context.Background(), time.Duration(rand.IntN(20+min(tries-1, 20)*5))*time.Millisecond)
		}
		tries++
		for _, session := range []bool{false, true} {
			got, err := c.tryCreate(spec, session)
			if err == nil {
				id, created = got, true
				return true
			}
			if !isTransient(err) {
				fatal = err
				return true
			}
			if session {
				lastSession = err
			} else {
				lastWindow = err
			}
		}
		return false
	})
	switch {
	case created:
		return id, nil
	case fatal != nil:
		return "", fatal
	}
	return "", fmt.Errorf("cannot create window in session %s: new-window: %w; new-session: %w", spec.Session, lastWindow, lastSession)
}

// tryCreate makes one try at creating the window: into the existing
// session (new-window), or with the session (new-session). With a Launch,
// the try has a command of its own, undone if the try fails.
func (c *Client) tryCreate(spec WindowSpec, session bool) (id string, err error) {
	if spec.Launch != nil {
		command, undo, lerr := spec.Launch()
		if lerr != nil {
			return "", lerr
		}
		defer func() {
			if err != nil {
				undo()
			}
		}()
		spec.Command = command
	}
	newWindow, newSession := spec.commands()
	if session {
		return c.runCreate(newSession)
	}
	return c.runCreate(newWindow)
}

// newWindowRetry bounds NewWindow's retries on transient errors;
// minRetryGap is the shortest pause between two tries (a random jitter of
// up to 125 ms is added).
const (
	newWindowRetry = 30 * time.Second
	minRetryGap    = 5 * time.Millisecond
)

// runCreate runs a new-window or new-session chain and returns the new
// window's id. When a later command of the chain fails, the window its
// first command made (its id is printed first) is removed again.
func (c *Client) runCreate(chain [][]string) (string, error) {
	out, err := c.RunChain(nil, chain...)
	id := firstLine(out)
	if err != nil {
		if strings.HasPrefix(id, "@") {
			if kerr := c.KillWindow(id); kerr != nil {
				err = errors.Join(err, fmt.Errorf("and the window it made (%s) could not be removed: %w", id, kerr))
			}
		}
		return "", err
	}
	if !strings.HasPrefix(id, "@") {
		// tmux 3.3 that cannot make its socket says so and exits 0.
		return "", fmt.Errorf("tmux made no window (it printed %q)", strings.TrimSpace(out))
	}
	return id, nil
}

// firstLine is the first line of a chain's output: the id new-window or
// new-session printed.
func firstLine(out string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(l)
}

// RespawnSpec describes the command a pane is restarted with.
type RespawnSpec struct {
	Dir     string
	Env     []string
	Command []string
	// PipeTo, when set, receives everything the new process writes to the
	// pane (pipe-pane), from its first byte. PipeVia is the program that
	// writes it (argv, PipeTo appended; default: cat >> PipeTo).
	PipeTo  string
	PipeVia []string
	// RemainOnExit keeps the pane after the command exits so its exit
	// status can be read.
	RemainOnExit bool
}

// Respawn kills whatever runs in the window's pane and starts spec.Command
// there, in one tmux invocation: the window (and anyone attached to it)
// stays, the screen and scrollback are cleared, and output piping starts
// before the new process's first output is read.
func (c *Client) Respawn(target string, spec RespawnSpec) error {
	respawn := []string{"respawn-pane", "-k", "-t", target}
	if spec.Dir != "" {
		respawn = append(respawn, "-c", escapeFormat(spec.Dir))
	}
	for _, e := range spec.Env {
		respawn = append(respawn, "-e", e)
	}
	respawn = append(append(respawn, "--"), directCommand(spec.Command)...)
	cmds := [][]string{}
	if spec.RemainOnExit {
		cmds = append(cmds, []string{"set-option", "-w", "-t", target, "remain-on-exit", "on"})
	}
	cmds = append(cmds, respawn,
		[]string{"send-keys", "-R", "-t", target},
		[]string{"clear-history", "-t", target})
	if spec.PipeTo != "" {
		cmds = append(cmds, []string{"pipe-pane", "-t", target, pipeCommand(spec.PipeVia, spec.PipeTo)})
	}
	_, err := c.RunChain(nil, cmds...)
	return err
}

// PipeTo pipes the pane's output to path (through via, as
// RespawnSpec.PipeVia), appending, in place of any pipe it has (tmux
// closes that one first: never two). It restarts piping that stopped
// because the program it piped to died. (Not -o: with a pipe open, -o
// closes it and opens none.)
func (c *Client) PipeTo(target, path string, via []string) error {
	_, err := c.Run(nil, "pipe-pane", "-t", target, pipeCommand(via, path))
	return err
}

// KillWindow removes a window by id or exact target. What matters is that
// the window is gone: a window already gone, or a server that exits while
// answering (the last window of the last session) or answers oddly
// ("no current target") while the window went, is success.
func (c *Client) KillWindow(target string) error {
	defer c.hold()()
	_, err := c.Run(nil, "kill-window", "-t", target)
	if err == nil || IsNotFound(err) {
		return nil
	}
	if IsNoAnswer(err) {
		return err // asking again would wait as long again
	}
	// A server without sessions has no windows (noSessionSaid); there
	// display-message succeeds with nothing to show.
	out, perr := c.Run(nil, "display-message", "-p", "-t", target, "#{window_id}")
	if IsNotFound(perr) || noSessionSaid(perr) || perr == nil && strings.TrimSpace(out) == "" {
		return nil
	}
	return err
}

// KillWindows removes windows as KillWindow does, in one tmux call (a
// kill-window for each, chained) under one hold of Exclusive: kill --all
// ends many windows at once, and one call each, one after another under
// the lock, took longer than everything else it did. A chain stops at its
// first failure (a window gone meanwhile, the server exiting with its
// last window), so after one each window left is removed on its own,
// with KillWindow's judgement of what counts as gone. The errors are the
// targets', in their order.
func (c *Client) KillWindows(targets []string) []error {
	errs := make([]error, len(targets))
	if len(targets) == 0 {
		return errs
	}
	cmds := make([][]string, 0, len(targets))
	for _, t := range targets {
		cmds = append(cmds, []string{"kill-window", "-t", t})
	}
	release := c.hold()
	_, err := c.RunChain(nil, cmds...)
	release()
	if err == nil {
		return errs
	}
	for i, t := range targets {
		errs[i] = c.KillWindow(t)
	}
	return errs
}

// KillServer stops the server on this socket and removes the socket file,
// which tmux 3.3 leaves behind (tests and cleanup). A server it could not
// stop (tmux could not be run) keeps its socket: without it nothing could
// reach the server again.
func (c *Client) KillServer() error {
	_, err := c.Run(nil, "kill-server")
	if err != nil && !IsNoServer(err) && !IsServerGone(err) {
		return err
	}
	if c.Path != "" || c.Socket != "" {
		if p := c.Server().SocketPath(); p != "" {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}
	return err
}
