package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// APIKey is the fake key the tests give Claude Code. Claude remembers an
// approved key by its last 20 characters.
const APIKey = "sk-ant-api03-swarmtestswarmtestswarmtestswarmtest-0123456789abcdefMOCK"

// OAuthToken is the fake token used instead of the key when Config.OAuth
// is set.
const OAuthToken = "sk-ant-oat01-swarmtest-oauth-token"

// Config says which pieces of the "start straight into the input box"
// setup to leave out (each left-out piece brings back one of Claude's
// first-run screens) and what else to change. The zero value is the full
// setup.
type Config struct {
	// NoOnboarding leaves out hasCompletedOnboarding: the theme picker.
	NoOnboarding bool
	// NoTrust leaves out the project's hasTrustDialogAccepted: the "Yes, I
	// trust this folder" dialog.
	NoTrust bool
	// NoKeyApproval leaves out customApiKeyResponses.approved: the
	// "Detected a custom API key" dialog.
	NoKeyApproval bool
	// NoBypassAccepted leaves out skipDangerousModePermissionPrompt: the
	// Bypass Permissions warning under --dangerously-skip-permissions.
	NoBypassAccepted bool
	// NoSandbox leaves out IS_SANDBOX=1, which root needs for
	// --dangerously-skip-permissions.
	NoSandbox bool
	// OAuth logs in as a Claude subscriber (CLAUDE_CODE_OAUTH_TOKEN) rather
	// than with ANTHROPIC_API_KEY: Claude Code shows plan usage limits
	// ("You've hit your session limit") only to subscribers.
	OAuth bool
	// SubscriptionType ("pro", "max", "team", ...) with OAuth: the plan
	// Claude believes it is on. With "pro" or "max" a usage limit also opens
	// the "What do you want to do?" menu.
	SubscriptionType string
	// DisableHooks sets disableAllHooks in ~/.claude/settings.json: no
	// hook and no status line runs, swarm's included (the loop reads the
	// screen alone).
	DisableHooks bool
	// Env is added to (and overrides) the agent's environment, "K=V" each.
	Env []string
	// Cols and Rows size the terminal (default 120x40; the fixtures under
	// /work/shared were partly taken at 80 columns).
	Cols, Rows int
}

// Setup is a prepared agent environment: a private HOME holding Claude's
// config, a project folder, and the environment for the claude process.
type Setup struct {
	Cfg  Config // what was left out; Start reads the terminal size from it
	Bin  string // the claude binary
	Home string // HOME for claude
	Dir  string // the project folder claude starts in (absolute)
	// Env is the whole environment for claude, "K=V" sorted; it does not
	// inherit the test process's environment, so a developer's own
	// ANTHROPIC_* or CLAUDE_* variables cannot leak in.
	Env []string
}

// Prepare installs claude (or skips t), writes a private HOME configured
// by cfg against mock, and makes the project folder.
func Prepare(t testing.TB, mock *mockapi.Server, cfg Config) *Setup {
	t.Helper()
	bin := Claude(t)
	root := t.TempDir()
	s := &Setup{Cfg: cfg, Bin: bin, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "home", "proj")}
	for _, d := range []string{s.Dir, filepath.Join(s.Home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteConfig(s.Home, s.Dir, cfg); err != nil {
		t.Fatal(err)
	}
	s.Env = Environ(s.Home, mock.URL, cfg)
	return s
}

// WriteConfig writes ~/.claude.json and ~/.claude/settings.json in home
// for project dir, leaving out what cfg says.
func WriteConfig(home, dir string, cfg Config) error {
	state := map[string]any{}
	if !cfg.NoOnboarding {
		state["hasCompletedOnboarding"] = true
	}
	if !cfg.NoKeyApproval && !cfg.OAuth {
		state["customApiKeyResponses"] = map[string]any{
			"approved": []string{APIKey[len(APIKey)-20:]},
			"rejected": []string{},
		}
	}
	if !cfg.NoTrust {
		state["projects"] = map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true}}
	}
	settings := map[string]any{}
	if !cfg.NoBypassAccepted {
		settings["skipDangerousModePermissionPrompt"] = true
	}
	if cfg.DisableHooks {
		settings["disableAllHooks"] = true
	}
	if err := writeJSON(filepath.Join(home, ".claude.json"), state); err != nil {
		return err
	}
	return writeJSON(filepath.Join(home, ".claude", "settings.json"), settings)
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// Environ is claude's whole environment for a HOME and mock URL: PATH
// from the test process (claude needs sh, git, ...), TZ=UTC and a UTF-8
// locale so screens are the same on every machine, and the API settings.
func Environ(home, baseURL string, cfg Config) []string {
	env := map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                home,
		"TERM":                "screen-256color",
		"LANG":                "C.UTF-8",
		"TZ":                  "UTC",
		"ANTHROPIC_BASE_URL":  baseURL,
		"DISABLE_AUTOUPDATER": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}
	if cfg.OAuth {
		env["CLAUDE_CODE_OAUTH_TOKEN"] = OAuthToken
		if cfg.SubscriptionType != "" {
			env["CLAUDE_CODE_SUBSCRIPTION_TYPE"] = cfg.SubscriptionType
		}
	} else {
		env["ANTHROPIC_API_KEY"] = APIKey
	}
	if os.Geteuid() == 0 && !cfg.NoSandbox {
		env["IS_SANDBOX"] = "1"
	}
	for _, kv := range cfg.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Command is the argv that runs claude with args in exactly s.Env, for a
// tmux window or `swarm spawn -- ...`: `env -i K=V... claude args...`.
func (s *Setup) Command(args ...string) []string {
	cmd := append([]string{"env", "-i"}, s.Env...)
	cmd = append(cmd, s.Bin)
	return append(cmd, args...)
}
