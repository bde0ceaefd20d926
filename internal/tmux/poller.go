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

// Poller is a Client whose Poll goes through a control-mode client.
// Everything else is the Client's. It is safe for concurrent use.
type Poller struct {
	*Client

	mu      sync.Mutex
	ctl     *control
	retryAt time.Time
	retry   time.Duration
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
	return s, screen, nil
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
	args := append([]string{"-u", "-C"}, p.Args([]string{"attach-session", "-E", "-f", "ignore-size,no-output", "-t", session})...)
	cmd := exec.Command(p.Bin, args...)
	// The server is named by -L or -S: $TMUX would only make tmux
	// refuse to attach from inside tmux.
	cmd.Env = withoutEnv(os.Environ(), "TMUX")
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
	// attach-session's own answer comes first.
	err = c.out.SetReadDeadline(time.Now().Add(p.timeout()))
	if err == nil {
		err = c.skipTo("%begin ")
	}
	if err == nil {
		_, err = c.answer(-1)
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

// block reads the next answer, which must hold exactly n lines. The
// notifications before it (lines starting with %) are skipped.
func (c *control) block(n int) ([]string, error) {
	if err := c.skipTo("%begin "); err != nil {
		return nil, err
	}
	return c.answer(n)
}

// skipTo reads lines up to one starting with prefix: notifications,
// which start with %; anything else is out of step.
func (c *control) skipTo(prefix string) error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, prefix) {
			return nil
		}
		if !strings.HasPrefix(line, "%") {
			return fmt.Errorf("tmux control client out of step: %q", line)
		}
	}
}

// answer reads an answer's n lines, taken as they are, and its end line
// (%end; %error is a failed command). n < 0: as many as come before the
// end.
func (c *control) answer(n int) ([]string, error) {
	var lines []string
	for n < 0 || len(lines) < n {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if n < 0 && (strings.HasPrefix(line, "%end ") || strings.HasPrefix(line, "%error ")) {
			return lines, endError(line, lines)
		}
		lines = append(lines, line)
	}
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	return lines, endError(line, lines)
}

// endError checks the line that ends an answer.
func endError(line string, lines []string) error {
	switch {
	case strings.HasPrefix(line, "%end "):
		return nil
	case strings.HasPrefix(line, "%error "):
		return fmt.Errorf("tmux: %s", strings.Join(lines, "; "))
	}
	return fmt.Errorf("tmux control client out of step: %q where an answer ends", line)
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
