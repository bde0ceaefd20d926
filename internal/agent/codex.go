package agent

import (
	"regexp"

	"github.com/swarmtools/swarm/internal/ready"
)

// Codex returns the profile of the OpenAI Codex CLI (npm @openai/codex,
// command codex), its full-screen TUI. No screen of it was captured: the
// patterns are the strings its TUI draws, read in the openai/codex sources
// (codex-rs/tui and codex-rs/core, 2025-2026; testdata/codex/README.md
// names the files and commits), and the test screens are written after
// them:
//
//   - working: the status row above the composer, "• Working (14s • esc
//     to interrupt)"; the header changes ("Reconnecting... 2/5" while it
//     retries a dropped stream) but the "esc to interrupt" hint stays. The
//     row is hidden while a reply streams in, so an answer that streams
//     for longer than --idle-grace could read as idle;
//   - idle: the composer, "› Ask Codex to do anything" (or what is being
//     typed), with the footer "? for shortcuts" / "N% context left", and
//     no status row;
//   - it prints no line when a turn ends ("─ Worked for 1m 12s ─" comes
//     before the final answer, and only after long turns);
//   - an error that ended the turn is a history line "■ message";
//   - a usage limit: "■ You've hit your usage limit. ... try again at
//     3:28 PM." (a date when the reset is another day).
var Codex = register("codex", []string{"codex"}, func() *Profile {
	return &Profile{
		// Lines that start a message or a prompt: an error above the last one
		// has been answered past.
		MessageStart: []*regexp.Regexp{regexp.MustCompile(`^\s*[•›] `)},
		Telemetry:    Telemetry{Events: true, Tokens: true},
		reporter:     codexReporter{},
		Source:       "the openai/codex TUI sources (codex-rs/tui, codex-rs/core), not captured screens: see internal/agent/testdata/codex/README.md",
		Working: []*regexp.Regexp{
			// status_indicator_widget.rs: "(<elapsed> • esc to interrupt)";
			// the key was printed "Esc" in some versions.
			regexp.MustCompile(`(?i)\besc to interrupt\b`),
		},
		InputBox: []*regexp.Regexp{
			// The composer's prompt mark (U+203A) at the start of a line.
			regexp.MustCompile(`^›(\s|\x{00a0}|$)`),
			regexp.MustCompile(`(?i)\? for shortcuts`),
			regexp.MustCompile(`\b\d{1,3}% context left\b`),
		},
		APIError: []*regexp.Regexp{
			// history_cell.rs new_error_event: every error event (stream
			// disconnected, retry limit, unexpected status, ...) is one
			// "■ " line, and an error event ends the turn.
			regexp.MustCompile(`^■ `),
		},
		Limit: []*regexp.Regexp{
			// core/src/error.rs UsageLimitReachedError (ChatGPT plans).
			regexp.MustCompile(`(?i)you've hit your usage limit`),
			// QuotaExceeded (API key without credit).
			regexp.MustCompile(`(?i)quota exceeded\. check your plan and billing details`),
			// RateLimitedError, after its own retries: "rate limited (status
			// 429 Too Many Requests), retry after 42s".
			regexp.MustCompile(`(?i)^■ rate limited \(status \d{3}`),
		},
		Fatal: []Fatal{
			{regexp.MustCompile(`(?i)not inside a trusted directory and --skip-git-repo-check was not specified`),
				"codex exec runs only in a git repository: add --skip-git-repo-check (or run in the worktree swarm made)"},
			{regexp.MustCompile(`(?i)^error loading configuration:`),
				"fix ~/.codex/config.toml (or the -c overrides) named in the error"},
			{regexp.MustCompile("(?i)missing environment variable: `"),
				"set the variable the model provider needs with --env NAME=value"},
		},
		Dialogs: []DialogPattern{
			// onboarding/trust_directory.rs, newer and older wording.
			{StuckTrust, regexp.MustCompile(`(?i)do you trust the contents of this directory\?|allow codex to work in this folder without asking for approval`)},
			// onboarding/auth.rs and welcome.rs.
			{StuckLogin, regexp.MustCompile(`(?i)sign in with chatgpt to use codex|provide your own api key|paste or type your api key|finish signing in via your browser`)},
			// bottom_pane/approval_overlay.rs.
			{StuckApproval, regexp.MustCompile(`(?i)would you like to (run the following command|make the following edits|grant these permissions)\?|no, and tell codex what to do differently`)},
			// update_prompt.rs: "✨ Update available! 0.160.0 -> 0.161.0".
			{StuckUpdate, regexp.MustCompile(`(?i)update available!\s+\S+\s+->\s+\S+`)},
			// The footer of every list popup (model picker, approvals, ...).
			{ready.StuckMenu, regexp.MustCompile(`(?i)press enter to confirm or esc to (cancel|go back)`)},
		},
		InputPrefixes: map[string]string{
			"/": "runs a message that starts with '/' as one of its slash commands, not as a prompt",
		},
		Hints: map[string]string{
			StuckTrust:      `answer it once with: swarm attach NAME; or trust the folder in ~/.codex/config.toml: [projects."/abs/dir"] trust_level = "trusted" (or -c 'projects={"/abs/dir"={trust_level="trusted"}}')`,
			StuckLogin:      `log in once: printenv OPENAI_API_KEY | codex login --with-api-key (or run codex login by hand); codex exec also takes CODEX_API_KEY`,
			StuckApproval:   `start codex with --dangerously-bypass-approvals-and-sandbox (inside a container or VM only) or with -a never; answer this one with: swarm attach NAME`,
			StuckUpdate:     `start codex with -c check_for_update_on_startup=false (or set it in ~/.codex/config.toml)`,
			ready.StuckMenu: `answer it with: swarm attach NAME (the loop never answers a menu)`,
		},
	}
})
