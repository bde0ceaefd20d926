package state

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// makeDir creates dir and its missing parents 0700. The mode of a directory
// that already exists is left alone: SWARM_HOME=/tmp once made every write
// chmod the host's /tmp to 0700, through the symlink if it was one. Such a
// directory is refused instead (checkDirs), before anything is made in it.
// Created directories are never wider than 0700, since the umask can only
// take bits away; so nothing here ever needs a chmod.
func makeDir(dir string) error {
	return os.MkdirAll(dir, dirPerm)
}

// notices remembers what the stores of one Store (one command, or one
// monitor) have already told the user: which read-only warnings were
// given. A command reads the same file
// several times and must not repeat a warning each time.
type notices struct {
	mu   sync.Mutex
	seen map[string]bool
	// backups maps a corrupt file's path and content (backupKey) to the
	// backup keepCorruptOnce made or found for it.
	backups map[string]string
}

// keepCorruptOnce is keepCorrupt for a reader: once a backup of this
// content of path is known, it is not looked for again. A monitor that
// reads a corrupt state file every tick must not reread every backup each
// time. A failed backup is tried again at the next read. Writers, which
// drop the content right after, call keepCorrupt itself.
func (n *notices) keepCorruptOnce(path string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	key := path + "\x00" + hex.EncodeToString(sum[:])
	n.mu.Lock()
	name, ok := n.backups[key]
	n.mu.Unlock()
	if ok {
		return name, nil
	}
	name, err := keepCorrupt(path, data)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	if n.backups == nil {
		n.backups = map[string]string{}
	}
	n.backups[key] = name
	n.mu.Unlock()
	return name, nil
}

// first reports whether key is new, and records it.
func (n *notices) first(key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[key] {
		return false
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	n.seen[key] = true
	return true
}

// warnOnce gives msg through warn unless it was already given about the
// same file content. Keying on the content (not the message alone) lets a
// long-lived monitor warn again when a file breaks anew.
func (n *notices) warnOnce(warn func(string), data []byte, msg string) {
	if warn == nil {
		return
	}
	sum := sha256.Sum256(data)
	if n.first("warn\x00" + msg + "\x00" + hex.EncodeToString(sum[:])) {
		warn(msg)
	}
}

// dirChain lists root and each directory from it down to dir; just dir when
// dir is not under root.
func dirChain(root, dir string) []string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{dir}
	}
	chain := []string{root}
	if rel == "." {
		return chain
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		chain = append(chain, cur)
	}
	return chain
}
