package state

import (
	"os"
	"strings"
	"testing"
)

// config.json is read strictly: a misspelt key, a wrong type or broken
// JSON is an error naming what is wrong, not a setting silently ignored.
func TestConfigStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, onExit, err string
	}{
		{"missing", "", "", ""},
		{"empty object", "{}", "", ""},
		{"on_exit", `{"on_exit": "notify"}`, "notify", ""},
		{"unknown key", `{"on_exit": "x", "onexit": "y"}`, "", `unknown key "onexit" (the keys are: on_exit, notify, prices)`},
		{"wrong type", `{"on_exit": 3}`, "", `"on_exit" must be a string`},
		{"bad JSON", `{"on_exit": "x"`, "", "invalid JSON: unexpected EOF"},
		{"two values", `{} {}`, "", "invalid JSON: more than one JSON value"},
		{"not an object", `["x"]`, "", `not a JSON object (write {"on_exit": "CMD"})`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			if tc.name != "missing" {
				if err := os.WriteFile(s.ConfigPath(), []byte(tc.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := s.Config()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && c.OnExit != tc.onExit:
				t.Errorf("on_exit %q, want %q", c.OnExit, tc.onExit)
			}
		})
	}
}

// TestConfigNotify (issue 19, item 4): notify in config.json is one
// target as a string or several as a list; anything else is an error.
func TestConfigNotify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, want, err string
	}{
		{"one", `{"notify": "ntfy:https://ntfy.sh/t"}`, "ntfy:https://ntfy.sh/t", ""},
		{"list", `{"notify": ["desktop", "webhook:http://h/x"]}`, "desktop webhook:http://h/x", ""},
		{"number", `{"notify": 3}`, "", `"notify" must be a string or a list of strings`},
		{"list of numbers", `{"notify": [1]}`, "", `"notify" must be a string or a list of strings`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			if err := os.WriteFile(s.ConfigPath(), []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := s.Config()
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(c.Notify, " ") != tc.want {
				t.Errorf("notify %q, %v; want %q", c.Notify, err, tc.want)
			}
		})
	}
}

// Prices (issue 18): per agent profile, dollars per million tokens of
// each kind; they price the tokens of an agent that reports no cost.
func TestConfigPrices(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	data := `{"prices": {"codex": {"input": 1.25, "cached_input": 0.125, "output": 10}}}`
	if err := os.WriteFile(s.ConfigPath(), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Prices["codex"]
	u := Usage{InputTokens: 1000, CacheReadTokens: 2000, OutputTokens: 90}
	if !ok || p.Cost(u) != 0.0024 {
		t.Errorf("prices %+v: cost %v, want 0.0024", c.Prices, p.Cost(u))
	}
	os.WriteFile(s.ConfigPath(), []byte(`{"prices": {"codex": {"input": "cheap"}}}`), 0o600)
	if _, err := s.Config(); err == nil || !strings.Contains(err.Error(), "prices.input") {
		t.Errorf("a price that is no number: %v", err)
	}
}
