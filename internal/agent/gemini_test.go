package agent

import (
	"testing"

	"github.com/swarmtools/swarm/internal/ready"
)

func TestGeminiScreens(t *testing.T) {
	judgeScreens(t, Gemini(), "gemini", []screenCase{
		{file: "idle-start.txt", state: Idle},
		{file: "working-thinking.txt", state: Working},
		{file: "working-retrying.txt", state: Working},
		{file: "idle-after-turn.txt", state: Idle},
		{file: "error-api.txt", state: Error, line: "✕ [API Error: Internal error encountered."},
		{file: "limit-quota.txt", state: Limited, kind: "limit", line: "Please wait and try again later."},
		// Its input box shows under the approval list: a dialog, not idle.
		{file: "dialog-approval.txt", state: Dialog, kind: StuckApproval, line: "Allow execution of [go]?"},
		{file: "dialog-trust.txt", state: Dialog, kind: StuckTrust, line: "Do you trust the files in this folder?"},
		{file: "dialog-auth.txt", state: Dialog, kind: StuckLogin, line: "How would you like to authenticate"},
		{file: "dialog-usage-limit.txt", state: Dialog, kind: StuckLimitMenu, line: "Usage limit reached for all Pro models."},
		{file: "dialog-loop-detected.txt", state: Dialog, kind: ready.StuckMenu, line: "?  A potential loop was detected"},
	})
}
