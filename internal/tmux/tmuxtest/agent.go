package tmuxtest

import (
	"strings"
	"sync"
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

	mu       sync.Mutex
	runs     int
	run      map[*Pane]int
	pending  map[*Pane]*strings.Builder
	messages []string
}

// Start shows the banner and counts the run.
func (a *Agent) Start(p *Pane, command []string) {
	a.mu.Lock()
	a.runs++
	run := a.runs
	if a.run == nil {
		a.run, a.pending = map[*Pane]int{}, map[*Pane]*strings.Builder{}
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
	buf.WriteString(text)
	var submitted []string
	for _, k := range keys {
		switch k {
		case "Enter":
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
