package tmux

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/clock"
)

// CaptureOptions selects what capture-pane returns.
type CaptureOptions struct {
	// Start and End are capture-pane's -S and -E ("-" for the start of
	// history / end of the screen; "" for the defaults: the visible screen).
	Start, End string
	// Join joins lines the terminal wrapped.
	Join bool
}

// Capture returns the text of a pane, without escape sequences.
func (c *Client) Capture(target string, o CaptureOptions) (string, error) {
	args := []string{"capture-pane", "-p", "-t", target}
	if o.Join {
		args = append(args, "-J")
	}
	if o.Start != "" {
		args = append(args, "-S", o.Start)
	}
	if o.End != "" {
		args = append(args, "-E", o.End)
	}
	return c.Run(nil, args...)
}

// PaneStatus is what one poll learns about a pane.
type PaneStatus struct {
	Liveness
	PID     int
	History int
	CursorY int
	Height  int
	Width   int
	// Piped: the pane's output is being piped (pipe-pane). tmux stops
	// piping when the program it pipes to dies.
	Piped bool
	// Server is the identity of the tmux server that answered (its pid
	// and start time: serverFormat). Window ids start again from @0 with
	// every server, so an id polled after the server was replaced (killed,
	// crashed, a reboot) may name another server's window: the server
	// and the window's Tag tell it apart.
	Server string
	// Tag is the window's tmux.WindowSpec.Tag ("" for other windows).
	Tag string
}

// serverFormat identifies a tmux server: its pid and start time (a pid
// alone may come back for a later server).
const serverFormat = "#{pid}.#{start_time}"

// The tag comes last: it is the window's option, which anyone may set to
// anything, a tab included.
const statusFormat = livenessFormat + "\t#{history_size}\t#{cursor_y}\t#{pane_height}\t#{pane_width}\t#{pane_pipe}\t" + serverFormat + "\t#{" + tagOption + "}"

// statusFields is the number of fields statusFormat makes.
const statusFields = livenessFields + 7

// Poll returns the pane's liveness and its visible screen in one tmux
// process (display-message and capture-pane chained).
func (c *Client) Poll(target string) (PaneStatus, string, error) {
	out, err := c.RunChain(nil,
		[]string{"display-message", "-p", "-t", target, statusFormat},
		[]string{"capture-pane", "-p", "-t", target},
	)
	if err != nil {
		return PaneStatus{}, "", err
	}
	first, screen, _ := strings.Cut(out, "\n")
	s, err := parseStatus(first)
	if err != nil {
		return PaneStatus{}, "", err
	}
	return s, screen, nil
}

// parseStatus reads a line of statusFormat.
func parseStatus(line string) (PaneStatus, error) {
	f := strings.SplitN(line, "\t", statusFields)
	if len(f) != statusFields {
		return PaneStatus{}, fmt.Errorf("unexpected tmux output %q", line)
	}
	var s PaneStatus
	s.Liveness, s.PID = parseLiveness(f)
	s.History, _ = strconv.Atoi(f[livenessFields])
	s.CursorY, _ = strconv.Atoi(f[livenessFields+1])
	s.Height, _ = strconv.Atoi(f[livenessFields+2])
	s.Width, _ = strconv.Atoi(f[livenessFields+3])
	s.Piped = f[livenessFields+4] == "1"
	s.Server, s.Tag = f[livenessFields+5], f[livenessFields+6]
	return s, nil
}

// ServerID returns the identity of the tmux server that answers now
// (PaneStatus.Server); a missing server is an error (IsNoServer).
func (c *Client) ServerID() (string, error) {
	out, err := c.Run(nil, "display-message", "-p", serverFormat)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// leaveModes takes the pane out of copy mode (or any other mode: a
// user scrolled back in attach, or turned the mouse wheel) and does
// nothing when it is in none. In a mode, keys go to the mode (Enter copies
// a selection, C-c leaves the mode) instead of the program, and a paste
// is unbracketed: tmux looks at the mode's screen, which never asked for
// bracketed paste, so the program sees a multi-line text as lines typed
// one by one. Every delivery chains this first, in the same tmux process.
func leaveModes(target string) []string {
	return []string{"copy-mode", "-q", "-t", target}
}

// SendKeys sends tmux key names (Enter, Escape, C-u, C-c ...) to target,
// out of any mode first (leaveModes).
func (c *Client) SendKeys(target string, keys ...string) error {
	_, err := c.RunChain(nil, leaveModes(target), append([]string{"send-keys", "-t", target}, keys...))
	return err
}

// literalLimit keeps send-keys arguments well under tmux's message size;
// longer text goes through a paste buffer.
const literalLimit = 2048

// PasteEnterGap separates a paste from its Enter: some agents treat an
// Enter arriving with a paste as part of it.
var PasteEnterGap = 60 * time.Millisecond

// pasteOnly are the characters SanitizePaste keeps that would act as
// keys when typed (Enter, Tab), so text with them is pasted instead.
const pasteOnly = "\n\t"

// TypeText types text literally (send-keys -l --, so text starting with "-"
// or looking like a key name is typed as written), optionally followed by
// Enter in the same invocation, out of any mode first (leaveModes). The text is sanitised first
// (SanitizePaste), so no control character in it acts as a key. Text with
// a newline or a tab, or long text, is delivered as one bracketed paste
// instead, so the program receives it as one message.
func (c *Client) TypeText(target, text string, enter bool) error {
	text = SanitizePaste(text)
	if strings.ContainsAny(text, pasteOnly) || len(text) > literalLimit {
		if err := c.Paste(target, text); err != nil {
			return err
		}
		if enter {
			clock.Real.Sleep(context.Background(), PasteEnterGap)
			return c.SendKeys(target, "Enter")
		}
		return nil
	}
	cmds := [][]string{leaveModes(target)}
	if text != "" {
		cmds = append(cmds, []string{"send-keys", "-t", target, "-l", "--", text})
	}
	if enter {
		cmds = append(cmds, []string{"send-keys", "-t", target, "Enter"})
	}
	if len(cmds) == 1 {
		return nil
	}
	_, err := c.RunChain(nil, cmds...)
	return err
}

// Paste loads text into a uniquely named buffer and pastes it as a bracketed
// paste (the program sees one paste, not lines typed one by one), deleting
// the buffer afterwards, out of any mode first (leaveModes). One tmux
// process. The text is sanitised first
// (SanitizePaste), so it cannot end the paste early; nothing is pasted
// when nothing is left.
func (c *Client) Paste(target, text string) error {
	text = SanitizePaste(text)
	if text == "" {
		return nil
	}
	buf := "swarm-" + uuid.NewString()
	_, err := c.RunChain(strings.NewReader(text),
		leaveModes(target),
		[]string{"load-buffer", "-b", buf, "-"},
		[]string{"paste-buffer", "-p", "-d", "-b", buf, "-t", target},
	)
	return err
}

// Attach replaces this process with a tmux client showing the window:
// attach-session from outside tmux, switch-client from inside it.
func (c *Client) Attach(session, windowID string) error {
	bin, err := exec.LookPath(c.Bin)
	if err != nil {
		return err
	}
	if err := c.checkSocket(); err != nil {
		return err
	}
	// switch-client from inside the worker's server, attach-session from
	// outside it (outside tmux, or inside another server).
	inside := c.inside(os.Getenv("TMUX"))
	show := "attach-session"
	if inside {
		show = "switch-client"
	}
	args := c.Args(
		[]string{"select-window", "-t", windowID},
		[]string{show, "-t", "=" + session},
	)
	env := clientEnv(os.Environ())
	if !inside {
		// Attaching to another server from inside tmux needs TMUX unset.
		env = withoutEnv(env, "TMUX")
	}
	return syscall.Exec(bin, append([]string{c.Bin}, args...), env)
}

// inside reports whether tmuxEnv (a $TMUX value) names the client's
// server: plain tmux talks to that server, and a client on an explicit
// socket when its path is that one.
func (c *Client) inside(tmuxEnv string) bool {
	p, ok := envServerPath(tmuxEnv)
	if !ok {
		return false
	}
	if c.Path == "" && c.Socket == "" {
		return true
	}
	own := c.Server().SocketPath()
	return own != "" && own == p
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}
