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
	// ("shift+tab to cycle" follows it in 2.1.197's footer, not in
	// 2.1.332's at start.)
	for _, want := range []string{"Claude Code v" + Version(), "bypass permissions on"} {
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

// What is behind TestLoopPromptSubmittedAtStart, without swarm: right
// after claude shows its input box, it takes a second or more to echo a
// paste, and an Enter sent before the echo (200 ms after the paste, about
// when swarm's 150 ms quiet-output settle presses it) is dropped: the
// prompt stays in the input box. Pressed once the echo shows, Enter
// submits. Only the second is asserted; the first is logged (it is a
// race, lost most of the time on this 2-core machine).
func TestClaudeEnterRightAfterPaste(t *testing.T) {
	Require(t)
	t.Parallel()
	for _, early := range []bool{true, false} {
		name := map[bool]string{true: "enter-200ms-after-paste", false: "enter-after-echo"}[early]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := StartClaude(t, Config{Cols: 80, Rows: 24}, skip, mockapi.Text("ok"))
			a.WaitIdle(ReadyTimeout)
			ready := time.Since(a.Started)
			before := a.Screen()
			a.Paste("Do the next step.\nSecond line.\n")
			pasted := time.Now()
			echoed := func(s string) bool { return s != before && strings.Contains(s, "Do the next step.") }
			if early {
				// A deadline, not a sleep for a condition: this case is
				// about an Enter sent at this moment.
				time.Sleep(200 * time.Millisecond)
			} else {
				a.WaitScreen(10*time.Second, "the paste's echo", echoed)
			}
			enterAfter := time.Since(pasted)
			a.Keys("Enter")
			submitted := a.Mock.WaitFor(20*time.Second, func(rs []mockapi.Request) bool {
				for _, r := range rs {
					if r.Turn {
						return true
					}
				}
				return false
			})
			pending := PendingInput(a.Screen())
			t.Logf("result: %s: input box at %v, Enter %v after the paste, submitted: %v, left in the input box: %q",
				name, ready.Round(100*time.Millisecond), enterAfter.Round(10*time.Millisecond), submitted, pending)
			if !early && !submitted {
				t.Error("Enter after the paste's echo did not submit the prompt")
			}
		})
	}
}
