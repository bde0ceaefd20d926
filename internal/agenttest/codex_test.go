package agenttest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// The Codex CLI answers a prompt from the mock's Responses API
// (non-interactive `codex exec`; the TUI is not covered yet).
func TestCodexExec(t *testing.T) {
	Require(t)
	mock := StartMock(t, mockapi.Text("The magic word is plugh-7."))
	s := PrepareCodex(t, mock)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Bin, "exec", "--skip-git-repo-check", "Tell me the magic word.")
	cmd.Dir, cmd.Env = s.Dir, s.Env
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("codex exec took %v", time.Since(began).Round(time.Millisecond))
	if err != nil || !strings.Contains(string(out), "plugh-7") {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	turns := mock.Turns()
	if len(turns) != 1 || !strings.Contains(turns[0].UserText(), "Tell me the magic word.") {
		t.Fatalf("turns: %d, user text %q", len(turns), turns[0].UserText())
	}
	var tools []string
	for _, tool := range turns[0].Responses.Tools {
		tools = append(tools, tool.Type+":"+tool.Name)
	}
	t.Logf("codex offered tools: %s; auth %q", strings.Join(tools, " "), turns[0].Header.Get("Authorization"))
	for _, r := range mock.Requests() {
		t.Logf("request: %s %s turn=%v", r.Method, r.Path, r.Turn)
	}
}
