package agenttest

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// (e) each first-run dialog appears when its piece of the config is left
// out, and none of them counts as the idle input box. (2.1.197 numbers
// the choices, "❯ 1. Yes, I trust this folder"; 2.1.332 does not, and
// puts "No, exit" first.)
func TestClaudeDialogs(t *testing.T) {
	Require(t)
	t.Parallel()
	cases := []struct {
		name    string
		cfg     Config
		fixture string
		want    []string
	}{
		{"trust", Config{NoTrust: true}, "dialog-trust-folder.txt",
			[]string{"Accessing workspace:", "Yes, I trust this folder", "No, exit", "Enter to confirm · Esc to cancel"}},
		{"api-key", Config{NoKeyApproval: true}, "dialog-api-key.txt",
			[]string{"Detected a custom API key in your environment", "Do you want to use this API key?", "Yes", "No (recommended)"}},
		{"bypass", Config{NoBypassAccepted: true}, "dialog-bypass-warning.txt",
			[]string{"WARNING: Claude Code running in Bypass Permissions mode", "No, exit", "Yes, I accept"}},
		{"theme", Config{NoOnboarding: true}, "dialog-theme-first-run.txt",
			[]string{"Choose the text style that looks best with your terminal", "Dark mode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := StartClaude(t, c.cfg, skip)
			screen := a.WaitScreen(ReadyTimeout, c.name+" dialog", Contains(c.want...))
			t.Logf("start-to-dialog: %v", time.Since(a.Started).Round(time.Millisecond))
			a.SaveFixture(c.fixture, screen)
			if IsIdle(screen) {
				t.Error("dialog taken for the idle input box")
			}
			if c.name == "api-key" {
				rejectKey(t, a)
			}
		})
	}
}

// rejectKey presses Enter on the API-key dialog, whose default is "No":
// Claude then starts without credentials and says so in its footer.
func rejectKey(t *testing.T, a *Agent) {
	a.Keys("Enter")
	screen := a.WaitScreen(ReadyTimeout, "not-logged-in input box", func(s string) bool {
		// "Run /login" (2.1.197), "run /login" (2.1.332).
		return IsIdle(s) && strings.Contains(strings.ToLower(s), "not logged in · run /login")
	})
	a.SaveFixture("not-logged-in.txt", screen)
}

// As root, --dangerously-skip-permissions needs IS_SANDBOX=1; without it
// claude refuses to start.
func TestClaudeRootWithoutSandbox(t *testing.T) {
	Require(t)
	if os.Geteuid() != 0 {
		t.Skip("only root is refused")
	}
	t.Parallel()
	a := StartClaude(t, Config{NoSandbox: true}, skip)
	screen := a.WaitScreen(ReadyTimeout, "claude to exit", func(string) bool {
		dead, _ := a.Dead()
		return dead
	})
	// The message is sometimes gone from the visible screen by the time
	// the pane is dead (tmux's "Pane is dead" line), never from the history.
	h := a.History()
	a.SaveFixture("error-root-without-sandbox.txt", h)
	if !strings.Contains(h, "cannot be used with root/sudo privileges") {
		t.Errorf("no refusal message on screen or in the scrollback:\n%s\nscreen:\n%s", h, screen)
	}
	switch _, code := a.Dead(); code {
	case 1:
	case -1:
		t.Log("pane dead but tmux has not reaped claude yet: #{pane_dead_status} is empty")
	default:
		t.Errorf("exit status %d, want 1", code)
	}
}

// (f) a subscriber (OAuth login) over a plan limit: the 429 with the
// anthropic-ratelimit-unified-* headers is not retried; Claude prints
// "You've hit your ... limit · resets ...". On a Pro or Max plan it also
// opens the "What do you want to do?" menu by itself.
func TestClaudeUsageLimit(t *testing.T) {
	Require(t)
	t.Parallel()
	resets := time.Now().Add(3 * time.Hour).Truncate(time.Hour)
	cases := []struct {
		name, plan, claim, fixture string
		want                       []string
	}{
		{"no-plan", "", "five_hour", "limit-session.txt",
			// 2.1.197: "session limit", 2.1.332: "5-hour limit".
			[]string{"You've hit your ", " limit · resets"}},
		{"no-claim", "", "", "limit-no-claim.txt",
			[]string{"You've hit your limit · resets"}},
		{"max-plan", "max", "seven_day", "limit-weekly-max-menu.txt",
			[]string{"You've hit your weekly limit · resets", "What do you want to do?", "❯ 1. Stop and wait for limit to reset"}},
	}
	if Version() != "2.1.197" {
		// 2.1.332 opens no menu: it says it will continue by itself at
		// the reset ("⚠ Usage limit reached · limit resets 8pm /
		// Continuing automatically at 8pm · Esc to cancel"), at its idle
		// input box.
		cases[2].fixture = "limit-weekly-max-auto-continue.txt"
		cases[2].want = []string{"You've hit your weekly limit · resets", "Continuing automatically at"}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := StartClaude(t, Config{OAuth: true, SubscriptionType: c.plan}, skip,
				mockapi.UsageLimit(c.claim, resets).Repeat(-1))
			a.WaitIdle(ReadyTimeout)
			a.Submit("Do the next step.")
			screen := a.WaitScreen(AnswerTimeout, "usage-limit message", Contains(c.want...))
			a.SaveFixture(c.fixture, screen)
			if n := len(a.Mock.Turns()); n != 1 {
				t.Errorf("%d requests: a usage limit should not be retried", n)
			}
			if h := a.Mock.Turns()[0].Header.Get("Authorization"); h != "Bearer "+OAuthToken {
				t.Errorf("Authorization %q, want the OAuth token", h)
			}
		})
	}
}

// A subscriber's plain 429 (no usage-limit headers) is worded as a
// server-side limit, "not your usage limit", and, unlike with an API key,
// not retried at all (2.1.197; 2.1.332 words it as the API does and
// retries it).
func TestClaude429Subscriber(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{OAuth: true, Env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}}, skip,
		mockapi.RateLimit(time.Second).Repeat(-1))
	a.WaitIdle(ReadyTimeout)
	a.Submit("Do the next step.")
	screen := a.WaitScreen(AnswerTimeout, "final error", finalError)
	a.SaveFixture("error-429-final-subscriber.txt", screen)
	// 2.1.332 words it as the API does ("... rate limit for your
	// organization (mock-org) ...").
	if !strings.Contains(screen, "API Error: Server is temporarily limiting requests (not your usage limit)") && !strings.Contains(screen, "mock-org") {
		t.Error("subscriber 429 not worded as a server-side limit")
	}
	// 2.1.197 does not retry a subscriber's 429; 2.1.332 retries it as an
	// API key's (1 + CLAUDE_CODE_MAX_RETRIES).
	if n := len(a.Mock.Turns()); n != 1 && n != 3 {
		t.Errorf("%d requests, want 1 (no retries) or 3 (CLAUDE_CODE_MAX_RETRIES=2)", n)
	} else {
		t.Logf("result: a subscriber's 429: %d request(s)", n)
	}
}
