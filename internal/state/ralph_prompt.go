package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
)

// DeliveredPromptPath holds the prompt delivered in the current iteration,
// which a monitor adopting the iteration needs (to tell the agent's output
// from the echo of its prompt).
func (r *RalphStore) DeliveredPromptPath() string {
	return filepath.Join(r.Dir, "delivered-prompt.txt")
}

// SaveDelivered keeps text, the prompt of the iteration being started, in
// DeliveredPromptPath (0600, written atomically) and returns its SHA-256
// (hex) and size in bytes, for the state's PromptSHA256 and PromptBytes.
// Call it from the fn of the Update that claims the iteration and set both
// fields there: the file and the state then change under one lock, and
// LoadDelivered can tell a file that belongs to another iteration.
func (r *RalphStore) SaveDelivered(text string) (sum string, size int, err error) {
	if r.err != nil {
		return "", 0, r.err
	}
	if err := r.prepare(); err != nil {
		return "", 0, err
	}
	data := []byte(text)
	if err := WriteFileAtomic(r.DeliveredPromptPath(), data); err != nil {
		return "", 0, err
	}
	// A crash while writing a large prompt leaves a large temp file; the
	// age guard keeps the sweep safe even outside the state lock.
	sweepStaleTemps(r.DeliveredPromptPath())
	return sha256Hex(data), len(data), nil
}

// LoadDelivered returns the prompt delivered in the current iteration: the
// delivered_prompt of a state last written by an older swarm, else the
// content of DeliveredPromptPath, checked against the state's PromptSHA256
// when the state records one. With no prompt the error satisfies
// errors.Is(err, fs.ErrNotExist).
func (r *RalphStore) LoadDelivered() (string, error) {
	if r.err != nil {
		return "", r.err
	}
	want := ""
	if l, err := r.readState(); err == nil {
		if l.st.legacyDelivered != "" {
			// An older swarm wrote the state last, and with it the
			// prompt of the iteration the state describes.
			return l.st.legacyDelivered, nil
		}
		want = l.st.PromptSHA256
	}
	data, err := ReadFile(r.DeliveredPromptPath(), MaxFileSize)
	if err != nil {
		return "", fmt.Errorf("no delivered prompt for '%s': %w", r.Name, err)
	}
	if got := sha256Hex(data); want != "" && got != want {
		return "", fmt.Errorf("%s is not the prompt of the current iteration of '%s' (sha256 %s, the state has %s)", r.DeliveredPromptPath(), r.Name, got, want)
	}
	return string(data), nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
