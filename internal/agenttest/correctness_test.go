package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// What the real Claude Code showed against swarm (issue: correctness
// first), each scenario in its own tmux server and HOME, in the default
// 200x50 worker window.

// A turn that thinks longer than the inactivity timeout (the mock holds
// its first byte back; claude's spinner runs meanwhile, its output in the
// top rows of the window) is work: no TIMEOUT, the loop ends on the
// answer. It was killed at the timeout: the fingerprint hashed the blank
// rows at the bottom of the window.
func TestLoopLongThinkIsNotInactive(t *testing.T) {
	Require(t)
	t.Parallel()
	const timeout, think = 10 * time.Second, 30 * time.Second
	l := startLoop(t, "think", loopOpts{
		replies: []mockapi.Reply{mockapi.Text("Thought it through.\n<promise>COMPLETE</promise>").Think(think)},
		flags:   []string{"--idle-grace", "3s", "--inactivity-timeout", "10", "--max-iterations", "2"},
	})
	code, out := l.wait(3 * time.Minute)
	log := l.iterLog()
	if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 1 || strings.Contains(log, "TIMEOUT") {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations\n%s", code, out, l.str("exit_reason"), l.num("current_iteration"), log)
	}
	turns := l.mock.Turns()
	t.Logf("result: a %v turn with --inactivity-timeout %v: %s, exit %d, %d iteration(s), %d turn(s), no TIMEOUT",
		think, timeout, l.str("exit_reason"), code, l.num("current_iteration"), len(turns))
}

// A permission prompt a moment after the prompt's Enter (a tool call at
// once, claude run without --dangerously-skip-permissions) pauses the
// loop: the agent has the prompt, and nothing is typed into its dialog.
// swarm send answers it (no Escape first: Escape is "No"), the loop stays
// held until resumed, and then ends on the agent's answer.
func TestLoopPermissionPromptPausesAnswerResume(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "perm", loopOpts{askPermissions: true, noRescue: true,
		replies: []mockapi.Reply{mockapi.Bash("touch DONE"), mockapi.Text("Created DONE.\n<promise>COMPLETE</promise>")},
		flags:   []string{"--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "3"},
	})
	l.eventually("the loop to pause at the permission prompt", 2*time.Minute, func() bool { return l.str("status") == "paused" })
	done := filepath.Join(l.setup.Dir, "DONE")
	reason := l.str("pause_reason")
	// Its hooks name the dialog: the permission and what it is for.
	if l.str("exit_reason") != "" || !strings.Contains(reason, `the agent is waiting at a permission prompt ("Bash: touch DONE")`) {
		t.Fatalf("paused with reason %q, exit reason %q\n%s", reason, l.str("exit_reason"), l.iterLog())
	}
	if _, err := os.Stat(done); err == nil || len(l.mock.Turns()) != 1 {
		t.Fatalf("the dialog was answered by swarm: DONE exists or %d turns", len(l.mock.Turns()))
	}
	if r := l.env.Run("send", l.name, "1"); r.Code != 0 {
		t.Fatalf("send: %s", r)
	}
	l.eventually("the tool to run", time.Minute, func() bool { _, err := os.Stat(done); return err == nil })
	l.eventually("the answer's turn", time.Minute, func() bool { return len(l.mock.Turns()) >= 2 })
	// Held: the iteration does not end while the loop is paused, over
	// ten polls (500ms) after the agent's answer; an absence can only be
	// watched for a while.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if st := l.str("status"); st != "paused" || strings.Contains(l.iterLog(), "[END]") {
			t.Fatalf("the paused iteration ended before the resume: status %s\n%s", st, l.iterLog())
		}
	}
	if r := l.env.Run("ralph", "resume", l.name); r.Code != 0 {
		t.Fatalf("resume: %s", r)
	}
	code, out := l.wait(2 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 1 {
		t.Fatalf("after the resume: exit %d (%s), reason %q\n%s", code, out, l.str("exit_reason"), l.iterLog())
	}
	r := l.env.Run("ralph", "resume", l.name)
	if r.Code != 1 || !strings.Contains(r.Stderr, "there is nothing to resume") {
		t.Fatalf("resume of the complete loop: %s", r)
	}
	t.Logf("result: permission prompt right after the prompt: paused (%s), answered with swarm send 1, held until resume, then %s after %d iteration(s), exit %d; a second resume refused",
		reason, l.str("exit_reason"), l.num("current_iteration"), code)
}

// A prompt file that starts with '/' is warned of at spawn, and the
// screen claude answers it with ("Unknown command") stops the loop at the
// first iteration with the cause and its fix, instead of idling every
// iteration to the cap and exiting 0.
func TestLoopSlashPromptStopsWithTheCause(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "slash", loopOpts{prompt: "/fix the failing tests\n", noRescue: true,
		flags: []string{"--idle-grace", "3s", "--inactivity-timeout", "60", "--max-iterations", "3"},
	})
	if !strings.Contains(l.spawnErr, "swarm: warning: the prompt file") || !strings.Contains(l.spawnErr, "starts with '/'") {
		t.Errorf("spawn did not warn: %q", l.spawnErr)
	}
	code, out := l.wait(90 * time.Second)
	if code != 1 || l.str("exit_reason") != "failed" || l.num("current_iteration") != 1 ||
		!strings.Contains(l.str("exit_detail"), "Unknown") || !strings.Contains(l.str("exit_hint"), "starts with '/'") {
		t.Fatalf("ralph wait exit %d (%s); reason %q after %d, detail %q hint %q\n%s", code, out, l.str("exit_reason"),
			l.num("current_iteration"), l.str("exit_detail"), l.str("exit_hint"), l.iterLog())
	}
	t.Logf("result: prompt starting with '/': warned at spawn, %s after %d iteration(s), exit %d; detail %q; %d turns reached the mock",
		l.str("exit_reason"), l.num("current_iteration"), code, l.str("exit_detail"), len(l.mock.Turns()))
}

// longPrompt is a prompt file of 63 lines, as users write them: a list of
// items, and near its end the usual line that names the completion tag.
func longPrompt() string {
	var b strings.Builder
	b.WriteString("You are working through the checklist below, one item per iteration.\n")
	for i := 1; i <= 58; i++ {
		fmt.Fprintf(&b, "- [ ] item %d: make the %d-th function of the module handle empty input and add a test for it\n", i, i)
	}
	b.WriteString("Work on the first unchecked item only, then check it off in this file.\n")
	b.WriteString("Commit your work with a message that names the item.\n")
	b.WriteString("When every item above is checked, print <promise>COMPLETE</promise> and stop.\n")
	b.WriteString("Otherwise end your turn with a one-line summary.\n")
	return b.String()
}

// A long prompt that names its own completion tag is not a completion
// (issue 27, item 16): Claude Code shows a pasted prompt expanded in its
// transcript once submitted, and 2.1.332 redraws it there cell by cell
// (only what changed), so its output stream holds the tag's line in
// pieces; the loop stopped complete at iteration 1 on the tag in the
// prompt's echo (2.1.197's full redraws were told apart), although the
// agent's final message ("Working through the items. Not done yet.") has
// none. With hooks the promise is judged in the final message only; with
// hooks off (the screen fallback) the echo is told from the agent's own
// tag on the rendered pane, and the agent's tag in iteration 2 still
// completes the loop. SWARM_CLAUDE_CODE_VERSION=2.1.332 runs it against
// that release.
func TestLoopLongPromptNamingItsTagIsNotComplete(t *testing.T) {
	Require(t)
	prompt := longPrompt()
	if n := strings.Count(prompt, "\n"); n != 63 {
		t.Fatalf("the prompt has %d lines, want 63", n)
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{{"hooks", Config{}}, {"screen", Config{DisableHooks: true}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := startLoop(t, "long-"+c.name, loopOpts{prompt: prompt, cfg: c.cfg,
				replies: []mockapi.Reply{
					mockapi.Text("Working through the items. Not done yet."),
					mockapi.Text("All items are checked.\n<promise>COMPLETE</promise>"),
				},
				flags: []string{"--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "3"},
			})
			code, out := l.wait(4 * time.Minute)
			// Iteration 1 goes on (its echo named the tag), iteration 2
			// completes (the agent printed it).
			if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 2 {
				t.Fatalf("ralph wait exit %d (%s); reason %q after %d iterations, want complete after 2\n%s",
					code, out, l.str("exit_reason"), l.num("current_iteration"), l.iterLog())
			}
			turns := l.mock.Turns()
			if len(turns) != 2 || !strings.Contains(turns[0].UserText(), "item 58") {
				t.Fatalf("%d turns; the first lacks the prompt's end", len(turns))
			}
			t.Logf("result: Claude Code %s, 63-line prompt naming its tag, %s: %s after %d iterations (exit %d)",
				Version(), c.name, l.str("exit_reason"), l.num("current_iteration"), code)
		})
	}
}
