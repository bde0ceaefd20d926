package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/ready"
)

// An error the agent has answered past (a later prompt and reply) is not
// the state of the screen: each profile says where its messages start
// (codex "• " and "› ", gemini "✦ " and " > ", aider's "Tokens: " line).
func TestAnsweredErrorIsNotTheState(t *testing.T) {
	for agent, p := range map[string]*Profile{"codex": Codex(), "gemini": Gemini()} {
		t.Run(agent, func(t *testing.T) {
			v := p.Judge(agentScreen(t, agent, "error-answered-since.txt"), now)
			if v.State != Idle {
				t.Errorf("%+v, want idle", v)
			}
		})
	}
}

func TestProfileCommands(t *testing.T) {
	cases := map[string]string{
		"codex": "codex", "/usr/local/bin/codex": "codex",
		"gemini": "gemini", "/home/u/.npm-global/bin/gemini": "gemini",
		"aider": "aider", "/home/u/.local/bin/aider": "aider",
		"opencode": "opencode", "/home/u/.opencode/bin/opencode": "opencode",
		"codex-exec": "generic", "npx": "generic",
	}
	for cmd, want := range cases {
		if got := For([]string{cmd}).Name; got != want {
			t.Errorf("For(%q) = %s, want %s", cmd, got, want)
		}
	}
	for _, p := range []*Profile{Codex(), Gemini(), Aider(), OpenCode()} {
		if q, ok := Lookup(p.Name); !ok || q != p {
			t.Errorf("Lookup(%q)", p.Name)
		}
		if !p.CanTellIdle() {
			t.Errorf("%s: CanTellIdle false", p.Name)
		}
		if !strings.Contains(p.Source, "testdata/"+p.Name+"/README.md") {
			t.Errorf("%s: Source does not point to its testdata README: %q", p.Name, p.Source)
		}
		// Every dialog kind a profile names has its fix.
		for _, d := range p.Dialogs {
			if p.Hints[d.Kind] == "" {
				t.Errorf("%s: no hint for its %s", p.Name, d.Kind)
			}
		}
	}
}

// The profile's own dialogs are tried before the generic ones, which name
// them less exactly; a profile without its own keeps ready.Stuck's kinds.
func TestStuckOrder(t *testing.T) {
	approval := agentScreen(t, "codex", "dialog-approval-exec.txt")
	if kind, _ := ready.Stuck(approval); kind != ready.StuckMenu {
		t.Fatalf("ready.Stuck = %q: the generic menu pattern no longer matches codex's list", kind)
	}
	if kind, _, ok := Codex().Stuck(approval); !ok || kind != StuckApproval {
		t.Errorf("Codex.Stuck = %q %v, want %q", kind, ok, StuckApproval)
	}
	if kind, _, ok := Claude().Stuck(approval); !ok || kind != ready.StuckMenu {
		t.Errorf("Claude.Stuck = %q %v, want %q", kind, ok, ready.StuckMenu)
	}
	if _, _, ok := Gemini().Stuck(agentScreen(t, "gemini", "idle-after-turn.txt")); ok {
		t.Error("gemini idle screen taken for a dialog")
	}
}

// Agents talk about the words their dialogs use: a mention in a reply is
// not a dialog.
func TestDialogPatternsAreNarrow(t *testing.T) {
	cases := map[*Profile]string{
		Codex():    "• I would ask: would you like to run the tests? The trust prompt says Do you trust the contents.\n› Ask Codex to do anything\n",
		Gemini():   "✦ Pick one:\n  1. Allow once\n  2. No, suggest changes\n >   Type your message or @path/to/file\n",
		Aider():    "The prompt reads (Y)es/(N)o [Yes]: and waits.\nTokens: 1k sent, 20 received.\n>\n",
		OpenCode(): "  The permission row offers Allow once or Reject.\n  ctrl+p commands\n",
	}
	for p, screen := range cases {
		if v := p.Judge(screen, now); v.State != Idle {
			t.Errorf("%s: %q judged %+v, want idle", p.Name, screen, v)
		}
	}
}

func TestFatalStartErrors(t *testing.T) {
	cases := []struct {
		p    *Profile
		text string
		hint string // part of the hint
	}{
		{Codex(), "Not inside a trusted directory and --skip-git-repo-check was not specified.\n", "--skip-git-repo-check"},
		{Codex(), "Error loading configuration: ~/.codex/config.toml:3:1: invalid key\n", "config.toml"},
		{Gemini(), "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, ...\n", "GEMINI_CLI_TRUST_WORKSPACE=true"},
		{Gemini(), "Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA\n", "GEMINI_API_KEY"},
		{Aider(), agentScreen(t, "aider", "fatal-no-model.txt"), "--model"},
		{Aider(), "aider: error: unrecognized arguments: --yes\n", "aider --help"},
	}
	for _, c := range cases {
		line, hint, ok := c.p.FatalIn(c.text)
		if !ok || line == "" || !strings.Contains(hint, c.hint) {
			t.Errorf("%s: FatalIn(%q) = %q %q %v, want a hint with %q", c.p.Name, c.text, line, hint, ok, c.hint)
		}
	}
	if _, _, ok := OpenCode().FatalIn("anything"); ok {
		t.Error("opencode has no fatal patterns")
	}
}

// The reset times of these agents' limit messages, as ParseReset reads
// them (now is 14:00 UTC, the machine's zone, as the agents print local
// times).
func TestParseResetAgentMessages(t *testing.T) {
	cases := []struct {
		msg  string
		want time.Time
	}{
		// codex RateLimitedError.
		{"■ rate limited (status 429 Too Many Requests), retry after 42s, request id: req_1", now.Add(42 * time.Second)},
		// gemini useQuotaAndFallback.ts: local time and a zone abbreviation,
		// which ParseReset ignores (the agent runs on this machine).
		{"Access resets at 3:45 PM PST.", time.Date(2026, 11, 26, 15, 45, 0, 0, time.UTC)},
		// codex UsageLimitReachedError, today and another day.
		{"You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM.", time.Date(2026, 11, 26, 15, 28, 0, 0, time.UTC)},
		{"You've hit your usage limit. Try again at Nov 28th, 2026 9:05 AM.", time.Date(2026, 11, 28, 9, 5, 0, 0, time.UTC)},
		// The Gemini API's quota message: fractional seconds.
		{"Please retry in 41.317031s. (Status: RESOURCE_EXHAUSTED)]", now.Add(41317031 * time.Microsecond)},
	}
	for _, c := range cases {
		got, ok := ParseReset(c.msg, now)
		if !ok || !got.Equal(c.want) {
			t.Errorf("ParseReset(%q) = %s %v, want %s", c.msg, got, ok, c.want)
		}
	}
}

// The working patterns match the lines their comments quote (a guard
// against an escaping slip), and not the agent's prose about them.
func TestWorkingLines(t *testing.T) {
	cases := map[*Profile][]string{
		Codex():    {"• Working (0s • esc to interrupt)", "  Investigating rendering code (0s • Esc to interrupt)", "◦ Reconnecting... 3/5 (1m 05s • esc to interrupt)"},
		Gemini():   {" ⠋ Thinking... (esc to cancel, 1m 2s)", "⠙ Trying to reach gemini-2.5-pro (Attempt 3/10) (esc to cancel, 5s)"},
		Aider():    {"░█         Waiting for gpt-4o", "        █░ Waiting for anthropic/claude-sonnet-4", "  =#       Waiting for o3"},
		OpenCode(): {"   ⣾  esc interrupt", "   [⋯]  esc again to interrupt"},
	}
	for p, lines := range cases {
		for _, l := range lines {
			if !p.matchAny(l, p.Working) {
				t.Errorf("%s: %q is not a working line", p.Name, l)
			}
		}
	}
	notWorking := map[*Profile]string{
		Codex():    "• Ran go test ./... (5s)",
		Gemini():   "✦ Press esc to cancel the edit.",
		Aider():    "Waiting for the tests to finish, I ran them again.",
		OpenCode(): "  I pressed esc to interrupt it.",
	}
	for p, l := range notWorking {
		if p.matchAny(l, p.Working) {
			t.Errorf("%s: %q taken for a working line", p.Name, l)
		}
	}
	// Aider's input box is a bare prompt; a sent one keeps its text.
	for l, want := range map[string]bool{">": true, "ask>": true, "architect multi>": true, "multi> ": true, "> do the task": false, ">>>>>>> REPLACE": false} {
		if Aider().matchAny(l, Aider().InputBox) != want {
			t.Errorf("aider: %q as its input box: %v, want %v", l, !want, want)
		}
	}
}
