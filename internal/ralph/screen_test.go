package ralph

import (
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
)

func TestJudgeScreen(t *testing.T) {
	cases := []struct {
		name       string
		screen     string
		prompt     string
		maxContext int
		want       ScreenVerdict
	}{
		{"plain work", "Reading files...\n> ", "", 0, ScreenVerdict{}},
		{"login picker", "Select login method:\n❯ 1. Claude account\n", "", 0, ScreenVerdict{Agent: dialog("login method picker", "Select login method:")}},
		{"theme picker", "Choose the text style that looks best with your terminal\n", "", 0, ScreenVerdict{Agent: dialog("theme picker", "Choose the text style that looks best with your terminal")}},
		{"oauth", "Paste code here if prompted >\n", "", 0, ScreenVerdict{Agent: dialog("OAuth code prompt", "Paste code here if prompted >")}},
		{"compaction", "✻ Compacting conversation…\n", "", 0, ScreenVerdict{Compacting: true}},
		{"prompt echo is not a compaction", "> If you see Compacting conversation, stop\n", "If you see Compacting conversation, stop", 0, ScreenVerdict{}},
		{"prompt echo is not a setup screen", "> Select login method: is a screen to report\n", "Select login method: is a screen to report", 0, ScreenVerdict{}},
		{"gauge off by default", "Context: 95%\n", "", 0, ScreenVerdict{}},
		{"gauge below", "Context: 60%\n", "", 80, ScreenVerdict{ContextPercent: 60}},
		{"gauge nudge", "Context: 85%\n", "", 80, ScreenVerdict{Context: ContextNudge, ContextPercent: 85}},
		{"gauge restart", "Context: 95%\n", "", 80, ScreenVerdict{Context: ContextRestart, ContextPercent: 95}},
		{"left until compact", "Context left until auto-compact: 4%\n", "", 80, ScreenVerdict{Context: ContextRestart, ContextPercent: 96}},
		{"gauge in the prompt echo", "> keep Context: 99% in mind\n", "keep Context: 99% in mind", 80, ScreenVerdict{}},
	}
	for _, c := range cases {
		got := JudgeScreen(Look{Screen: c.screen, Prompt: c.prompt, MaxContext: c.maxContext, Now: time.Now()})
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func dialog(kind, line string) agent.Verdict {
	return agent.Verdict{State: agent.Dialog, Kind: kind, Line: line}
}

// --max-context takes the agent's own figure (its status line's
// used_percentage) when it reports one, over its screen's gauge.
func TestJudgeScreenReportedContext(t *testing.T) {
	pct := func(f float64) *float64 { return &f }
	for _, c := range []struct {
		name     string
		screen   string
		reported *float64
		want     ScreenVerdict
	}{
		{"reported, no gauge on screen", "Working…\n", pct(85), ScreenVerdict{Context: ContextNudge, ContextPercent: 85}},
		{"reported over the screen's", "Context: 97%\n", pct(40.5), ScreenVerdict{ContextPercent: 40}},
		{"reported past the restart margin", "", pct(96), ScreenVerdict{Context: ContextRestart, ContextPercent: 96}},
		{"none reported: the screen's", "Context: 85%\n", nil, ScreenVerdict{Context: ContextNudge, ContextPercent: 85}},
	} {
		got := JudgeScreen(Look{Screen: c.screen, MaxContext: 80, Context: c.reported, Now: time.Now()})
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
