package ralph

import (
	"testing"

	"github.com/swarmtools/swarm/internal/tmux"
)

// A prompt is judged as it is typed: the paste drops escape sequences and
// control characters (tmux.SanitizePaste), so a prompt file that starts
// with one of them and then '!' reaches Claude Code's input box starting
// with '!' and runs in its shell (issue 27, item 15). Each is refused as
// the plain '!' is; the same characters before other text are not.
func TestShellPromptIsJudgedAsPasted(t *testing.T) {
	p := profileFor("claude", nil)
	for _, prompt := range []string{
		"!touch PWNED\n",
		"\x1b[0m!touch PWNED\n",
		"\x1b]0;title\x07!touch PWNED\n",
		"\x00!touch PWNED\n",
		"\v\f !touch PWNED\n",
		"\u0085!touch PWNED\n",
		"\x1b[0m\n  \x07!touch PWNED\n",
	} {
		if err := shellPromptError(ModeType, p, prompt, "P.md", "fix it"); err == nil {
			t.Errorf("%q (pasted as %q) is not refused", prompt, tmux.SanitizePaste(prompt))
		}
	}
	for _, prompt := range []string{"\x1b[1mfix\x1b[0m the tests\n!touch is fine here\n", "fix the tests\n"} {
		if err := shellPromptError(ModeType, p, prompt, "P.md", "fix it"); err != nil {
			t.Errorf("%q refused: %v", prompt, err)
		}
	}
}

// Claude Code run through npx or a script gets the generic profile (which
// knows its banner): a '!' prompt is refused there too.
func TestShellPromptIsRefusedForClaudeCodeThroughAScript(t *testing.T) {
	p := profileFor("", []string{"npx", "@anthropic-ai/claude-code"})
	if err := shellPromptError(ModeType, p, "!touch PWNED\n", "P.md", "fix it"); err == nil {
		t.Errorf("a '!' prompt for %s's profile is not refused", p.Name)
	}
}
