// Package instructions adds swarm's section to a project's agent
// instructions file (AGENTS.md or CLAUDE.md), so agents working in the
// project learn to manage processes with swarm.
package instructions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/swarmtools/swarm/internal/state"
)

// Heading starts the section; its presence makes init idempotent.
const Heading = "## Process Management (swarm)"

// Outcome of Apply.
type Outcome int

const (
	Created Outcome = iota // the file did not exist
	Added                  // the section was appended
	Updated                // an existing section was replaced (force)
	Present                // the section exists and force was not set
)

// DefaultFile picks the instructions file in dir: AGENTS.md if present,
// else CLAUDE.md if present, else AGENTS.md.
func DefaultFile(dir string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	return filepath.Join(dir, "AGENTS.md")
}

// Plan computes the new content of path without writing it.
func Plan(path, section string, force bool) (Outcome, string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Created, section, nil
	}
	if err != nil {
		return 0, "", err
	}
	text := string(data)
	start, end, found := find(text)
	if !found {
		sep := "\n"
		if text == "" || strings.HasSuffix(text, "\n\n") {
			sep = ""
		} else if !strings.HasSuffix(text, "\n") {
			sep = "\n\n"
		}
		return Added, text + sep + section, nil
	}
	if !force {
		return Present, text, nil
	}
	rest := text[end:]
	if rest != "" && !strings.HasSuffix(section, "\n\n") {
		rest = "\n" + strings.TrimLeft(rest, "\n")
	}
	return Updated, text[:start] + section + rest, nil
}

// Apply writes the planned content (atomically) unless nothing changes.
func Apply(path, section string, force bool) (Outcome, error) {
	outcome, content, err := Plan(path, section, force)
	if err != nil || outcome == Present {
		return outcome, err
	}
	if err := state.WriteFileAtomic(path, []byte(content)); err != nil {
		return outcome, err
	}
	// Instructions files are meant to be shared, unlike swarm's state.
	os.Chmod(path, 0o644)
	return outcome, nil
}

// find locates the section: from its heading to the next heading of level
// one or two, or the end of the file.
func find(text string) (start, end int, found bool) {
	lines := strings.SplitAfter(text, "\n")
	pos := 0
	start = -1
	for _, line := range lines {
		trimmed := strings.TrimRight(line, "\r\n")
		if start < 0 && strings.TrimSpace(trimmed) == Heading {
			start = pos
		} else if start >= 0 && (strings.HasPrefix(trimmed, "# ") || strings.HasPrefix(trimmed, "## ")) {
			return start, pos, true
		}
		pos += len(line)
	}
	if start >= 0 {
		return start, len(text), true
	}
	return 0, 0, false
}
