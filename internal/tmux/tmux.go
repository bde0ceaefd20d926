// Package tmux is the one place swarm runs tmux.
//
// Every call can run on a chosen server (tmux -S path or -L socket), targets windows
// by their unique id (@N) or exact names (=session:), never by prefix, and
// sends text literally. Commands that belong together are chained into one
// tmux invocation ("a ; b"), which tmux executes in one go: fewer processes,
// and no gap in which a fast-exiting command could be missed.
//
// Nothing a user or agent writes reaches a tmux or shell parser: every
// argument is escaped where the invocation is built (Args), strings tmux
// expands as formats are escaped for that too, and text sent to a pane is
// sanitised (SanitizePaste). escape.go says what tmux does with each.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/hint"
)

// Client runs tmux against one server.
type Client struct {
	// Socket is the -L socket name; empty means the default server (or,
	// inside tmux, the one $TMUX names).
	Socket string
	// Path, when set, is the server's socket path (tmux -S): it wins over
	// Socket and over $TMUX.
	Path string
	// Bin is the tmux executable (default "tmux", or $SWARM_TMUX).
	Bin string
	// Timeout bounds every tmux process the client runs (default
	// DefaultTimeout, or $SWARM_TMUX_TIMEOUT): a server that does not
	// answer (stopped with SIGSTOP, wedged) fails the call instead of
	// hanging the command. Attach is not bounded: it becomes the client.
	Timeout time.Duration
	// Exclusive, when set, is held around a window's end (KillWindow)
	// and a control client's attach (Poller), which must not overlap,
	// not even in two processes: tmux 3.3a's server crashes, and takes
	// every window with it, when a session's current window goes while a
	// control client attaches (docs/development.md, "tmux 3.3a"). It
	// returns its release; it may give up waiting (a holder stuck on a
	// stopped server) and return a release of nothing.
	Exclusive func() (release func())
}

// hold takes c.Exclusive, when set, and returns its release.
func (c *Client) hold() (release func()) {
	if c.Exclusive == nil {
		return func() {}
	}
	return c.Exclusive()
}

// DefaultTimeout is how long a tmux call may take before it fails. Every
// command swarm runs answers within milliseconds on a server that runs,
// even with hundreds of panes; the margin is for a machine under load.
const DefaultTimeout = 10 * time.Second

// TimeoutEnv overrides DefaultTimeout (a Go duration such as 30s).
const TimeoutEnv = "SWARM_TMUX_TIMEOUT"

// timeoutFromEnv is $SWARM_TMUX_TIMEOUT when it is a positive duration,
// else DefaultTimeout.
func timeoutFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(TimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

// New returns a client for the server on socket ("" = default).
func New(socket string) *Client {
	return NewFor(Server{Name: socket})
}

// NewFor returns a client for the server s.
func NewFor(s Server) *Client {
	bin := os.Getenv("SWARM_TMUX")
	if bin == "" {
		bin = "tmux"
	}
	return &Client{Socket: s.Name, Path: s.Path, Bin: bin, Timeout: timeoutFromEnv()}
}

// Server is the server the client talks to.
func (c *Client) Server() Server { return Server{Name: c.Socket, Path: c.Path} }

// Error is a failed tmux command, with what tmux printed.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoAnswer is the cause of an Error whose tmux process did not finish
// within the client's Timeout (it was killed).
var ErrNoAnswer = errors.New("tmux did not answer")

// NoAnswerError is a tmux call that ran out of time: the server did not
// answer (stopped, or wedged), or the machine is very slow.
type NoAnswerError struct {
	Server  string // the socket path, when known
	Timeout time.Duration
}

func (e *NoAnswerError) Error() string {
	where := ""
	if e.Server != "" {
		where = " (server " + e.Server + ")"
	}
	return fmt.Sprintf("tmux did not answer within %s%s; is the server stopped?", e.Timeout, where)
}

func (e *NoAnswerError) Unwrap() error { return ErrNoAnswer }

// IsNoAnswer reports a tmux call that ran out of time.
func IsNoAnswer(err error) bool { return errors.Is(err, ErrNoAnswer) }

// IsNoServer reports whether err means no tmux server runs on the socket.
func IsNoServer(err error) bool {
	var te *Error
	if !errors.As(err, &te) {
		return false
	}
	s := te.Stderr
	return strings.Contains(s, "no server running") ||
		strings.Contains(s, "error connecting to") ||
		(strings.Contains(s, "No such file or directory") && !strings.Contains(s, "can't find"))
}

// IsNotFound reports whether err means the target session, window or pane
// does not exist, or the whole server is gone (including a server that
// exited while answering: killing the last window of the last session
// ends the server).
func IsNotFound(err error) bool {
	var te *Error
	if !errors.As(err, &te) {
		return false
	}
	return IsNoServer(err) || IsServerGone(err) || strings.Contains(te.Stderr, "can't find") ||
		strings.Contains(te.Stderr, "no such")
}

// noSessionSaid reports tmux's answer of a server that has no session
// left: "no current target" to any command that needs a session, even
// list-panes -a and kill-window -t @N. A server is like that for an
// instant after its last window goes, and for good when the user's
// tmux.conf sets exit-empty off.
func noSessionSaid(err error) bool {
	var te *Error
	return errors.As(err, &te) && strings.Contains(te.Stderr, "no current target")
}

// hasNoSession asks the server, after a "no current target", whether it
// has any session: list-sessions needs none and prints nothing then.
func (c *Client) hasNoSession() bool {
	out, err := c.Run(nil, "list-sessions", "-F", "#{session_id}")
	return err == nil && strings.TrimSpace(out) == "" || IsNoServer(err)
}

// IsServerGone reports a server that exited or went away mid-command.
func IsServerGone(err error) bool {
	var te *Error
	if !errors.As(err, &te) {
		return false
	}
	return strings.Contains(te.Stderr, "server exited unexpectedly") || strings.Contains(te.Stderr, "lost server")
}

// isTransient reports errors of a server that is starting or shutting down
// while we talk to it; the same command moments later succeeds.
func isTransient(err error) bool {
	var te *Error
	if !errors.As(err, &te) {
		return false
	}
	return IsNotFound(err) || noSessionSaid(err) ||
		strings.Contains(te.Stderr, "duplicate session")
}

// Args returns the full argument list for one tmux invocation running
// cmds in order, server first. Every element is escaped (escapeArg), so
// each arrives at its command exactly as given, and the commands are
// joined by separators that no escaped element can be mistaken for.
func (c *Client) Args(cmds ...[]string) []string {
	args := buildArgs(cmds)
	switch {
	case c.Path != "":
		if label := ownLabel(c.Path); label != "" {
			// This user's tmux -L socket, where tmux looks for it now:
			// -L, with which tmux makes its socket directory first (a new
			// $TMUX_TMPDIR has none; -S does not make it, and the server
			// could not start).
			return append([]string{"-L", label}, args...)
		}
		return append([]string{"-S", c.Path}, args...)
	case c.Socket != "":
		return append([]string{"-L", c.Socket}, args...)
	}
	return args
}

// checkSocket refuses a server the client must not connect to: a bad
// name or path (Check), or a socket another user may listen on
// (CheckOwner).
func (c *Client) checkSocket() error {
	s := c.Server()
	if err := s.Check(); err != nil {
		return err
	}
	return s.CheckOwner()
}

// Run executes one tmux command and returns its standard output. Every
// argument arrives as given (see Args).
func (c *Client) Run(stdin io.Reader, args ...string) (string, error) {
	return c.RunChain(stdin, args)
}

// RunChain executes commands in one tmux invocation: tmux runs them in
// order within one server event ("cmd1 ; cmd2"), without a gap in which a
// fast-exiting program could be missed. Output is that of all commands.
func (c *Client) RunChain(stdin io.Reader, cmds ...[]string) (string, error) {
	return c.startChain(stdin, cmds...).wait()
}

// started is a tmux invocation whose process has started (or failed to):
// wait returns what RunChain returns.
type started struct {
	c           *Client
	cmd         *exec.Cmd
	args        []string
	timeout     time.Duration
	ctx         context.Context
	cancel      context.CancelFunc
	out, stderr bytes.Buffer
	err         error // from checking the server or starting the process
}

// startChain starts the tmux process of RunChain and returns once it has
// started: the caller's own work goes on while tmux answers.
func (c *Client) startChain(stdin io.Reader, cmds ...[]string) *started {
	r := &started{c: c}
	if r.err = c.checkSocket(); r.err != nil {
		return r
	}
	// -u: tmux writes a client whose locale is not UTF-8 (LANG unset, as
	// in a command run over ssh) a tab as '_', and every format swarm
	// reads is tab-separated.
	r.args = append([]string{"-u"}, c.Args(cmds...)...)
	r.timeout = c.Timeout
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), r.timeout)
	// On expiry the client process is killed (SIGKILL). The client hands
	// its standard streams to the server, so a stopped server holds them
	// open: WaitDelay ends the wait for them.
	r.cmd = exec.CommandContext(r.ctx, c.Bin, r.args...)
	r.cmd.WaitDelay = noAnswerWaitDelay
	r.cmd.Env = clientEnv(os.Environ())
	r.cmd.Stdin = stdin
	r.cmd.Stdout = &r.out
	r.cmd.Stderr = &r.stderr
	r.err = r.cmd.Start()
	return r
}

// wait waits for the process and returns its output, or why there is none.
func (r *started) wait() (string, error) {
	if r.cancel != nil {
		defer r.cancel()
	}
	err := r.err
	if err == nil {
		err = r.cmd.Wait()
	} else if r.cmd == nil {
		return "", err // the server was refused: no process
	}
	if errors.Is(err, exec.ErrWaitDelay) && r.ctx.Err() == nil {
		// It succeeded; the server was slow to let go of its streams,
		// which held everything it printed before it exited.
		err = nil
	}
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("tmux not found (install tmux 3.x)")
		}
		if r.ctx.Err() != nil {
			return r.out.String(), hint.Wrap(&NoAnswerError{Server: r.c.Server().SocketPath(), Timeout: r.timeout},
				"a tmux server stopped with SIGSTOP answers again after kill -CONT <its pid>; %s=30s waits longer", TimeoutEnv)
		}
		return r.out.String(), &Error{Args: r.args, Stderr: r.stderr.String(), Err: err}
	}
	return r.out.String(), nil
}

// noAnswerWaitDelay bounds the wait for a tmux client's streams once it
// has exited or been killed.
const noAnswerWaitDelay = time.Second

// Liveness is whether a pane's process has exited and how.
type Liveness struct {
	Dead bool
	// Exit holds the exit status of a dead pane's process when tmux knows
	// it; Signal is non-zero when the process was killed by a signal.
	Exit      int
	HasExit   bool
	Signal    int
	HasSignal bool
	// DeadAt is when a dead pane's command ended (tmux's pane_dead_time;
	// zero when alive or not known).
	DeadAt time.Time
}

// ExitKnown reports whether a dead pane's end (status or signal) is known;
// tmux may mark a pane dead a moment before it reaps the process.
func (l Liveness) ExitKnown() bool { return l.HasExit || l.HasSignal }

// ExitCode is the shell-style code: the status, or 128+signal.
func (l Liveness) ExitCode() int {
	if l.HasSignal {
		return 128 + l.Signal
	}
	return l.Exit
}

// livenessFormat is the start of every pane format swarm reads: dead (1
// or 0), exit status, exit signal, when the pane died, and the pid,
// tab-separated (livenessFields). A dead pane's three fields are in a
// conditional, which tmux does not expand for a live pane: the server
// formats every field of every pane of a listing, about 1 us each, and
// the listing is most of ls's time at many workers (500 panes: 10.2 ->
// 9.1 ms, 200 interleaved rounds; list-windows -a, the bench's floor, 9.4).
const livenessFormat = "#{?pane_dead,1\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pane_dead_time},0\t\t\t}\t#{pane_pid}"

// livenessFields is the number of fields livenessFormat makes.
const livenessFields = 5

// parseLiveness reads the fields of livenessFormat.
func parseLiveness(f []string) (Liveness, int) {
	l := Liveness{Dead: f[0] == "1"}
	// A live pane's exit fields are empty: not parsed, which made an
	// error (an allocation) for each of them (500 panes: 70 KB).
	if l.Dead {
		if n, err := strconv.Atoi(f[1]); err == nil {
			l.Exit, l.HasExit = n, true
		}
		if n, err := strconv.Atoi(f[2]); err == nil && n > 0 {
			l.Signal, l.HasSignal = n, true
		}
		if secs, err := strconv.ParseInt(f[3], 10, 64); err == nil && secs > 0 {
			l.DeadAt = time.Unix(secs, 0)
		}
	}
	pid, _ := strconv.Atoi(f[4])
	return l, pid
}

// Pane is one pane as listed by list-panes -a.
type Pane struct {
	Liveness
	Session    string
	WindowName string
	WindowID   string
	PID        int
	// Tag is the window's WindowSpec.Tag ("" for other windows).
	Tag string
}

// The window's name comes last: it may hold a tab.
const paneFormat = livenessFormat + "\t#{window_id}\t#{session_name}\t#{" + tagOption + "}\t#{window_name}"

func parsePane(line string) (Pane, bool) {
	var fields [livenessFields + 4]string // as strings.SplitN(line, "\t", 9), without allocating
	f := fields[:0]
	for len(f) < len(fields)-1 {
		field, rest, ok := strings.Cut(line, "\t")
		if !ok {
			break
		}
		f, line = append(f, field), rest
	}
	f = append(f, line)
	if len(f) != len(fields) {
		return Pane{}, false
	}
	p := Pane{WindowID: f[5], Session: f[6], Tag: f[7], WindowName: f[8]}
	p.Liveness, p.PID = parseLiveness(f)
	return p, true
}

// ListPanes lists every pane of every session on the server in one tmux
// process. No server running means no panes, not an error.
func (c *Client) ListPanes() ([]Pane, error) {
	return c.listPanes(false, listAllPanes...)
}

// WindowPanes lists the panes of one window (target: its id, @N) in one
// tmux process, as ListPanes lists them: a command about one worker asks
// for its window, not for every pane of the server. A window, or a
// server, that does not exist has no panes.
func (c *Client) WindowPanes(target string) ([]Pane, error) {
	return c.listPanes(true, "list-panes", "-t", target, "-F", paneFormat)
}

// listPanes runs a listing in paneFormat. oneWindow: tmux's "can't find
// window" is an empty listing, not an error.
func (c *Client) listPanes(oneWindow bool, args ...string) ([]Pane, error) {
	out, err := c.Run(nil, args...)
	return c.readListing(oneWindow, args, out, err)
}

// PaneListing is a ListPanes whose tmux process has started
// (StartListPanes): Wait returns what ListPanes returns.
type PaneListing struct {
	c       *Client
	running *started
}

// StartListPanes starts ListPanes's tmux process and returns once it has
// started, so that what the caller does meanwhile (swarm ls decodes the
// registry) does not compete with the fork and exec: started in parallel
// with the decoding, tmux began up to 4 ms later at 500 workers on the
// 2-core machine.
func (c *Client) StartListPanes() *PaneListing {
	return &PaneListing{c: c, running: c.startChain(nil, listAllPanes)}
}

// Wait waits for the listing.
func (l *PaneListing) Wait() ([]Pane, error) {
	out, err := l.running.wait()
	return l.c.readListing(false, listAllPanes, out, err)
}

// listAllPanes is ListPanes's command.
var listAllPanes = []string{"list-panes", "-a", "-F", paneFormat}

// readListing reads a listing's answer (out, err) to args; a server
// closing down is asked again (args).
func (c *Client) readListing(oneWindow bool, args []string, out string, err error) ([]Pane, error) {
	// A server closing down (kill-server returns before it has closed its
	// panes, which takes a while with hundreds) answers "server exited
	// unexpectedly" for a moment; then there is no server, or a new one.
	if IsServerGone(err) {
		asked := false // the first look is at the answer already had
		clock.Wait(context.Background(), clock.Real, serverGonePause, serverGoneWait, func() bool {
			if asked {
				out, err = c.Run(nil, args...)
			}
			asked = true
			return !IsServerGone(err)
		})
	}
	// A server without sessions (the new one, before its first session;
	// one whose exit-empty is off) has no panes. It may have had none only
	// for the listing: a session made meanwhile (a new-session the server
	// had queued, one of another command) is there when it is asked, and
	// then the listing is asked again.
	if noSessionSaid(err) {
		empty := false
		clock.Wait(context.Background(), clock.Real, serverGonePause, serverGoneWait, func() bool {
			if c.hasNoSession() {
				empty = true
				return true
			}
			out, err = c.Run(nil, args...)
			return !noSessionSaid(err)
		})
		if empty {
			return nil, nil
		}
	}
	if err != nil {
		// No server: no panes.
		if IsNoServer(err) || oneWindow && IsNotFound(err) && !IsServerGone(err) {
			return nil, nil
		}
		return nil, err
	}
	out = strings.TrimRight(out, "\n")
	panes := make([]Pane, 0, strings.Count(out, "\n")+1)
	for line := range strings.SplitSeq(out, "\n") {
		if p, ok := parsePane(line); ok {
			panes = append(panes, p)
		}
	}
	return panes, nil
}

// serverGoneWait bounds how long ListPanes asks again a server that exits
// under it, and serverGonePause paces the asking.
const (
	serverGoneWait  = 5 * time.Second
	serverGonePause = 50 * time.Millisecond
)

// Window is a window and the state of its first pane (workers have one).
type Window struct {
	Pane
	Panes int
	// AllDead reports that every pane of the window is dead.
	AllDead bool
}

// Windows groups panes into windows, keeping list order.
func Windows(panes []Pane) []Window {
	out := make([]Window, 0, len(panes))
	idx := make(map[string]int, len(panes))
	for _, p := range panes {
		if i, ok := idx[p.WindowID]; ok {
			out[i].Panes++
			out[i].AllDead = out[i].AllDead && p.Dead
			continue
		}
		idx[p.WindowID] = len(out)
		out = append(out, Window{Pane: p, Panes: 1, AllDead: p.Dead})
	}
	return out
}

// FindWindow returns the first window with exactly this session and name.
func FindWindow(windows []Window, session, name string) (Window, bool) {
	for _, w := range windows {
		if w.Session == session && w.WindowName == name {
			return w, true
		}
	}
	return Window{}, false
}

// Lookup finds one window by exact session and name (one tmux process).
func (c *Client) Lookup(session, name string) (Window, bool, error) {
	panes, err := c.ListPanes()
	if err != nil {
		return Window{}, false, err
	}
	w, ok := FindWindow(Windows(panes), session, name)
	return w, ok, nil
}
