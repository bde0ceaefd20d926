// Package templates holds the text swarm writes for users: ralph prompt
// templates and the agent-instructions section of swarm init, embedded in
// the binary so one file is all a user installs.
package templates

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed ralph/*.md agents-section.md
var files embed.FS

// DefaultRalph is the template swarm ralph init writes without --template.
const DefaultRalph = "default"

// Ralph returns the named ralph prompt template.
func Ralph(name string) (string, error) {
	if name == "" {
		name = DefaultRalph
	}
	data, err := files.ReadFile("ralph/" + name + ".md")
	if err != nil {
		return "", fmt.Errorf("unknown template '%s' (available: %s)", name, strings.Join(RalphNames(), ", "))
	}
	return string(data), nil
}

// ralphSummaries say in one line what each ralph template is for
// (swarm ralph template --list).
var ralphSummaries = map[string]string{
	"default": "swarm.py's minimal prompt: study specs/ and CLAUDE.md, do the most important task, test, commit; no completion signal",
	"plan":    "one task of IMPLEMENTATION_PLAN.md per iteration; <promise>COMPLETE</promise> when every task is done",
	"promise": "one task per iteration, with status lines: COMPLETE, BLOCKED:reason, DECIDE:question, TASK-ID:DONE",
}

// RalphSummary is the named template's one-line description.
func RalphSummary(name string) string {
	return ralphSummaries[name]
}

// CompletionTag is the completion signal a loop stops on by default.
const CompletionTag = "<promise>COMPLETE</promise>"

// HasCompletionSignal reports whether a prompt tells the agent to print
// the completion signal; a loop on one that does not runs until its cap.
func HasCompletionSignal(prompt string) bool {
	return strings.Contains(prompt, CompletionTag)
}

// RalphNames lists the ralph templates.
func RalphNames() []string {
	entries, _ := files.ReadDir("ralph")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".md"))
	}
	sort.Strings(names)
	return names
}

// AgentsSection is the "Process Management (swarm)" section of swarm init.
func AgentsSection() string {
	data, _ := files.ReadFile("agents-section.md")
	return string(data)
}
