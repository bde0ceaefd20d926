package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
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

// Config reads config.json; a missing file is an empty config. A file that
// is not one JSON object of Config's keys is an error: a misspelt key
// would otherwise be a setting silently not applied.
func (s *Store) Config() (Config, error) {
	var c Config
	data, ok, err := readIfExists(s.ConfigPath())
	if err != nil || !ok {
		return c, err
	}
	return c, decodeConfig(data, &c)
}

// decodeConfig decodes data strictly into c: unknown keys, wrong types and
// anything after the object are errors.
func decodeConfig(data []byte, c *Config) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(c)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("%q must be a %s", typeErr.Field, typeErr.Type)
	case errors.As(err, &typeErr):
		return errors.New(`not a JSON object (write {"on_exit": "CMD"})`)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s (the keys are: on_exit)", key)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
