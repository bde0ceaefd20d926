package agent

import (
	"regexp"

	"github.com/swarmtools/swarm/internal/ready"
)

// OpenCode returns the profile of opencode (npm opencode-ai, command
// opencode; the sst, now anomalyco, project), its full-screen OpenTUI
// interface, version 1.x. Not the archived Go opencode-ai/opencode, whose
// command had the same name. No screen of it was captured: the patterns are
// the strings of its TUI sources (packages/opencode/src/cli/cmd/tui;
// testdata/opencode/ README.md names files and commits), and the test
// screens are written after them:
//
//   - working: under the prompt box, while the session is busy, a
//     spinner and "esc interrupt" ("esc again to interrupt" after one
//     Esc); while it retries an API error on its own the same row shows
//     the error and "[retrying in 28s attempt #3]". It retries such
//     errors without end, so a rate limit reads as working;
//   - idle: the prompt box's footer "ctrl+p commands" (and "tab agents"
//     when no usage is shown yet) with no "esc interrupt";
//   - no line marks the end of a turn ("▣ Build · model · 41.2s" is
//     drawn under the last reply while it still runs, too);
//   - an API error that ended the turn is the provider's own message in
//     a bordered box, with no wording of opencode's to match: the profile
//     has no APIError patterns, so such a turn reads as idle.
var OpenCode = register("opencode", []string{"opencode"}, func() *Profile {
	return &Profile{
		Source: "the opencode TUI sources (anomalyco/opencode, packages/opencode/src/cli/cmd/tui), not captured screens: see internal/agent/testdata/opencode/README.md",
		Working: []*regexp.Regexp{
			// component/prompt/index.tsx, shown while status is not idle.
			regexp.MustCompile(`(?i)\besc (again to )?interrupt\b`),
			regexp.MustCompile(`\[retrying (in \S+ )?attempt #\d+\]`),
		},
		InputBox: []*regexp.Regexp{
			// The prompt's footer (default keybinds), and the older wording
			// the generic profile also knows.
			regexp.MustCompile(`(?i)\bctrl\+p\s+commands\b`),
			regexp.MustCompile(`(?i)\btab\s+(agents|switch agent)\b`),
		},
		Dialogs: []DialogPattern{
			// routes/session/permission.tsx.
			{StuckApproval, regexp.MustCompile(`△ Permission required|Allow once\s+Allow always\s+Reject`)},
			// routes/session/question.tsx: the agent asks the human.
			{ready.StuckMenu, regexp.MustCompile(`(?i)enter (submit|confirm|toggle)\s+esc dismiss`)},
		},
		InputPrefixes: map[string]string{
			"/": "runs a message that starts with '/' as one of its slash commands, not as a prompt",
		},
		Hints: map[string]string{
			StuckApproval:   `start opencode with --auto (opencode run --auto for one-shot runs), or set "permission": "allow" in opencode.json; answer this one with: swarm attach NAME`,
			ready.StuckMenu: `the agent asks a question: answer it with: swarm attach NAME (the loop never answers a menu)`,
		},
	}
})
