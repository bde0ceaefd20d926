package ralph

import (
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// Issue 27, item 16: a prompt that names its own completion tag, as
// Claude Code 2.1.332 echoes it. Once submitted it shows the pasted
// prompt expanded in its transcript, and redraws it by rewriting only the
// cells that changed: in its output stream the tag's line reads
// "check\x1b[34Gd, print <promise>COMPLETE</promise> and stop." (as
// captured), with no context the echo check could tell it by.
const echoPrompt = "Work through the checklist below, one item per iteration.\n" +
	"- [ ] item 1: handle empty input\n" +
	"- [ ] item 2: handle long input\n" +
	"When every item above is checked, print <promise>COMPLETE</promise> and stop.\n" +
	"Otherwise end your turn with a one-line summary.\n"

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// redrawnEcho is the stream's piece of 2.1.332's redraw of the prompt.
const redrawnEcho = "\r\x1b[2C\x1b[1BWork on the first unc\x1b[26Gcked item\r\x1b[3C\x1b[1B\x1b[38;5;231mhen\x1b[8Gevery item above is check\x1b[34Gd, print <promise>COMPLETE</promise> and stop.\r\x1b[2C\x1b[1BOtherwise end your \x1b[23Gurn\x1b[27Gwith a one-li\x1b[41Ge summary.\x1b[39m\r\n"

// renderedEcho is the prompt as the terminal shows it (capture-pane):
// whole lines, under the input marker.
func renderedEcho(prompt string) string {
	return "❯ " + strings.ReplaceAll(strings.TrimRight(prompt, "\n"), "\n", "\n  ") + "\n\n"
}

// echoAgent plays 2.1.332 on echoPrompt: each turn its output has the
// redrawn echo, its screen the rendered one, then answer (its final
// message) as "● answer".
func echoAgent(p *tmuxtest.Pane, msg, answer string) {
	p.Draw(redrawnEcho+"\x1b[38;5;231m●\x1b[39m "+strings.ReplaceAll(answer, "\n", "\r\n  ")+"\r\n",
		claudeScreen(renderedEcho(msg)+"● "+strings.ReplaceAll(answer, "\n", "\n  ")+"\n✻ Worked for 1s\n", "? for shortcuts"))
}

// With hooks, the promise is judged in the final message the Stop event
// carries, and only there: the redrawn echo and an earlier message that
// names the tag do not complete the loop; the tag in a final message
// does.
func TestEngineHooksJudgeThePromiseInTheFinalMessageOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			answer := "Working through the items. Not done yet."
			if run == 1 {
				p.Print("\x1b[38;5;231m●\x1b[39m I will print <promise>COMPLETE</promise> once every item is checked.\r\n")
			} else {
				answer = "All items are checked.\n<promise>COMPLETE</promise>"
			}
			think(50 * time.Millisecond)
			echoAgent(p, msg, answer)
			a.emit(p, agent.Event{Name: agent.EventStop, Message: answer})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		writeFile(t, l.prompt, echoPrompt)
		l.expectEnd(0, ReasonComplete, 2)
	})
}

// On the screen (no hooks), the echo of the prompt is never a
// completion, however the agent redrew it: a promise tag the prompt also
// holds counts once the rendered pane shows it as the agent's own, as
// the tag in iteration 2's answer is.
func TestEngineScreenNeverTakesTheRedrawnEchoForCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			answer := "Working through the items. Not done yet."
			if run == 2 {
				answer = "All items are checked.\n<promise>COMPLETE</promise>"
			}
			echoAgent(p, msg, answer)
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: time.Hour}}))
		writeFile(t, l.prompt, echoPrompt)
		l.expectEnd(0, ReasonComplete, 2)
	})
}

// The detector on its own: a redrawn stream's tag that the prompt holds
// waits for Confirm; the rendered pane tells the echo from the agent's.
func TestDetectorConfirmsARedrawnTagOnTheRenderedPane(t *testing.T) {
	cfg := DetectorConfig{Promise: true, Redrawn: true}
	d := NewDetector(cfg, echoPrompt)
	d.Feed([]byte(redrawnEcho))
	d.Flush()
	if _, ok := d.Stop(); ok || d.Suspects() == 0 {
		t.Fatalf("the redrawn echo's tag: stop %v, suspects %d", ok, d.Suspects())
	}
	if d.Confirm(renderedEcho(echoPrompt) + "● Not done yet.\n") {
		t.Fatal("confirmed by the rendered echo")
	}
	if !d.Confirm(renderedEcho(echoPrompt) + "● All items are checked.\n  <promise>COMPLETE</promise>\n") {
		t.Fatal("the agent's own tag on the pane was not confirmed")
	}
	if s, ok := d.Stop(); !ok || s.Kind != SignalComplete || d.Suspects() != 0 {
		t.Fatalf("after Confirm: %v %v, suspects %d", s, ok, d.Suspects())
	}
	// A tag the prompt does not hold counts at once; without Redrawn
	// (a final message) nothing waits.
	d = NewDetector(cfg, echoPrompt)
	d.Feed([]byte("● <promise>BLOCKED: no access to the database</promise>\n"))
	d.Flush()
	if s, ok := d.Stop(); !ok || s.Kind != SignalBlocked {
		t.Fatalf("a tag not in the prompt: %v %v", s, ok)
	}
	d = NewDetector(DetectorConfig{Promise: true}, echoPrompt)
	d.Feed([]byte("All done.\n<promise>COMPLETE</promise>\n"))
	d.Flush()
	if _, ok := d.Stop(); !ok {
		t.Fatal("a final message's tag did not count")
	}
}

// A Stop event without the final message (a Claude Code whose hooks do
// not send last_assistant_message) leaves the promise to the screen, as
// without hooks: the agent's tag there completes the loop, the redrawn
// echo does not.
func TestEngineHooksWithoutTheFinalMessageJudgeTheScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHookedAgent(func(a *hookedAgent, p *tmuxtest.Pane, run int, msg string) {
			a.emit(p, agent.Event{Name: agent.EventUserPromptSubmit})
			answer := "Working through the items. Not done yet."
			if run == 2 {
				answer = "All items are checked.\n<promise>COMPLETE</promise>"
			}
			think(50 * time.Millisecond)
			echoAgent(p, msg, answer)
			a.emit(p, agent.Event{Name: agent.EventStop})
		})
		l := hookedLoop(t, a, Options{MaxIterations: 3})
		writeFile(t, l.prompt, echoPrompt)
		l.expectEnd(0, ReasonComplete, 2)
	})
}
