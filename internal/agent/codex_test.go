package agent

import (
	"testing"
	"time"
)

func TestCodexScreens(t *testing.T) {
	judgeScreens(t, Codex(), "codex", []screenCase{
		{file: "idle-start.txt", state: Idle},
		{file: "working.txt", state: Working},
		{file: "working-reconnecting.txt", state: Working},
		{file: "idle-after-turn.txt", state: Idle},
		{file: "error-stream.txt", state: Error, line: "■ stream disconnected before completion"},
		{file: "error-retry-limit.txt", state: Error, line: "■ exceeded retry limit, last status: 429"},
		{file: "limit-usage-today.txt", state: Limited, kind: "limit", line: "■ You've hit your usage limit.", reset: 88 * time.Minute},
		{file: "limit-usage-later-day.txt", state: Limited, kind: "limit", line: "■ You've hit your usage limit.", reset: 2*24*time.Hour - 4*time.Hour - 55*time.Minute},
		// An overloaded model ends the turn like any error (as Claude Code's 529).
		{file: "error-model-at-capacity.txt", state: Error, line: "■ Selected model is at capacity."},
		{file: "dialog-approval-exec.txt", state: Dialog, kind: StuckApproval, line: "Would you like to run the following command?"},
		{file: "dialog-trust.txt", state: Dialog, kind: StuckTrust, line: "Do you trust the contents of this directory?"},
		{file: "dialog-trust-older.txt", state: Dialog, kind: StuckTrust},
		{file: "dialog-login.txt", state: Dialog, kind: StuckLogin, line: "Sign in with ChatGPT to use Codex"},
		{file: "dialog-update.txt", state: Dialog, kind: StuckUpdate, line: "✨ Update available! 0.160.0 -> 0.161.0"},
	})
}
