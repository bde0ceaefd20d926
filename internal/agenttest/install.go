package agenttest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// ClaudeVersion is the pinned Claude Code: the one make test-agents (and
// CI) runs, and the one the fixtures under testdata/claude-code-VERSION
// were captured with. SWARM_CLAUDE_CODE_VERSION overrides it (make
// test-agents-latest gives npm's latest: its fixtures, if captured, go to
// their own testdata folder). This is the one place the pin is written.
const ClaudeVersion = "2.1.332"

// EnvEnable is the variable that turns the real-agent tests on.
const EnvEnable = "SWARM_TEST_AGENTS"

var (
	installMu   sync.Mutex
	installDone = map[string]string{}
)

// Version is the Claude Code version the tests use.
func Version() string {
	if v := os.Getenv("SWARM_CLAUDE_CODE_VERSION"); v != "" {
		return v
	}
	return ClaudeVersion
}

// Require skips t unless the real-agent tests are enabled and can run:
// SWARM_TEST_AGENTS=1, and npm and tmux on PATH.
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvEnable) != "1" {
		t.Skipf("real-agent test: set %s=1 or run make test-agents", EnvEnable)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("real-agent test skipped: npm not found (install Node.js and npm, e.g. apt-get install nodejs npm)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("real-agent test: tmux not found")
	}
}

// EnvCache names another cache for the installs (make
// test-agents-latest keeps npm's latest releases apart from the pins).
const EnvCache = "SWARM_TEST_AGENTS_CACHE"

// CacheDir is where agent installs live: $SWARM_TEST_AGENTS_CACHE, else
// ${XDG_CACHE_HOME:-~/.cache}/swarm-test-agents.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "swarm-test-agents"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "swarm-test-agents"), nil
}

// Claude returns the path of the pinned claude binary, installing it
// first if needed; it skips t as Require does.
func Claude(t testing.TB) string {
	t.Helper()
	Require(t)
	bin, err := InstallClaude(Version(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// InstallClaude installs @anthropic-ai/claude-code@version with npm into
// the cache, once, and returns the claude binary.
func InstallClaude(version string, logf func(string, ...any)) (string, error) {
	return installNpm("@anthropic-ai/claude-code", "claude-code", "claude", version, logf)
}

// installNpm installs pkg@version into <cache>/<dir>-<version>, once: a
// finished install is a folder that is only ever renamed into place, and a
// file lock serializes test processes (go test runs packages in parallel)
// that would install at the same time. It returns node_modules/.bin/<bin>.
func installNpm(pkg, dirName, binName, version string, logf func(string, ...any)) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	key := pkg + "@" + version
	if bin, ok := installDone[key]; ok {
		return bin, nil
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, dirName+"-"+version)
	bin := filepath.Join(dir, "node_modules", ".bin", binName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	lock := flock.New(dir + ".lock")
	if err := lock.Lock(); err != nil {
		return "", fmt.Errorf("lock %s: %w", dir+".lock", err)
	}
	defer func() { _ = lock.Unlock() }() // unlocking an open file does not fail; exit frees it anyway
	if checkVersion(bin, version) != nil {
		if err := npmInstall(cache, dir, key, logf); err != nil {
			return "", err
		}
		if err := checkVersion(bin, version); err != nil {
			return "", err
		}
	}
	installDone[key] = bin
	return bin, nil
}

// checkVersion runs `bin --version` and looks for the version it prints
// ("2.1.332 (Claude Code)", "codex-cli 0.171.0").
func checkVersion(bin, version string) error {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %w: %s", bin, err, out)
	}
	if !strings.Contains(string(out), version) {
		return fmt.Errorf("%s --version printed %q, want %s", bin, out, version)
	}
	return nil
}

// npmInstall installs pkg into a fresh folder next to dir, then swaps it
// in, so an interrupted install never leaves a half-filled dir behind.
func npmInstall(cache, dir, pkg string, logf func(string, ...any)) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("npm not found: install Node.js and npm")
	}
	tmp, err := os.MkdirTemp(cache, filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // gone once renamed; a failed install's is left in the cache, under a name no one reads
	began := time.Now()
	cmd := exec.Command("npm", "install", "--prefix", tmp, "--no-audit", "--no-fund",
		"--no-save", "--loglevel=error", pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s: %w\n%s", pkg, err, out)
	}
	if logf != nil {
		logf("agenttest: npm install %s took %v", pkg, time.Since(began).Round(100*time.Millisecond))
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
