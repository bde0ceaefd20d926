package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Config is config.json under the state root: settings for every worker
// and loop of that root.
type Config struct {
	// OnExit is a shell command run whenever a loop ends, with the same
	// environment as a loop's --on-exit (SWARM_ON_EXIT overrides it).
	OnExit string `json:"on_exit,omitempty"`
	// Notify are notification targets every loop notifies besides its
	// own --notify: "desktop", "webhook:URL", "ntfy:URL"; one as a string
	// or several as a list.
	Notify StringList `json:"notify,omitempty"`
}

// StringList is a JSON string or list of strings.
type StringList []string

// UnmarshalJSON takes "x" or ["x", "y"].
func (l *StringList) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return errNotifyType
	}
	*l = many
	return nil
}

// errNotifyType is the one type error of "notify".
var errNotifyType = errors.New(`"notify" must be a string or a list of strings`)

// ConfigPath is where Config lives.
func (s *Store) ConfigPath() string { return filepath.Join(s.Root, "config.json") }

// Config reads config.json; a missing file is an empty config. A file that
// is not one JSON object of Config's keys is an error: a misspelt key
// would otherwise be a setting silently not applied. The file holds a
// command swarm runs as the user, so it is read only when the user owns
// it and nobody else can write it, even in a shared root the user trusts
// (TrustSharedRoot): a teammate's config.json would run their hook as
// every user of the root. Such a file is an error (ErrUnsafe).
func (s *Store) Config() (Config, error) {
	var c Config
	if err := CheckRoot(s.Root); err != nil {
		return c, err
	}
	path := s.ConfigPath()
	f, err := openChecked("config file", path, os.O_RDONLY, 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	data, err := readBounded("state file", f, MaxFileSize)
	if err != nil {
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
	case errors.Is(err, errNotifyType):
		return errNotifyType
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("%q must be a %s", typeErr.Field, typeErr.Type)
	case errors.As(err, &typeErr):
		return errors.New(`not a JSON object (write {"on_exit": "CMD"})`)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s (the keys are: on_exit, notify)", key)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
