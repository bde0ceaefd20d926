package tmuxtest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
)

// Agent plays an interactive agent CLI in fake panes: it shows Banner
// when started, collects pasted and typed text, and on Enter hands the
// message to OnMessage with the run number (1 for the first start).
type Agent struct {
	Banner string
	// OnStart, if set, runs when the agent starts (after the banner).
	OnStart func(p *Pane, run int)
	// OnMessage runs for each submitted message.
	OnMessage func(p *Pane, run int, msg string)
	// ShowInput, if set, shows text typed but not submitted (an input
	// box holding it), EchoAfter after the text first arrives. An Enter
	// before that echo is dropped, as Claude Code drops one in its first
	// seconds; DropEnters more Enters after it are dropped too.
	ShowInput  func(p *Pane, typed string)
	EchoAfter  time.Duration
	DropEnters int

	mu       sync.Mutex
	runs     int
	run      map[*Pane]int
	pending  map[*Pane]*strings.Builder
	echoAt   map[*Pane]time.Time
	messages []string
	dropped  int
}

// Start shows the banner and counts the run.
func (a *Agent) Start(p *Pane, command []string) {
	a.mu.Lock()
	a.runs++
	run := a.runs
	if a.run == nil {
		a.run, a.pending, a.echoAt = map[*Pane]int{}, map[*Pane]*strings.Builder{}, map[*Pane]time.Time{}
	}
	a.run[p] = run
	a.pending[p] = &strings.Builder{}
	a.mu.Unlock()
	banner := a.Banner
	if banner == "" {
		banner = "fake agent\n> "
	}
	p.SetScreen(banner)
	if a.OnStart != nil {
		a.OnStart(p, run)
	}
}

// Input collects text; Enter submits it, C-u clears it.
func (a *Agent) Input(p *Pane, text string, keys []string) {
	a.mu.Lock()
	buf := a.pending[p]
	if buf == nil {
		a.mu.Unlock()
		return
	}
	if text != "" && buf.Len() == 0 && a.ShowInput != nil {
		a.echoAt[p] = time.Now().Add(a.EchoAfter)
		go a.echo(p)
	}
	buf.WriteString(text)
	var submitted []string
	for _, k := range keys {
		switch k {
		case "Enter":
			if a.ShowInput != nil && buf.Len() > 0 && (time.Now().Before(a.echoAt[p]) || a.DropEnters > 0) {
				if !time.Now().Before(a.echoAt[p]) {
					a.DropEnters--
				}
				a.dropped++
				continue
			}
			submitted = append(submitted, buf.String())
			buf.Reset()
		case "C-u":
			buf.Reset()
		}
	}
	a.messages = append(a.messages, submitted...)
	run := a.run[p]
	a.mu.Unlock()
	for _, msg := range submitted {
		p.Print(msg + "\n")
		if a.OnMessage != nil {
			a.OnMessage(p, run, msg)
		}
	}
}

// echo shows the pane's pending text once its echo time has come, if it
// is still pending.
func (a *Agent) echo(p *Pane) {
	a.mu.Lock()
	wait := time.Until(a.echoAt[p])
	a.mu.Unlock()
	clock.Real.Sleep(context.Background(), wait)
	a.mu.Lock()
	typed := ""
	if buf := a.pending[p]; buf != nil {
		typed = buf.String()
	}
	a.mu.Unlock()
	if typed != "" {
		a.ShowInput(p, typed)
	}
}

// Dropped is how many Enters the agent dropped.
func (a *Agent) Dropped() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dropped
}

// Runs is how many times the agent was started.
func (a *Agent) Runs() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs
}

// Messages returns the messages submitted so far.
func (a *Agent) Messages() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.messages...)
}
