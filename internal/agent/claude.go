package agent

import (
	"regexp"
	"sync"

	"github.com/swarmtools/swarm/internal/ready"
)

// Claude returns the profile of Claude Code (npm
// @anthropic-ai/claude-code). Its patterns are taken from screens of the
// real CLI, 2.1.197 (testdata/claude-code-*):
//
//   - working: the footer says "esc to interrupt" (also while it retries
//     an API error on its own: "✻ 529 Overloaded · Retrying in 1s");
//   - idle: its input box, a "❯" line between two rules, with no such
//     footer;
//   - a turn ends with a summary line, "✻ Worked for 1s" ("Churned",
//     "Cooked", ... for Ns);
//   - an API error that ended the turn is its last message: "● API Error:
//     Request rejected (429) · ..." or "● API Error: 529 Overloaded. ...";
//   - a subscription's usage limit: "5-hour limit reached ∙ resets 3pm",
//     "Claude usage limit reached. Your limit will reset at 5pm
//     (America/New_York)" (wording from its source and its users'
//     reports, not captured: the mock API cannot make it show them).
var Claude = register("claude", []string{"claude", "claude-code"}, func() *Profile {
	return &Profile{
		Source:    "screens of Claude Code 2.1.197 and 2.1.332 captured in tmux (internal/agent/testdata)",
		Telemetry: Telemetry{Events: true, Prompts: true, Cost: true, Tokens: true},
		reporter:  claudeReporter{},
		Working: []*regexp.Regexp{
			regexp.MustCompile(`(?i)esc to interrupt`),
			// Its spinner line ("✻ Churning…", "✻ 529 Overloaded · Retrying
			// in 1s"), for the moments its footer shows something else
			// ("paste again to expand").
			regexp.MustCompile(`(?i)^\s*[✻✶✳✢✽*·]\s+.*(…|retrying in \d+\s*s)`),
		},
		InputBox: []*regexp.Regexp{
			// The input box line: the cursor mark alone (tmux shows the NBSP
			// after it) or followed by what is being typed.
			regexp.MustCompile(`^[\s│]*❯(\s|\x{00a0}|$)`),
			regexp.MustCompile(`(?i)\? for shortcuts|shift\+tab to cycle`),
		},
		// What is typed follows the mark; a long paste shows as "[Pasted
		// text #1 +12 lines]" until it is submitted.
		InputLine:        regexp.MustCompile(`^[\s│]*❯(?:\s|\x{00a0}|$)(.*)$`),
		PastePlaceholder: regexp.MustCompile(`^\[Pasted text #\d+`),
		TurnDone: []*regexp.Regexp{
			regexp.MustCompile(`^\s*[✻✶✳✢✽*·]\s+\p{L}+ed for \d+(\.\d+)?\s*(s|m|h|ms)\b`),
		},
		APIError: []*regexp.Regexp{
			regexp.MustCompile(`^[●⏺]\s+API Error`),
		},
		Limit: []*regexp.Regexp{
			regexp.MustCompile(`(?i)usage limit reached|limit reached\s*[∙·•|]\s*resets?|(?:5|five)-hour limit reached|weekly limit reached|limit will reset at`),
			// 2.1 with a subscription: "⎿  You've hit your session limit ·
			// resets 9am (UTC)" ("weekly limit", or "limit" alone; 2.1.332:
			// "5-hour limit").
			regexp.MustCompile(`(?i)you've hit your (?:[\w-]+ )?limit`),
		},
		// On Pro and Max plans it then opens a menu of its own ("❯
		// /rate-limit-options", "❯ 1. Stop and wait for limit to reset"): a
		// limit to wait out, not a dialog. The command alone on its input
		// line, not named in a message: 2.1.332 says "● Automatic continue
		// cancelled · /rate-limit-options to wait again" when a message
		// typed at a limit (the loop's continuation) cancels its own, and
		// that line stays above the agent's answer, which is no limit.
		LimitMenu: []*regexp.Regexp{
			regexp.MustCompile(`(?i)^[\s\x{00a0}]*❯[\s\x{00a0}]*/rate-limit-options[\s\x{00a0}]*$|stop and wait for limit to reset`),
		},
		// Its messages start at the left edge ("● API Error: …"). Not the
		// default `^\s*● `: in a terminal under ~100 columns (tmux's default
		// 80x24, where swarm's loops run) the footer's effort gauge, "● high ·
		// /effort", wraps onto a line of its own below the input box, and
		// read as the start of a message it hid the error or limit above it
		// (the screen was judged idle: a failed turn counted as a success).
		MessageStart: []*regexp.Regexp{regexp.MustCompile(`^[●⏺] `)},
		Fatal: []Fatal{
			{regexp.MustCompile(`(?i)cannot be used with root/sudo privileges`),
				"as root, Claude Code needs IS_SANDBOX=1 for --dangerously-skip-permissions: add --env IS_SANDBOX=1 (inside a container or VM only)"},
			{regexp.MustCompile(`(?i)invalid api key|authentication_error`),
				"check ANTHROPIC_API_KEY (or log in once with: claude /login)"},
		},
		// A prompt that starts with "/" is run as a slash command: 2.1.197
		// answers "● Unknown command: /fix" (then "● Args from unknown
		// skill: <the rest>") and sends nothing to the model.
		ScreenFatal: []Fatal{
			{regexp.MustCompile(`(?i)^[●⏺⎿\s]*Unknown (slash )?command:?\s`),
				"the prompt starts with '/', which Claude Code runs as a slash command: start the prompt file with other text, then: swarm ralph resume NAME"},
		},
		// Its permission prompt for a tool (manual mode: "default" before
		// 2.1.200; acceptEdits and plan for what they do not allow), as
		// 2.1.197 and 2.1.332 draw it: "Do you want to proceed?" (a
		// command), "Do you want to make this edit to X?", "Do you want to
		// create X?", then "❯ 1. Yes" and at its foot "Esc to cancel". Its
		// hooks say the same sooner (PermissionRequest); this is the
		// screen's word for it, not a generic menu's.
		Dialogs: []DialogPattern{
			{StuckPermission, regexp.MustCompile(`(?is)do you want to (?:proceed|make this edit to[^\n]*|create[^\n]*)\?\s*\n\s*(?:❯\s*)?1\.\s*yes\b.*esc to cancel`)},
		},
		InputPrefixes: map[string]string{
			"/": "runs a message that starts with '/' as one of its slash commands, not as a prompt",
			"!": "runs a message that starts with '!' in its shell (bash mode): the prompt would run as a shell command",
		},
		ShellPrefix: "!",
		Hints: map[string]string{
			StuckTrust:       `answer it once with: swarm attach NAME; or set "hasTrustDialogAccepted": true for the folder under "projects" in ~/.claude.json`,
			StuckAPIKey:      `answer it once with: swarm attach NAME (choose Yes); or add the key's last 20 characters to "customApiKeyResponses.approved" in ~/.claude.json`,
			StuckBypass:      `answer it once with: swarm attach NAME (choose "Yes, I accept"); or set "skipDangerousModePermissionPrompt": true in ~/.claude/settings.json`,
			StuckTheme:       `finish Claude Code's first-run setup once with: swarm attach NAME; or set "hasCompletedOnboarding": true in ~/.claude.json`,
			StuckLogin:       `log in once by running claude by hand, or set ANTHROPIC_API_KEY`,
			StuckOAuth:       `finish the login once by running claude by hand`,
			StuckNotLoggedIn: `the API key was rejected or is missing: remove it from "customApiKeyResponses.rejected" in ~/.claude.json, or run claude once and /login`,
			ready.StuckMenu:  `answer it with: swarm attach NAME (the loop never answers a menu)`,
			StuckPermission:  `answer it with: swarm send NAME 1 (Yes) or swarm attach NAME; a loop that should not ask runs claude with --permission-mode auto or acceptEdits, or --dangerously-skip-permissions in a sandbox (docs/agents.md)`,
		},
	}
})

// setupDialogs are Claude Code's first-run, login and permission screens,
// in its own wording (its 2.1 screens, testdata/claude-code-*). Every
// profile knows them, after its own dialogs: Claude Code also runs under
// other command names (npx, a wrapper script), judged by another profile.
// They are kept narrow so that an agent talking about themes or logins
// does not look stuck; the most specific come first.
var setupDialogs = sync.OnceValue(func() []DialogPattern {
	return []DialogPattern{
		{StuckTheme, regexp.MustCompile(`(?i)choose the text style that looks best`)},
		{StuckLogin, regexp.MustCompile(`(?i)select login method:`)},
		{StuckOAuth, regexp.MustCompile(`(?i)paste code here if prompted`)},
		{StuckTrust, regexp.MustCompile(`(?i)is this a project you created or one you trust|yes, i trust this folder|do you trust the files in this folder`)},
		{StuckAPIKey, regexp.MustCompile(`(?i)detected a custom api key in your environment`)},
		{StuckBypass, regexp.MustCompile(`(?is)running in bypass permissions mode.*no, exit`)},
		{StuckNotLoggedIn, regexp.MustCompile(`(?i)not logged in\s*[·•∙]\s*(please\s+)?run /login`)},
	}
})
