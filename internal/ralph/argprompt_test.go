package ralph_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argLimitText is what swarm says of a prompt of n bytes under
// --prompt-mode arg.
func argLimitText(n int) string {
	return fmt.Sprintf("the prompt (%d bytes) is too long for --prompt-mode arg (one argument can be at most 131071 bytes on Linux)", n)
}

// A prompt longer than Linux takes in one argument cannot be passed with
// --prompt-mode arg: exec fails with E2BIG, which the agent's wrapper
// shell reports as "Argument list too long", exit 126. swarm says what
// happened instead (issue 16, item 14): spawn refuses such a prompt file
// and changes nothing; a prompt file that grows past the limit after
// spawn stops the loop at its next iteration with the same words, before
// any agent is started.
func TestArgPromptTooLongSaysSo(t *testing.T) {
	l := newLoop(t, "big")
	const n = 200 << 10
	big := strings.Repeat("x", n-1) + "\n"
	l.WriteFile("BIG.md", big)
	l.WriteFile("PROMPT.md", "work")
	agent := []string{l.Agent, "--input", "arg", "--record", l.record, "--script", "exit 0"}

	r := l.Run(append([]string{"ralph", "spawn", "--name", "big", "--prompt-file", "BIG.md", "--no-worktree", "--prompt-mode", "arg", "--"}, agent...)...)
	want := "swarm: error: " + argLimitText(n-1) + "\nhint: use --prompt-mode stdin (or type), or shorten the prompt file\n"
	if r.Code != 1 || r.Stdout != "" || r.Stderr != want {
		t.Fatalf("spawn with a prompt too long for arg mode: %s\nwant exit 1 and:\n%s", r, want)
	}
	if ws := l.Workers(); len(ws) != 0 || l.state() != nil {
		t.Fatalf("a refused spawn left records %v, loop state %v", ws, l.state())
	}

	r = l.Run(append([]string{"ralph", "spawn", "--name", "big", "--prompt-file", "PROMPT.md", "--no-worktree", "--prompt-mode", "arg", "--no-run", "--"}, agent...)...)
	if r.Code != 0 {
		t.Fatal(r)
	}
	l.WriteFile("PROMPT.md", big)
	r = l.Run("ralph", "run", "big")
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: "+argLimitText(n-1)+"\nhint: use --prompt-mode stdin (or type), or shorten the prompt file\n") ||
		l.str("status") != "failed" || l.str("exit_detail") != argLimitText(n-1) || strings.Contains(r.Stderr, "not executable") {
		t.Fatalf("%s\nstate %v\nlog:\n%s", r, l.state(), l.RalphLog("big"))
	}
	if msgs := l.messages(); len(msgs) != 0 {
		t.Errorf("the agent was started: %d messages", len(msgs))
	}
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "big", "output", "iteration-0001.log")); err == nil {
		t.Errorf("an iteration was started")
	}
}
