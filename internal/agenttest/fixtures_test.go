package agenttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsIdleOnFixtures checks the harness's idle detector on the saved
// screens; it runs in make test (no npm, no claude).
func TestIsIdleOnFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(FixtureDir(), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", FixtureDir(), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		// Idle: the empty input box after start, an answer, an error or a
		// usage limit without a menu.
		want := strings.HasPrefix(name, "idle-") || strings.HasPrefix(name, "error-4") ||
			strings.HasPrefix(name, "error-5") || name == "not-logged-in.txt" ||
			name == "limit-session.txt" || name == "limit-no-claim.txt" ||
			name == "limit-session-80x24.txt"
		if got := IsIdle(string(b)); got != want {
			t.Errorf("%s: IsIdle = %v, want %v", name, got, want)
		}
	}
}
