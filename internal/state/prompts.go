package state

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// PromptsDir holds the prompt files copied from another machine for the
// loops of this root (swarm ralph spawn --host H --prompt-file F, run on
// the machine the user is at, sends F here). They live outside the
// loops' own directories, which ralph spawn --replace removes before it
// makes the new loop.
func (s *Store) PromptsDir() string { return filepath.Join(s.Root, "prompts") }

// promptCopySuffix ends a copied prompt's file name.
const promptCopySuffix = ".md"

// WritePromptCopy writes data as a new prompt file for the loop name,
// prompts/NAME.RANDOM.md (0600), and returns its path. Every copy has a
// new name: a spawn that fails (the loop exists) must not change the
// prompt an existing loop reads.
func (s *Store) WritePromptCopy(name string, data []byte) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if err := MakeDir(s.Root, s.PromptsDir()); err != nil {
		return "", err
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	path := filepath.Join(s.PromptsDir(), name+"."+hex.EncodeToString(r[:])+promptCopySuffix)
	if err := createExcl(path, data); err != nil {
		return "", err
	}
	return path, nil
}

// RemovePromptCopies removes the loop name's copied prompts other than
// keep: once a loop of that name has been spawned, no other loop of the
// name is left to read them.
func (s *Store) RemovePromptCopies(name, keep string) {
	ents, err := os.ReadDir(s.PromptsDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		path := filepath.Join(s.PromptsDir(), n)
		if path == keep || !e.Type().IsRegular() || !strings.HasPrefix(n, name+".") || !strings.HasSuffix(n, promptCopySuffix) {
			continue
		}
		// NAME.RANDOM.md only: another loop's NAME may start with this
		// one's and a dot (a and a.b).
		mid := strings.TrimSuffix(strings.TrimPrefix(n, name+"."), promptCopySuffix)
		if _, err := hex.DecodeString(mid); err != nil || len(mid) != 12 {
			continue
		}
		_ = os.Remove(path) // best effort: the spawn it follows has succeeded; the next one tries again
	}
}
