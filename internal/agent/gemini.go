package agent

import (
	"regexp"

	"github.com/swarmtools/swarm/internal/ready"
)

// Gemini returns the profile of Google's Gemini CLI (npm
// @google/gemini-cli, command gemini), its Ink TUI. No screen of it was
// captured: the patterns are the strings of google-gemini/gemini-cli at
// 5411f113 (v0.56.0-nightly.20260822, packages/cli/src/ui and
// packages/core/src/utils; testdata/gemini/ README.md names the files) and
// its own test snapshots; the test screens are written after them:
//
//   - working: the loading line above the input box ends in "(esc to
//     cancel, 4s)" while a reply is on its way, retries included
//     ("Trying to reach gemini-2.5-pro (Attempt 2/10)");
//   - idle: the input box, "> " ("* " in YOLO mode) and the placeholder
//     "Type your message or @path/to/file", with no such line. The box
//     stays on screen while it works and while a tool waits for approval,
//     so the approval list (● 1. Allow once ...) must read as a dialog;
//   - it prints no line when a turn ends;
//   - an API error that ended the turn: "✕ [API Error: ...]";
//   - a quota or rate limit after its retries: the same error with
//     "(Status: RESOURCE_EXHAUSTED)" and "Please wait and try again
//     later. ..."; a plan's usage limit is a menu (switch model, stop).
var Gemini = register("gemini", []string{"gemini"}, func() *Profile {
	return &Profile{
		// Lines that start a message or a prompt: an error above the last one
		// has been answered past.
		MessageStart: []*regexp.Regexp{regexp.MustCompile(`^\s*✦ `), regexp.MustCompile(`^ > \S`)},
		Source:       "the google-gemini/gemini-cli sources at 5411f113 (v0.56.0 nightly), not captured screens: see internal/agent/testdata/gemini/README.md",
		Working: []*regexp.Regexp{
			// LoadingIndicator.tsx: "(esc to cancel, 4s)", shown only while
			// the stream is responding.
			regexp.MustCompile(`(?i)\(esc to cancel, `),
		},
		InputBox: []*regexp.Regexp{
			// InputPrompt.tsx: the placeholder of the empty input box.
			regexp.MustCompile(`Type your message or @path/to/file`),
		},
		APIError: []*regexp.Regexp{
			// ErrorMessage.tsx prefix "✕ " and errorParsing.ts
			// parseAndFormatApiError "[API Error: ...]".
			regexp.MustCompile(`^✕ \[API Error: `),
		},
		Limit: []*regexp.Regexp{
			// The API's quota status, and errorParsing.ts's advice after a
			// 429 for API-key and Vertex users.
			regexp.MustCompile(`\(Status: RESOURCE_EXHAUSTED\)`),
			regexp.MustCompile(`(?i)please wait and try again later\. to increase your limits`),
		},
		Fatal: []Fatal{
			{regexp.MustCompile(`(?i)gemini cli is not running in a trusted directory`),
				"start gemini with --skip-trust, or add --env GEMINI_CLI_TRUST_WORKSPACE=true"},
			{regexp.MustCompile(`(?i)please set an auth method in your .*settings\.json`),
				`set GEMINI_API_KEY (--env) or "security": {"auth": {"selectedType": "gemini-api-key"}} in ~/.gemini/settings.json`},
			{regexp.MustCompile(`(?i)you must specify the gemini_api_key environment variable`),
				"add --env GEMINI_API_KEY=..."},
		},
		Dialogs: []DialogPattern{
			// ToolConfirmationMessage.tsx: every approval offers "No, suggest
			// changes (esc)"; from its question on when that shows too.
			{StuckApproval, regexp.MustCompile(`(?s)(?:Allow execution of|Apply this change\?|Do you want to proceed\?).*No, suggest changes \(esc\)|No, suggest changes \(esc\)`)},
			// ProQuotaDialog.tsx with useQuotaAndFallback.ts's message: its
			// first choice switches model, so it is never the loop's to pick.
			{StuckLimitMenu, regexp.MustCompile(`(?is)(usage limit reached for|experiencing high demand).*●\s*1\.\s`)},
			// auth/AuthDialog.tsx and ApiAuthDialog.tsx.
			{StuckLogin, regexp.MustCompile(`(?i)how would you like to authenticate for this project\?|paste your api key here`)},
			// FolderTrustDialog.tsx (Claude Code's trust pattern in
			// setupDialogs has the same wording, but the list under it
			// would read as a menu first).
			{StuckTrust, regexp.MustCompile(`(?i)do you trust the files in this folder\?`)},
			// LoopDetectionConfirmation.tsx.
			{ready.StuckMenu, regexp.MustCompile(`A potential loop was detected`)},
			// RadioButtonSelect: the chosen item of any other list is
			// "● 1. ...".
			{ready.StuckMenu, regexp.MustCompile(`(?m)^[ \t│]*●[ \t]*\d+\.[ \t]+\S`)},
		},
		InputPrefixes: map[string]string{
			"/": "runs a message that starts with '/' as one of its slash commands, not as a prompt",
			"!": "runs a message that starts with '!' in its shell (bash mode): the prompt would run as a shell command",
		},
		ShellPrefix: "!",
		Hints: map[string]string{
			StuckTrust:      `start gemini with --skip-trust or --env GEMINI_CLI_TRUST_WORKSPACE=true; or trust the folder in ~/.gemini/trustedFolders.json ({"/abs/dir": "TRUST_FOLDER"})`,
			StuckLogin:      `add --env GEMINI_API_KEY=... and set "security": {"auth": {"selectedType": "gemini-api-key"}} in ~/.gemini/settings.json; or log in once by running gemini by hand`,
			StuckApproval:   `start gemini with --yolo (or --approval-mode yolo); answer this one with: swarm attach NAME`,
			StuckLimitMenu:  `Gemini hit a usage limit and asks whether to switch model or stop: answer it with: swarm attach NAME (an API key with its own quota avoids the menu)`,
			ready.StuckMenu: `answer it with: swarm attach NAME (the loop never answers a menu); the loop-detection question is skipped with "model": {"disableLoopDetection": true} in ~/.gemini/settings.json`,
		},
	}
})
