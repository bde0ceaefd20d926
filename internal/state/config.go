package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Config is config.json under the state root: settings for every worker
// and loop of that root.
type Config struct {
	// OnExit is a shell command run whenever a loop ends, with the same
	// environment as a loop's --on-exit (SWARM_ON_EXIT overrides it).
	OnExit string `json:"on_exit,omitempty"`
}

// ConfigPath is where Config lives.
func (s *Store) ConfigPath() string { return filepath.Join(s.Root, "config.json") }

// Config reads config.json; a missing file is an empty config.
func (s *Store) Config() (Config, error) {
	var c Config
	data, err := os.ReadFile(s.ConfigPath())
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("invalid JSON: %w", err)
	}
	return c, nil
}
