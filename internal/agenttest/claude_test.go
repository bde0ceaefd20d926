package agenttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// skip is the flag swarm's users run Claude Code with in loops.
var skip = []string{"--dangerously-skip-permissions"}

// TestInstall runs first, alone (the scenarios are parallel and wait for
// the sequential tests): it installs claude, so its time is measured on its
// own and no scenario's deadline includes it.
func TestInstall(t *testing.T) {
	Require(t)
	began := time.Now()
	bin := Claude(t)
	t.Logf("claude %s at %s (install or cache check took %v)", Version(), bin, time.Since(began).Round(time.Millisecond))
}

// (a) claude starts into its idle input box, with only the start-up probe
// sent to the API.
func TestClaudeStartsIdle(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{}, skip)
	screen := a.WaitIdle(ReadyTimeout)
	t.Logf("start-to-ready: %v", time.Since(a.Started).Round(time.Millisecond))
	a.SaveFixture("idle-input-box.txt", screen)
	for _, want := range []string{"Claude Code v" + Version(), "bypass permissions on", "shift+tab to cycle"} {
		if !strings.Contains(screen, want) {
			t.Errorf("idle screen lacks %q", want)
		}
	}
	if n := len(a.Mock.Turns()); n != 0 {
		t.Errorf("%d turns sent before any prompt", n)
	}
	for _, r := range a.Mock.Requests() {
		t.Logf("request at start: %s %s", r.Method, r.Path)
	}
}

// (b) a pasted multi-line prompt is sent as one message and the scripted
// answer appears; claude goes back to its input box and does not exit.
func TestClaudePromptAnswer(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{}, skip, mockapi.Text("The magic word is xyzzy-42."))
	a.WaitIdle(ReadyTimeout)
	prompt := "Tell me the magic word.\n-- a second line that starts with dashes\nthird line"
	began := time.Now()
	a.Submit(prompt)
	screen := a.WaitScreen(AnswerTimeout, "answer then idle", func(s string) bool {
		return strings.Contains(s, "xyzzy-42") && IsIdle(s)
	})
	t.Logf("prompt-to-answer: %v", time.Since(began).Round(time.Millisecond))
	a.SaveFixture("idle-after-answer.txt", screen)
	turns := a.Mock.Turns()
	if len(turns) != 1 {
		t.Fatalf("%d turns, want 1", len(turns))
	}
	if got := turns[0].UserText(); !strings.Contains(got, prompt) {
		t.Errorf("the mock did not receive the prompt as one message; user text:\n%s", got)
	}
	if dead, _ := a.Dead(); dead {
		t.Error("claude exited after answering")
	}
}

// (c) a Bash tool call scripted by the mock runs in the project folder and
// its output goes back to the mock as a tool_result.
func TestClaudeBashTool(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{}, skip,
		mockapi.Bash("echo made-by-claude > made.txt && echo wrote-it"), mockapi.Text("Created made.txt."))
	a.WaitIdle(ReadyTimeout)
	a.Submit("Create made.txt")
	screen := a.WaitScreen(AnswerTimeout, "final answer", func(s string) bool {
		return strings.Contains(s, "Created made.txt.") && IsIdle(s)
	})
	a.SaveFixture("idle-after-tool-use.txt", screen)
	b, err := os.ReadFile(filepath.Join(a.Setup.Dir, "made.txt"))
	if err != nil || string(b) != "made-by-claude\n" {
		t.Errorf("made.txt: %q, %v", b, err)
	}
	turns := a.Mock.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2 (tool call, then its result)", len(turns))
	}
	res := turns[1].ToolResults()
	if len(res) != 1 || !strings.Contains(res[0].ResultText(), "wrote-it") || res[0].IsError {
		t.Errorf("tool result sent back: %+v", res)
	}
}
