package agent

import (
	"testing"

	"github.com/swarmtools/swarm/internal/ready"
)

func TestOpenCodeScreens(t *testing.T) {
	judgeScreens(t, OpenCode(), "opencode", []screenCase{
		{file: "idle-home.txt", state: Idle},
		{file: "working.txt", state: Working},
		{file: "working-retrying.txt", state: Working},
		{file: "idle-after-turn.txt", state: Idle},
		// A dialog wins over the busy row that may show with it.
		{file: "dialog-permission.txt", state: Dialog, kind: StuckApproval, line: "△ Permission required"},
		{file: "dialog-question.txt", state: Dialog, kind: ready.StuckMenu},
	})
}
