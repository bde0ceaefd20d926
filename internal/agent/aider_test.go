package agent

import (
	"testing"
)

func TestAiderScreens(t *testing.T) {
	judgeScreens(t, Aider(), "aider", []screenCase{
		{file: "idle-start.txt", state: Idle},
		{file: "working-waiting.txt", state: Working},
		// Streaming: neither working nor idle, so never a false idle.
		{file: "streaming.txt", state: Unknown},
		{file: "idle-after-turn.txt", state: Idle, turns: 1},
		{file: "error-overloaded.txt", state: Error, line: "The API provider's servers are down or overloaded."},
		{file: "error-auth.txt", state: Error, line: "The API provider is not able to authenticate you."},
		{file: "limit-rate-limited.txt", state: Limited, kind: "limit", line: "The API provider has rate limited you."},
		{file: "dialog-add-file.txt", state: Dialog, kind: StuckApproval, line: "Add file to the chat? (Y)es/(N)o"},
		{file: "dialog-answered-then-working.txt", state: Working},
		{file: "dialog-run-shell.txt", state: Dialog, kind: StuckApproval, line: "Run shell command?", turns: 1},
		{file: "dialog-update.txt", state: Dialog, kind: StuckUpdate, line: "Newer aider version v0.87.0 is available."},
		{file: "fatal-no-model.txt", state: Dialog, kind: StuckLogin, line: "Login to OpenRouter"},
	})
}

// judgesWorkingFirst reports whether Judge takes a screen with a working
// line for working even when an older limit line shows above it.
func judgesWorkingFirst() bool {
	screen := "● Claude usage limit reached. Your limit will reset at 5pm.\n❯ continue\n✻ Thinking… (esc to interrupt)\n❯ \n"
	return Claude().Judge(screen, now).State == Working
}

// Aider prints its rate-limit sentence before each of its own retries
// too, while its spinner runs: working, as long as Judge checks the
// working line before the limits.
func TestAiderRetryingIsWorking(t *testing.T) {
	if !judgesWorkingFirst() {
		t.Skip("Judge checks limits before the working line: a retrying aider reads as limited until it does not")
	}
	if v := Aider().Judge(agentScreen(t, "aider", "working-retrying-rate-limit.txt"), now); v.State != Working {
		t.Errorf("retrying aider: %+v, want working", v)
	}
}
