// Package state keeps swarm's files under the state root: the worker registry
// (state.json), ralph loop state (ralph/N/state.json) and its event log, and
// heartbeat state (heartbeats/W.json).
//
// Every read-modify-write of a JSON file happens under an exclusive flock on a
// sibling lock file, and every write is atomic (unique temp file, fsync,
// rename), so concurrent swarm processes never lose each other's updates and
// a crash never leaves a half-written file. Reads never write. What cannot be
// used does not stop the caller: a read leaves it out with a warning, and the
// next locked write backs a corrupt file up (never over an earlier backup)
// and resets it, or moves an invalid record to the file's .rejected sidecar.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// Root returns the absolute state root: $SWARM_HOME, else $SWARM_DIR (the
// Python tool's variable), else ~/.swarm.
func Root() (string, error) {
	dir := os.Getenv("SWARM_HOME")
	if dir == "" {
		dir = os.Getenv("SWARM_DIR")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot find the home directory (set SWARM_HOME)")
		}
		dir = filepath.Join(home, ".swarm")
	}
	return filepath.Abs(dir)
}

// DefaultSession is the tmux session swarm uses for a state root:
// "swarm-" and the first 8 hex digits of sha256(root), so two users or two
// state roots never share one.
func DefaultSession(root string) string {
	sum := sha256.Sum256([]byte(root))
	return "swarm-" + hex.EncodeToString(sum[:])[:8]
}

// Dir and file permissions: the state holds commands and environments, which
// may carry secrets. othersWrite are the mode bits that let someone else
// swap swarm's files in a directory.
const (
	dirPerm     = 0o700
	filePerm    = 0o600
	othersWrite = 0o022
)
