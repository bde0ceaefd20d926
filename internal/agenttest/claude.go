package agenttest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// Timeouts for waiting on claude. Generous: two cores, several claudes
// starting at once under go test -race.
var (
	ReadyTimeout  = 90 * time.Second
	AnswerTimeout = 60 * time.Second
)

// Agent is a claude running against its own mock, in its own tmux server
// and HOME.
type Agent struct {
	*Session
	Mock *mockapi.Server
}

// StartMock starts a mock with replies queued, logging to t, closed at
// cleanup.
func StartMock(t testing.TB, replies ...mockapi.Reply) *mockapi.Server {
	t.Helper()
	m := mockapi.New(replies...)
	m.Logf = t.Logf
	if _, err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// StartClaude is the one-call start for a test: a mock with replies, a
// HOME set up by cfg, and claude with args in tmux. It does not wait for
// anything; use WaitIdle or WaitScreen.
func StartClaude(t testing.TB, cfg Config, args []string, replies ...mockapi.Reply) *Agent {
	t.Helper()
	m := StartMock(t, replies...)
	s := Prepare(t, m, cfg)
	return &Agent{Session: Start(t, s, args...), Mock: m}
}

// idleBox is the empty input box. Claude Code writes its prompt as "❯"
// and a NO-BREAK SPACE (U+00A0), not "❯ " with a plain space.
var idleBox = regexp.MustCompile(`(?m)^─{20,}\n❯[ \x{00a0}]*(?:` + retryPlaceholder + `)?\n─{20,}$`)

// retryPlaceholder is what 2.1.332 shows, dimmed, in its empty input box
// after an API error ended a turn: a hint, not typed text.
const retryPlaceholder = "Resend your message to try again"

// IsIdle reports whether the screen is Claude Code's input box waiting for
// input: an empty "❯" line between two rules (or one holding only the
// placeholder 2.1.332 shows after an API error), and no "esc to
// interrupt" (the footer while it works).
func IsIdle(screen string) bool {
	return idleBox.MatchString(screen) && !strings.Contains(screen, "esc to interrupt")
}

// WaitIdle waits for the idle input box and returns the screen.
func (s *Session) WaitIdle(timeout time.Duration) string {
	s.t.Helper()
	return s.WaitScreen(timeout, "idle input box", IsIdle)
}

// Submit pastes prompt as one bracketed paste, waits until Claude shows
// it in its input box, and presses Enter. Pressing Enter before the paste
// has landed would submit an empty or partial prompt.
func (s *Session) Submit(prompt string) {
	s.t.Helper()
	before := s.Screen()
	s.Paste(prompt)
	first, _, _ := strings.Cut(prompt, "\n")
	if len(first) > 40 {
		first = first[:40]
	}
	s.WaitScreen(10*time.Second, "pasted prompt in the input box", func(screen string) bool {
		return screen != before && (strings.Contains(screen, first) || strings.Contains(screen, "[Pasted text"))
	})
	s.Keys("Enter")
}

// Normalize replaces the test's temp paths in a screen with stable ones
// (HOME becomes /home/user, the mock's address 127.0.0.1:PORT) and trims trailing blanks, so screens saved
// as fixtures compare across runs.
func (s *Session) Normalize(screen string) string {
	screen = strings.ReplaceAll(screen, s.Setup.Home, "/home/user")
	for _, kv := range s.Setup.Env {
		// The mock's random port shows in some errors ("check your
		// inference gateway (127.0.0.1:PORT)").
		if url, ok := strings.CutPrefix(kv, "ANTHROPIC_BASE_URL=http://"); ok {
			screen = strings.ReplaceAll(screen, url, "127.0.0.1:PORT")
		}
	}
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// FixtureDir is where this version's captured screens are kept.
func FixtureDir() string {
	return filepath.Join("testdata", "claude-code-"+Version())
}

// SaveFixture writes the normalized screen to FixtureDir()/name when
// SWARM_UPDATE_FIXTURES=1 (make test-agents UPDATE=1), and logs it when
// SWARM_AGENT_SCREENS=1 (SCREENS=1).
func (s *Session) SaveFixture(name, screen string) {
	s.t.Helper()
	screen = s.Normalize(screen)
	if os.Getenv("SWARM_AGENT_SCREENS") == "1" {
		s.t.Logf("screen %s:\n%s", name, screen)
	}
	if os.Getenv("SWARM_UPDATE_FIXTURES") != "1" {
		return
	}
	if err := os.MkdirAll(FixtureDir(), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(FixtureDir(), name), []byte(screen), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// rule is one of the horizontal rules around Claude Code's input box.
var rule = regexp.MustCompile(`^─{20,}\s*$`)

// PendingInput returns the text in Claude Code's input box when it holds
// typed text that was not submitted and Claude is not working (a prompt
// whose Enter was lost); "" otherwise. The input box is the last block
// between two rules.
func PendingInput(screen string) string {
	if strings.Contains(screen, "esc to interrupt") {
		return ""
	}
	lines := strings.Split(screen, "\n")
	last, prev := -1, -1
	for i := len(lines) - 1; i >= 0 && prev < 0; i-- {
		if rule.MatchString(lines[i]) {
			if last < 0 {
				last = i
			} else {
				prev = i
			}
		}
	}
	if prev < 0 || last-prev < 2 {
		return ""
	}
	first, ok := strings.CutPrefix(lines[prev+1], "❯")
	if !ok {
		return ""
	}
	box := append([]string{first}, lines[prev+2:last]...)
	for i, l := range box {
		box[i] = strings.TrimSpace(strings.ReplaceAll(l, "\u00a0", " "))
	}
	if text := strings.TrimSpace(strings.Join(box, "\n")); text != retryPlaceholder {
		return text
	}
	return ""
}
