package ralph

import (
	"strings"
	"unicode/utf8"

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
	// Stuck names a setup screen a human must pass (theme picker, login
	// method, OAuth code), "" for none.
	Stuck string
	// Compacting: the agent is compacting its context; its context is
	// gone and it is restarted fresh.
	Compacting bool
	// Context is the gauge's level and ContextPercent its reading.
	Context        ContextLevel
	ContextPercent int
}

// JudgeScreen reads the screen of an agent that was given prompt. It is a
// pure function of its inputs. Lines that are part of the prompt (as the
// agent echoed it, however re-wrapped or framed) are dropped first: the
// prompt's own words must not look like a stuck screen, a compaction or a
// context gauge. maxContext is --max-context (0: off).
func JudgeScreen(screen, prompt string, maxContext int) ScreenVerdict {
	own := withoutEcho(screen, prompt)
	var v ScreenVerdict
	v.Stuck, _ = ready.Stuck(own)
	v.Compacting = ready.FatalPattern.MatchString(own)
	if maxContext > 0 {
		if pct, ok := ready.ContextPercent(own); ok {
			v.ContextPercent = pct
			switch {
			case pct >= maxContext+contextRestartMargin:
				v.Context = ContextRestart
			case pct >= maxContext:
				v.Context = ContextNudge
			}
		}
	}
	return v
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
