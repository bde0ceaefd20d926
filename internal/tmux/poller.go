package tmux

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A loop's monitor looks at its agent's pane every 2 s. Through Client.Poll
// that is a tmux process each time, which costs the machine more than
// everything else the monitor does in a poll (docs/development.md,
// "Monitors"). A Poller asks through one tmux control-mode client (tmux
// -C) instead, started once and kept attached to the pane's session: a
// poll is one line of commands written to it and their answers read back.
//
// The client attaches with -f ignore-size (it never sizes a window: the
// 200x50 of a session no terminal shows stays), no-output (the panes'
// output is not sent to it) and -E (the session's environment is left as
// it is). It shows in tmux list-clients, and the session as attached.
//
// What the pane shows is in the answer, and an agent can print anything,
// a line that looks like the end of an answer included: the screen's
// lines are counted, not parsed. capture-pane prints exactly the pane's
// height in lines, which the first command of the poll reads (a number
// only tmux writes); the line after them must end the answer. Anything
// else the client says, a failed command (a window gone: tmux's own error
// is then had from Client.Poll), or no answer within the client's timeout
// closes the client, and that poll and the next ones go through
// Client.Poll until a new client is tried (pollerRetry, doubling).

// pollerRetry is the wait before a new control client is tried after one
// could not be started or failed; each failure in a row doubles it, up to
// pollerRetryMax. A tmux without control mode's flags (before 3.2) costs
// a failed try every ten minutes, and its polls one tmux process each.
const (
	pollerRetry    = 30 * time.Second
	pollerRetryMax = 10 * time.Minute
)

// pollerIdle is how long a control client stays attached with no poll.
// tmux queues the client's notifications (windows added, renamed,
// resized) while nobody reads them, and a server told to exit waits
// until they are read: a monitor that polls no more for a while (a paused
// loop, a usage limit's wait of hours) must not hold the server up. The
// next poll attaches again.
const pollerIdle = 15 * time.Second

// Poller is a Client whose Poll goes through a control-mode client.
// Everything else is the Client's. It is safe for concurrent use.
type Poller struct {
	*Client

	mu      sync.Mutex
	ctl     *control
	retryAt time.Time
	retry   time.Duration
	// idle ends the control client after Idle (pollerIdle) with no poll.
	idle     *time.Timer
	lastPoll time.Time
	// Idle overrides pollerIdle (tests).
	Idle time.Duration
}

// NewPoller returns a poller of the server s.
func NewPoller(s Server) *Poller { return &Poller{Client: NewFor(s)} }

// Poll returns the pane's liveness and its visible screen, as Client.Poll
// does, without a tmux process when the control client answers.
func (p *Poller) Poll(target string) (PaneStatus, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, screen, err := p.controlPoll(target); err == nil {
		return s, screen, nil
	}
	return p.Client.Poll(target)
}

// Close ends the control client, if one runs.
func (p *Poller) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle != nil {
		p.idle.Stop()
	}
	p.drop()
}

// errNoControl: the poll goes through Client.Poll.
var errNoControl = errors.New("no control client")

// controlPoll polls through the control client, starting one if it is
// time to try.
func (p *Poller) controlPoll(target string) (PaneStatus, string, error) {
	if !isID(target, '@') {
		return PaneStatus{}, "", errNoControl
	}
	if p.ctl == nil {
		if time.Now().Before(p.retryAt) {
			return PaneStatus{}, "", errNoControl
		}
		ctl, err := p.attach(target)
		if err != nil {
			p.failed()
			return PaneStatus{}, "", err
		}
		p.ctl = ctl
	}
	s, screen, err := p.ctl.poll(target, time.Now().Add(p.timeout()))
	if err != nil {
		p.drop()
		p.failed()
		return PaneStatus{}, "", err
	}
	p.retry = 0
	p.lastPoll = time.Now()
	p.armIdle()
	return s, screen, nil
}

// armIdle (re)starts the timer that ends an idle control client.
func (p *Poller) armIdle() {
	idle := p.Idle
	if idle <= 0 {
		idle = pollerIdle
	}
	if p.idle != nil {
		p.idle.Reset(idle)
		return
	}
	p.idle = time.AfterFunc(idle, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if time.Since(p.lastPoll) >= idle {
			p.drop() // no retry delay: the next poll attaches again
		}
	})
}

// failed schedules the next try of a control client.
func (p *Poller) failed() {
	p.retry = min(max(2*p.retry, pollerRetry), pollerRetryMax)
	p.retryAt = time.Now().Add(p.retry)
}

// drop ends the control client.
func (p *Poller) drop() {
	if p.ctl != nil {
		p.ctl.close()
		p.ctl = nil
	}
}

func (p *Poller) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

// isID reports whether s is a tmux id of the kind prefix (@N windows,
// $N sessions): a target that names one thing, whatever the names.
func isID(s string, prefix byte) bool {
	if len(s) < 2 || s[0] != prefix {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// control is a running control-mode client.
type control struct {
	cmd *exec.Cmd
	in  *os.File // its standard input: our commands
	out *os.File // its standard output: tmux's answers
	r   *bufio.Reader
}

// attach starts a control client attached to the session of the window
// target (by the session's id, looked up with one tmux process: a
// window target would make the window the session's current one).
//
// A session with destroy-unattached on is never attached: the client's
// detach, when the monitor ends, would destroy it and every worker in it.
func (p *Poller) attach(target string) (*control, error) {
	if p.Path == "" && p.Socket == "" {
		// Only $TMUX would say which server: not the monitor's to rely on.
		return nil, errNoControl
	}
	out, err := p.Client.Run(nil, "display-message", "-p", "-t", target, "#{session_id} #{destroy-unattached}")
	session, destroy, _ := strings.Cut(strings.TrimSpace(out), " ")
	if err != nil || !isID(session, '$') {
		return nil, fmt.Errorf("no session for %s: %w", target, errors.Join(err, errNoControl))
	}
	if destroy != "0" && destroy != "off" {
		return nil, fmt.Errorf("session %s has destroy-unattached on (%q): %w", session, destroy, errNoControl)
	}
	if err := p.checkSocket(); err != nil {
		return nil, err
	}
	// Until tmux has answered the attach, no window may go (Exclusive).
	defer p.hold()()
	args := append([]string{"-u", "-C"}, p.Args([]string{"attach-session", "-E", "-f", "ignore-size,no-output", "-t", session})...)
	cmd := exec.Command(p.Bin, args...)
	// The server is named by -L or -S: $TMUX would only make tmux
	// refuse to attach from inside tmux.
	cmd.Env = withoutEnv(clientEnv(os.Environ()), "TMUX")
	dieWithParent(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, inR.Close(), inW.Close())
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, nil
	err = cmd.Start()
	// The child has its ends (or failed to start): ours are closed.
	err = errors.Join(err, inR.Close(), outW.Close())
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Process.Kill() // started, but our ends are unusable: it goes
			_ = cmd.Wait()         // killed: its exit status says so
		}
		return nil, errors.Join(err, inW.Close(), outR.Close())
	}
	c := &control{cmd: cmd, in: inW, out: outR, r: bufio.NewReader(outR)}
	// attach-session's own answer comes first (a command of the command
	// line, not one the client sent: its flags are 0).
	err = c.out.SetReadDeadline(time.Now().Add(p.timeout()))
	var guard string
	if err == nil {
		guard, err = c.begin(false)
	}
	if err == nil {
		_, err = c.answer(-1, guard)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// poll asks for the pane's status and screen: Client.Poll's commands, on
// one line.
func (c *control) poll(target string, deadline time.Time) (PaneStatus, string, error) {
	if err := errors.Join(c.in.SetWriteDeadline(deadline), c.out.SetReadDeadline(deadline)); err != nil {
		return PaneStatus{}, "", err
	}
	line := "display-message -p -t " + target + " '" + statusFormat + "' ; capture-pane -p -t " + target + "\n"
	if _, err := io.WriteString(c.in, line); err != nil {
		return PaneStatus{}, "", err
	}
	status, err := c.block(1)
	if err != nil {
		return PaneStatus{}, "", err
	}
	s, err := parseStatus(status[0])
	if err != nil || s.PID <= 0 || s.Height <= 0 {
		return PaneStatus{}, "", fmt.Errorf("no pane %s (%q, %v)", target, status[0], err)
	}
	screen, err := c.block(s.Height)
	if err != nil {
		return PaneStatus{}, "", err
	}
	return s, strings.Join(screen, "\n") + "\n", nil
}

// block reads the next answer to a command of ours, which must hold
// exactly n lines. The notifications before it (lines starting with %)
// and the answers to commands tmux ran for others (a user's hook run
// after our display-message: its guard lines' flags are 0) are skipped.
func (c *control) block(n int) ([]string, error) {
	guard, err := c.begin(true)
	if err != nil {
		return nil, err
	}
	return c.answer(n, guard)
}

// begin reads up to the %begin line of the next answer and returns its
// guard ("time number flags"), which its %end or %error line repeats.
// With ours, only an answer to a command this client sent counts (flags
// 1); others are read through to their end. Any line before that is not
// a notification is out of step.
func (c *control) begin(ours bool) (string, error) {
	for {
		line, err := c.line()
		if err != nil {
			return "", err
		}
		guard, ok := strings.CutPrefix(line, "%begin ")
		switch {
		case ok && (!ours || strings.HasSuffix(guard, " 1")):
			return guard, nil
		case ok:
			if _, err := c.answer(-1, guard); err != nil && !errors.Is(err, errCommand) {
				return "", err
			}
		case !strings.HasPrefix(line, "%"):
			return "", fmt.Errorf("tmux control client out of step: %q", line)
		}
	}
}

// errCommand: tmux answered %error (a failed command).
var errCommand = errors.New("tmux command failed")

// answer reads an answer's n lines, taken as they are, and its end line,
// which must repeat the %begin line's guard (%end; %error is a failed
// command). n < 0: as many lines as come before that end.
func (c *control) answer(n int, guard string) ([]string, error) {
	end, failed := "%end "+guard, "%error "+guard
	var lines []string
	for n < 0 || len(lines) < n {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if n < 0 && (line == end || line == failed) {
			return lines, endError(line, failed, lines)
		}
		lines = append(lines, line)
	}
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	if line != end && line != failed {
		return nil, fmt.Errorf("tmux control client out of step: %q where %q ends", line, end)
	}
	return lines, endError(line, failed, lines)
}

// endError is the error of an answer whose end line is line.
func endError(line, failed string, lines []string) error {
	if line == failed {
		return fmt.Errorf("%w: %s", errCommand, strings.Join(lines, "; "))
	}
	return nil
}

// line reads one line, without its newline.
func (c *control) line() (string, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// close ends the client: closing its input detaches it; it is killed if
// it has not exited at once (a server that does not answer).
func (c *control) close() {
	_ = c.in.Close() // a pipe's end: closing it is the detach
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait() // detached or killed: its exit status says nothing more
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(noAnswerWaitDelay):
		_ = c.cmd.Process.Kill() // gone already is fine
		<-done
	}
	_ = c.out.Close() // a pipe's end, read no more
}

// Pollers hands out one Poller per server and closes them all: a
// monitor's iterations share its control client.
type Pollers struct {
	// Exclusive is given to every poller's Client (Client.Exclusive).
	Exclusive func() (release func())

	mu sync.Mutex
	m  map[Server]*Poller
}

// For returns the poller of the server s.
func (ps *Pollers) For(s Server) *Poller {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[Server]*Poller{}
	}
	if p, ok := ps.m[s]; ok {
		return p
	}
	p := NewPoller(s)
	p.Exclusive = ps.Exclusive
	ps.m[s] = p
	return p
}

// Close closes every poller handed out.
func (ps *Pollers) Close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.m {
		p.Close()
	}
}
