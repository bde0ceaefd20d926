package agenttest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipUncaptured skips a test of the saved screens for a release other
// than the pin (make test-agents-latest) whose screens were never
// captured; the pin's must be there.
func skipUncaptured(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(FixtureDir()); err != nil && Version() != ClaudeVersion {
		t.Skipf("no screens of Claude Code %s captured (make test-agents-latest UPDATE=1 captures them)", Version())
	}
}

// TestIsIdleOnFixtures checks the harness's idle detector on the saved
// screens; it runs in make test (no npm, no claude).
func TestIsIdleOnFixtures(t *testing.T) {
	skipUncaptured(t)
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
			name == "limit-session-80x24.txt" || strings.Contains(name, "-auto-continue")
		if got := IsIdle(string(b)); got != want {
			t.Errorf("%s: IsIdle = %v, want %v", name, got, want)
		}
	}
}

// TestPendingInputOnFixtures checks the lost-Enter detector: only a
// prompt left unsubmitted in the input box (swarm's Enter dropped, or an
// interrupted turn put back) counts; an empty box, a dialog, a working
// screen or a prompt echoed in the transcript do not.
func TestPendingInputOnFixtures(t *testing.T) {
	skipUncaptured(t)
	want := map[string]string{
		"prompt-not-submitted.txt":        "Do the next step of the task in this folder.\nWhen the whole task is done, print <promise>COMPLETE</promise>.",
		"interrupted-prompt-restored.txt": "Think hard.",
		"idle-input-box.txt":              "",
		"idle-after-answer.txt":           "",
		"idle-after-limit-continue.txt":   "",
		"working-waiting.txt":             "",
		"dialog-trust-folder.txt":         "",
		"limit-session-menu-80x24.txt":    "",
		"error-429-final-80x24.txt":       "",
		// A second continuation queued while claude works on the first.
		"working-same-session-continuation.txt": "",
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(FixtureDir(), name))
		if errors.Is(err, os.ErrNotExist) && Version() != "2.1.197" {
			// 2.1.332 never draws some of 2.1.197's screens (the limit
			// continuation typed under the limit message).
			t.Logf("%s: not captured for Claude Code %s", name, Version())
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := PendingInput(string(b)); got != w {
			t.Errorf("%s: PendingInput = %q, want %q", name, got, w)
		}
	}
}
