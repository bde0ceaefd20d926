package ralph

import (
	"fmt"

	"github.com/swarmtools/swarm/internal/agent"
)

// PromptWarning says, for a loop about to be spawned, what is wrong with
// how its prompt would reach the agent, or "" when nothing is: a prompt
// typed into an agent whose input box does not send a message beginning
// with its first character to the model (Claude Code runs "/fix" as a
// slash command and "!ls" in its shell) would never be worked on, every
// iteration. A prompt file that cannot be read is left to the spawn's own
// check.
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
	prefix, does, ok := p.InputPrefix(prompt)
	if !ok {
		return ""
	}
	return fmt.Sprintf("the prompt file %s starts with '%s', and %s %s; start the file with other text", o.PromptFile, prefix, p.Name, does)
}
