package agent

import (
	"regexp"
	"strings"
)

// Generic returns the profile of any other command: ready when a line shows
// Claude Code's or opencode's banner or footer (the agent run through npx
// or a script), or one of the generic ready prompts (internal/ready); it
// cannot tell working from idle, so an iteration ends when the agent exits
// or its screen stays unchanged for the inactivity timeout. Dialogs and
// setup screens are still never answered.
var Generic = register("generic", []string{"sh", "bash", "zsh", "fish", "dash"}, func() *Profile {
	return &Profile{
		Source: "the generic ready patterns of docs/agents.md",
		ReadyLines: []*regexp.Regexp{
			// Claude Code's footer and banner.
			regexp.MustCompile(`(?i)bypass\s+permissions`),
			regexp.MustCompile(`(?i)permissions?\s+mode`),
			regexp.MustCompile(`(?i)shift\+tab\s+to\s+cycle`),
			regexp.MustCompile(`Claude\s+Code\s+v\d+`),
			// opencode's banner and footer.
			regexp.MustCompile(`(?i)opencode\s+v\d+`),
			regexp.MustCompile(`(?i)tab\s+switch\s+agent`),
			regexp.MustCompile(`(?i)ctrl\+p\s+commands`),
		},
		// The command may be Claude Code run through npx or a script
		// (its banner above), which runs "!rm -rf build" in its shell:
		// such a prompt is never typed in (ShellCommand).
		InputPrefixes: map[string]string{
			"!": "may be Claude Code run through npx or a script, which runs a message that starts with '!' in its shell (bash mode): the prompt would run as a shell command",
		},
		ShellPrefix: "!",
	}
})

// CompactionText is what Claude Code shows while it compacts its context:
// what the agent knew is gone, and it is restarted fresh rather than left
// to continue.
const CompactionText = "Compacting conversation"

// Compacting reports whether screen shows an agent compacting its context
// (whatever its profile: the loop checks every agent's screen for it).
func Compacting(screen string) bool { return strings.Contains(screen, CompactionText) }
