package worker

import (
	"io"
	"os"
	"sort"
	"strings"

	"github.com/swarmtools/swarm/internal/state"
)

func sortStrings(s []string) { sort.Strings(s) }

// tailFile returns the last n lines of a file (reading at most 64 KiB).
func tailFile(path string, n int) (string, error) {
	f, err := state.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	const max = 64 << 10
	off := fi.Size() - max
	if off < 0 {
		off = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return "", err
	}
	return lastLines(string(data), n), nil
}

// deadPaneLine starts the line tmux draws at the bottom of a dead pane
// kept by remain-on-exit ("Pane is dead (status 1, <time>)").
const deadPaneLine = "Pane is dead"

// lastLines returns the last n lines of s without its trailing blank
// lines. The rows between a dead pane's last output and tmux's "Pane is
// dead" line at the bottom of the window are trailing blank lines too: in
// a 200x50 window they would push the agent's last words out of the n.
func lastLines(s string, n int) string {
	lines := trimBlankTail(strings.Split(s, "\n"))
	if k := len(lines); k > 0 && strings.HasPrefix(lines[k-1], deadPaneLine) {
		lines = append(trimBlankTail(lines[:k-1]), lines[k-1])
	}
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// trimBlankTail drops the lines at the end of lines that hold only white
// space.
func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
