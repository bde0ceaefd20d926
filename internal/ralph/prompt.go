package ralph

import (
	"fmt"
	"strings"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// MaxArgPromptBytes is the longest prompt --prompt-mode arg can pass:
// Linux takes at most 32 pages (MAX_ARG_STRLEN, 131072 bytes) in one
// argument, its terminating NUL included. exec of a longer one fails
// (E2BIG), which the agent's wrapper shell reports only as a command that
// cannot be executed (exit 126).
const MaxArgPromptBytes = 131072 - 1

// argPromptError is the error of a prompt too long to pass as one
// argument in mode (only --prompt-mode arg passes it so), or nil. The
// wrapper passes it as "$(cat FILE)", which drops trailing newlines.
func argPromptError(mode state.PromptMode, prompt string) error {
	n := len(strings.TrimRight(prompt, "\n"))
	if mode != ModeArg || n <= MaxArgPromptBytes {
		return nil
	}
	return hint.Errorf("use --prompt-mode stdin (or type), or shorten the prompt file",
		"the prompt (%d bytes) is too long for --prompt-mode arg (one argument can be at most %d bytes on Linux)", n, MaxArgPromptBytes)
}

// shellPromptError is the error of a prompt that the loop's agent would
// run in its shell if it were typed in (Claude Code's bash mode: a first
// line "!make deploy" runs make, with the user's rights, and no model
// sees it), or nil. Only typing goes through the input box; stdin and
// arg hand the text to the agent as a prompt. file names the prompt
// file in the message, fix says what to do.
func shellPromptError(mode state.PromptMode, p *agent.Profile, prompt, file, fix string) error {
	if mode != "" && mode != ModeType {
		return nil
	}
	// Judged as typed: the paste drops escape sequences and control
	// characters, so "\x1b[0m!cmd" reaches the input box as "!cmd".
	prefix, does, ok := p.ShellCommand(tmux.SanitizePaste(prompt))
	if !ok {
		return nil
	}
	return hint.Errorf(fix, "the prompt file %s starts with '%s', and %s %s; it is not typed in", file, prefix, p.Name, does)
}

// PromptWarning says, for a loop about to be spawned, what is wrong with
// how its prompt would reach the agent, or "" when nothing is: a prompt
// typed into an agent whose input box does not send a message beginning
// with its first character to the model (Claude Code runs "/fix" as a
// slash command) would never be worked on, every iteration. One it would
// run in its shell ("!ls") is not warned of but refused (checkSpawn).
// A prompt file that cannot be read is left to the spawn's own check.
func PromptWarning(o Options, command []string) string {
	if o.PromptMode != "" && o.PromptMode != ModeType {
		return ""
	}
	prompt, err := readPrompt(o.PromptFile)
	if err != nil {
		return ""
	}
	p, ok := agent.Lookup(o.Agent)
	if !ok {
		p = agent.For(command)
	}
	prompt = tmux.SanitizePaste(prompt) // as typed (shellPromptError)
	if _, _, shell := p.ShellCommand(prompt); shell {
		return "" // refused by the spawn itself (shellPromptError)
	}
	prefix, does, ok := p.InputPrefix(prompt)
	if !ok {
		return ""
	}
	return fmt.Sprintf("the prompt file %s starts with '%s', and %s %s; start the file with other text", o.PromptFile, prefix, p.Name, does)
}
