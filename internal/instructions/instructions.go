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

// MaxFileBytes bounds the instructions file init reads: a file larger is
// not agent instructions (and a device behind it would never end).
const MaxFileBytes = 1 << 20

// DefaultFile picks the instructions file in dir: AGENTS.md if present,
// else CLAUDE.md if present, else AGENTS.md. A symbolic link counts as
// present (and is then refused by Plan), dangling or not.
func DefaultFile(dir string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	return filepath.Join(dir, "AGENTS.md")
}

// Plan computes the new content of path without writing it. Only a
// regular file of at most MaxFileBytes is read, never through a symbolic
// link: a CLAUDE.md linked to ~/.ssh/id_ed25519 would otherwise have the
// key copied into the project, readable by all.
func Plan(path, section string, force bool) (Outcome, string, error) {
	data, err := state.ReadRegular(path, MaxFileBytes)
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
	// Instructions files are meant to be shared, unlike swarm's state.
	if err := state.WriteFileAtomicPerm(path, []byte(content), 0o644); err != nil {
		return outcome, err
	}
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
