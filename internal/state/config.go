package state

import (
	"encoding/json"
	"fmt"
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
	data, ok, err := readIfExists(s.ConfigPath())
	if err != nil || !ok {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("invalid JSON: %w", err)
	}
	return c, nil
}
