package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// CodexVersion is the pinned OpenAI Codex CLI the Codex tests use
// (SWARM_CODEX_VERSION overrides it: make test-agents-latest).
const CodexVersion = "0.171.0"

// CodexVersionInUse is the Codex version the tests use.
func CodexVersionInUse() string {
	if v := os.Getenv("SWARM_CODEX_VERSION"); v != "" {
		return v
	}
	return CodexVersion
}

// Codex returns the path of the pinned codex binary, installing it first
// if needed; it skips t as Require does.
func Codex(t testing.TB) string {
	t.Helper()
	Require(t)
	bin, err := installNpm("@openai/codex", "codex", "codex", CodexVersionInUse(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// CodexSetup is a private CODEX_HOME whose config.toml points Codex at the
// mock, and the environment to run it with.
type CodexSetup struct {
	Bin, Home, Dir string
	Env            []string
}

// PrepareCodex writes CODEX_HOME/config.toml with a custom model provider
// for the mock. Codex 0.169 ignores OPENAI_BASE_URL; the built-in "openai"
// provider takes `openai_base_url` but first tries the Responses API over
// a WebSocket (GET /v1/responses, upgrade) several times. A custom
// provider (supports_websockets off by default) POSTs /v1/responses at
// once, with `Authorization: Bearer $MOCK_API_KEY`.
func PrepareCodex(t testing.TB, mock *mockapi.Server) *CodexSetup {
	t.Helper()
	bin := Codex(t)
	root := t.TempDir()
	s := &CodexSetup{Bin: bin, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "home", "proj")}
	codexHome := filepath.Join(s.Home, ".codex")
	for _, d := range []string{s.Dir, codexHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`model = "gpt-5-mock"
model_provider = "mock"

[model_providers.mock]
name = "Mock"
base_url = "%s/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
`, mock.URL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "CODEX_HOME=" + codexHome,
		"MOCK_API_KEY=mock-key", "TERM=screen-256color", "LANG=C.UTF-8", "TZ=UTC"}
	return s
}
