// Package tmuxtest is an in-memory tmux server for unit tests of the code
// that drives tmux (internal/worker, internal/ralph). It implements the
// methods those packages declare in their own interfaces; programs in its
// panes are played by Go functions (Program), so a test scripts an agent's
// screen, output and exit without a terminal.
//
// The real tmux layer has its own tests against real tmux; black-box tests
// of swarm run the real binary. This fake is for the decisions in between:
// rollbacks, loop outcomes, error paths.
package tmuxtest

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/swarmtools/swarm/internal/tmux"
)

// ErrNotFound is returned for a target that does not exist; it satisfies
// tmux.IsNotFound like the real server's "can't find window".
var ErrNotFound = &tmux.Error{Args: []string{"fake"}, Stderr: "can't find window", Err: errors.New("exit status 1")}

// Program plays what runs in a pane. Start is called when the pane's
// command starts (new window or respawn); Input when text or keys arrive.
// Both run with the server unlocked and may call the Pane's methods.
type Program interface {
	Start(p *Pane, command []string)
	Input(p *Pane, text string, keys []string)
}

// Server is a fake tmux server.
type Server struct {
	mu      sync.Mutex
	next    int
	windows map[string]*Pane // by window id
	order   []string
	// Program returns the program that runs a command (nil: an idle one).
	Program func(command []string) Program
	// FailNewWindow, when set, is returned by NewWindow.
	FailNewWindow error
	// Calls counts calls by method name.
	Calls map[string]int
	gone  bool // killed (KillServer) and not started again
	// life counts the servers started (PaneStatus.Server): a new one
	// after KillServer numbers its windows from the start again, as tmux
	// does.
	life int
}

// New returns an empty fake server.
func New() *Server {
	return &Server{windows: map[string]*Pane{}, Calls: map[string]int{}}
}

// Pane is one window's only pane.
type Pane struct {
	srv        *Server
	Session    string
	Name       string
	ID         string
	Tag        string // tmux.WindowSpec.Tag
	mu         sync.Mutex
	screen     string
	dead       bool
	exit       int
	hasExit    bool
	pipe       string
	Pasted     []string // texts pasted into the pane, in order
	Keys       []string // key names sent, in order
	Typed      []string // literal texts typed
	Commands   [][]string
	RemainOpen bool
	prog       Program
}

func (s *Server) count(name string) {
	s.mu.Lock()
	s.Calls[name]++
	s.mu.Unlock()
}

// Window returns the pane of a window by id or name (nil if none).
func (s *Server) Window(idOrName string) *Pane {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.windows[idOrName]; ok {
		return p
	}
	for _, id := range s.order {
		if p := s.windows[id]; p != nil && p.Name == idOrName {
			return p
		}
	}
	return nil
}

// Windows returns the ids of the live windows.
func (s *Server) Windows() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.order {
		if _, ok := s.windows[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

func (s *Server) lookup(target string) (*Pane, error) {
	if p := s.Window(target); p != nil {
		return p, nil
	}
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone {
		return nil, ErrNoServer
	}
	return nil, ErrNotFound
}

// ErrNoServer is what a call to a server that is gone returns; it
// satisfies tmux.IsNoServer.
var ErrNoServer = &tmux.Error{Args: []string{"fake"}, Stderr: "no server running on /tmp/tmux-0/fake", Err: errors.New("exit status 1")}

// KillServer ends the server as tmux kill-server does: every window goes;
// calls fail with ErrNoServer until a new window starts it again.
func (s *Server) KillServer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows = map[string]*Pane{}
	s.order = nil
	s.gone = true
}

// ServerID is the identity of the server that answers now
// (tmux.PaneStatus.Server).
func (s *Server) ServerID() (string, error) {
	s.count("ServerID")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return "", ErrNoServer
	}
	return fmt.Sprint(s.life), nil
}

// ListPanes lists every window's pane.
func (s *Server) ListPanes() ([]tmux.Pane, error) {
	s.count("ListPanes")
	return s.panes(), nil
}

// WindowPanes lists the pane of one window (by id); none when it does
// not exist.
func (s *Server) WindowPanes(target string) ([]tmux.Pane, error) {
	s.count("WindowPanes")
	var out []tmux.Pane
	for _, p := range s.panes() {
		if p.WindowID == target {
			out = append(out, p)
		}
	}
	return out, nil
}

// panes lists every window's pane.
func (s *Server) panes() []tmux.Pane {
	s.mu.Lock()
	ids := append([]string(nil), s.order...)
	s.mu.Unlock()
	var out []tmux.Pane
	for _, id := range ids {
		p := s.Window(id)
		if p == nil {
			continue
		}
		p.mu.Lock()
		out = append(out, tmux.Pane{Session: p.Session, WindowName: p.Name, WindowID: p.ID,
			Tag: p.Tag, Liveness: p.liveness()})
		p.mu.Unlock()
	}
	return out
}

// Lookup finds a window by exact session and name.
func (s *Server) Lookup(session, name string) (tmux.Window, bool, error) {
	panes, _ := s.ListPanes()
	w, ok := tmux.FindWindow(tmux.Windows(panes), session, name)
	return w, ok, nil
}

// NewWindow creates a window running spec.Command.
func (s *Server) NewWindow(spec tmux.WindowSpec) (string, error) {
	s.count("NewWindow")
	if s.FailNewWindow != nil {
		return "", s.FailNewWindow
	}
	if spec.Launch != nil {
		command, _, err := spec.Launch()
		if err != nil {
			return "", err
		}
		spec.Command = command
	}
	s.mu.Lock()
	if s.gone {
		// A new server: window ids start again.
		s.gone, s.next = false, 0
		s.life++
	}
	s.next++
	p := &Pane{srv: s, Session: spec.Session, Name: spec.Name, ID: fmt.Sprintf("@%d", s.next), Tag: spec.Tag}
	s.windows[p.ID] = p
	s.order = append(s.order, p.ID)
	s.mu.Unlock()
	p.start(spec.Command)
	return p.ID, nil
}

// KillWindow removes a window; a missing one is success, as in tmux.Client.
func (s *Server) KillWindow(target string) error {
	s.count("KillWindow")
	p := s.Window(target)
	if p == nil {
		return nil
	}
	s.mu.Lock()
	delete(s.windows, p.ID)
	s.mu.Unlock()
	return nil
}

// Respawn restarts the pane with spec.Command, piping its output to
// spec.PipeTo.
func (s *Server) Respawn(target string, spec tmux.RespawnSpec) error {
	s.count("Respawn")
	p, err := s.lookup(target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.pipe, p.screen, p.dead, p.hasExit = spec.PipeTo, "", false, false
	p.RemainOpen = spec.RemainOnExit
	p.mu.Unlock()
	p.start(spec.Command)
	return nil
}

// PipeTo pipes the pane's output to path, in place of any pipe.
func (s *Server) PipeTo(target, path string, via []string) error {
	s.count("PipeTo")
	p, err := s.lookup(target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.pipe = path
	p.mu.Unlock()
	return nil
}

// PipePath is where the pane's output is piped ("": nowhere).
func (p *Pane) PipePath() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pipe
}

// StopPipe stops piping the pane's output, as tmux does when the program
// it pipes to dies.
func (p *Pane) StopPipe() {
	p.mu.Lock()
	p.pipe = ""
	p.mu.Unlock()
}

// Poll returns the pane's state and screen.
func (s *Server) Poll(target string) (tmux.PaneStatus, string, error) {
	s.count("Poll")
	p, err := s.lookup(target)
	if err != nil {
		return tmux.PaneStatus{}, "", err
	}
	s.mu.Lock()
	life := s.life
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := tmux.PaneStatus{Liveness: p.liveness(), Height: 24, Width: 80, Piped: p.pipe != "", Server: fmt.Sprint(life), Tag: p.Tag}
	return st, p.screen, nil
}

// Capture returns the pane's screen.
func (s *Server) Capture(target string, o tmux.CaptureOptions) (string, error) {
	s.count("Capture")
	_, screen, err := s.Poll(target)
	return screen, err
}

// SendKeys delivers key names to the pane's program.
func (s *Server) SendKeys(target string, keys ...string) error {
	s.count("SendKeys")
	p, err := s.lookup(target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.Keys = append(p.Keys, keys...)
	p.mu.Unlock()
	p.input("", keys)
	return nil
}

// TypeText delivers literal text (and Enter).
func (s *Server) TypeText(target, text string, enter bool) error {
	s.count("TypeText")
	p, err := s.lookup(target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.Typed = append(p.Typed, text)
	p.mu.Unlock()
	var keys []string
	if enter {
		keys = []string{"Enter"}
	}
	p.input(text, keys)
	return nil
}

// Paste delivers text as one paste.
func (s *Server) Paste(target, text string) error {
	s.count("Paste")
	p, err := s.lookup(target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.Pasted = append(p.Pasted, text)
	p.mu.Unlock()
	p.input(text, nil)
	return nil
}

// Attach is refused: tests have no terminal.
func (s *Server) Attach(session, windowID string) error {
	return errors.New("fake tmux: no terminal to attach")
}

func (p *Pane) program(command []string) Program {
	if p.srv.Program == nil {
		return nil
	}
	return p.srv.Program(command)
}

func (p *Pane) start(command []string) {
	p.mu.Lock()
	p.Commands = append(p.Commands, command)
	p.mu.Unlock()
	if prog := p.program(command); prog != nil {
		p.mu.Lock()
		p.prog = prog
		p.mu.Unlock()
		prog.Start(p, command)
	}
}

func (p *Pane) input(text string, keys []string) {
	p.mu.Lock()
	prog, dead := p.prog, p.dead
	p.mu.Unlock()
	if prog != nil && !dead {
		prog.Input(p, text, keys)
	}
}

// liveness reports the pane's state; call with p.mu held.
func (p *Pane) liveness() tmux.Liveness {
	return tmux.Liveness{Dead: p.dead, Exit: p.exit, HasExit: p.hasExit && p.dead}
}

// SetScreen replaces what the pane shows.
func (p *Pane) SetScreen(screen string) {
	p.mu.Lock()
	p.screen = screen
	p.mu.Unlock()
}

// Print appends text to the screen and to the piped output.
func (p *Pane) Print(text string) {
	p.mu.Lock()
	p.screen += text
	pipe := p.pipe
	p.mu.Unlock()
	p.pipeOut(pipe, text)
}

// Draw writes out to the piped output and shows screen, the pane as a
// terminal renders that output, in one step, the screen first (tmux's
// pipe-pane lags the pane): a capture never sees out's raw text, as a
// real pane never shows it. Print then SetScreen left a moment in which
// a capture read the raw redrawn text.
func (p *Pane) Draw(out, screen string) {
	p.mu.Lock()
	p.screen = screen
	pipe := p.pipe
	p.mu.Unlock()
	p.pipeOut(pipe, out)
}

func (p *Pane) pipeOut(pipe, text string) {
	if pipe != "" {
		f, err := os.OpenFile(pipe, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err == nil {
			_, _ = f.WriteString(text) // as tmux's pipe-pane: a test reading the output sees what is missing
			_ = f.Close()              // as tmux's pipe-pane: a test reading the output sees what is missing
		}
	}
}

// Exit marks the pane's program exited with code.
func (p *Pane) Exit(code int) {
	p.mu.Lock()
	p.dead, p.exit, p.hasExit = true, code, true
	p.mu.Unlock()
}

// Dead reports whether the pane's program has exited.
func (p *Pane) Dead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

// Screen returns what the pane shows.
func (p *Pane) Screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screen
}

// Summary describes the server for failure messages.
func (s *Server) Summary() string {
	var b strings.Builder
	ids := s.Windows()
	sort.Strings(ids)
	for _, id := range ids {
		p := s.Window(id)
		fmt.Fprintf(&b, "%s %s:%s dead=%v pasted=%d keys=%v\n", id, p.Session, p.Name, p.Dead(), len(p.Pasted), p.Keys)
	}
	return b.String()
}
