package ralph

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/ready"
)

// compactionText names the fatal screen in the FATAL log line.
const compactionText = "Compacting conversation"

// ContextLevel is what the context gauge asks of the loop.
type ContextLevel int

const (
	ContextOK      ContextLevel = iota // no gauge, or below --max-context
	ContextNudge                       // at --max-context: ask the agent to wrap up
	ContextRestart                     // at --max-context+15: restart it
)

// ScreenVerdict is what one look at the agent's screen says.
type ScreenVerdict struct {
	// Agent is the agent profile's reading: working, idle, dialog,
	// limited, error (internal/agent).
	Agent agent.Verdict
	// Compacting: the agent is compacting its context; its context is
	// gone and it is restarted fresh.
	Compacting bool
	// Context is the gauge's level and ContextPercent its reading.
	Context        ContextLevel
	ContextPercent int
}

// Look is one observation of the agent's screen and what the judgement
// needs to read it.
type Look struct {
	Screen string
	// Prompt is what was delivered: its echo is not the agent's.
	Prompt     string
	MaxContext int // --max-context (0: off)
	Profile    *agent.Profile
	Limits     []*regexp.Regexp // --limit-pattern
	Now        time.Time
	// Context is how full the agent says its context is (its status
	// line), used instead of the screen's gauge; nil when it says not.
	Context *float64
}

// JudgeScreen reads one look at the agent. It is a pure function of the
// look. Lines that are part of the prompt (as the agent echoed it,
// however re-wrapped or framed) are dropped first: the prompt's own words
// must not look like a dialog, a limit, a compaction or a context gauge.
func JudgeScreen(l Look) ScreenVerdict {
	own := withoutEcho(l.Screen, l.Prompt)
	p := l.Profile
	if p == nil {
		p = agent.Generic()
	}
	v := ScreenVerdict{Agent: p.Judge(own, l.Now, l.Limits...)}
	v.Compacting = agent.Compacting(own)
	if l.MaxContext > 0 {
		if pct, ok := contextPercent(l, own); ok {
			v.ContextPercent = pct
			switch {
			case pct >= l.MaxContext+contextRestartMargin:
				v.Context = ContextRestart
			case pct >= l.MaxContext:
				v.Context = ContextNudge
			}
		}
	}
	return v
}

// contextPercent is how full the agent's context is: as the agent
// reported it, else as its screen's gauge shows it.
func contextPercent(l Look, own string) (int, bool) {
	if l.Context != nil {
		return int(*l.Context), true
	}
	return ready.ContextPercent(own)
}

// withoutEcho drops the screen lines that are part of the prompt (as the
// agent echoed it, however re-wrapped or framed), keeping the agent's own.
func withoutEcho(screen, prompt string) string {
	p := normalize(prompt)
	if p == "" {
		return screen
	}
	lines := strings.Split(screen, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if n := normalize(l); utf8.RuneCountInString(n) >= 4 && strings.Contains(p, n) {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}
