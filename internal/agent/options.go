package agent

import (
	"path/filepath"
	"slices"
)

// ownOptions are the long options of an agent CLI that swarm's spawn
// commands have too: after the agent's command they are the agent's
// (claude --agent reviewer, claude --worktree), not a swarm flag put in
// the wrong place. The lists hold only the shared names.
var ownOptions = map[string][]string{
	"claude":   {"--agent", "--worktree", "--tmux"},
	"opencode": {"--agent"},
}

// OwnOption reports whether option (--name, without a value) is one the
// agent CLI that command runs takes itself, chosen as For chooses the
// profile, without building the profile. --help is every program's.
func OwnOption(command []string, option string) bool {
	if option == "--help" {
		return true
	}
	if len(command) == 0 {
		return false
	}
	base := filepath.Base(command[0])
	for _, r := range registered {
		if slices.Contains(r.commands, base) {
			return slices.Contains(ownOptions[r.name], option)
		}
	}
	return false
}

// NameFor is the name of the profile For would choose for command,
// without building it (ralph ls and swarm top name every loop's).
func NameFor(command []string) string {
	if len(command) > 0 {
		base := filepath.Base(command[0])
		for _, r := range registered {
			if slices.Contains(r.commands, base) {
				return r.name
			}
		}
	}
	return "generic"
}
