package ralph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shellPromptText is what swarm says of a prompt file whose first line
// Claude Code would run in its shell (bash mode).
func shellPromptText(file string) string {
	return "the prompt file " + file + " starts with '!', and claude runs a message that starts with '!' in its shell (bash mode): the prompt would run as a shell command; it is not typed in"
}

// A prompt file whose first line starts with '!' is never typed into
// Claude Code, which runs it in its shell with the user's rights (issue
// 27, item 15): ralph spawn and spawn --ralph refuse it with a hint and
// create nothing; one edited into such a command after the spawn stops
// the loop at its next iteration, before any agent starts, with its Fix.
// The same text is fine where it is not typed (--prompt-mode stdin), and
// further down the file.
func TestShellPromptIsNeverTyped(t *testing.T) {
	l := newLoop(t, "bang")
	pwned := filepath.Join(l.Dir, "PWNED")
	l.WriteFile("BANG.md", "\n  !touch "+pwned+"\nthen fix the tests\n")
	l.WriteFile("PROMPT.md", "fix the tests\n!touch is fine here\n")
	agent := l.agent("--script", "exit 0")
	wantErr := "swarm: error: " + shellPromptText("BANG.md") + "\nhint: start the prompt file with other text (a line further down may start with '!')\n"
	for _, args := range [][]string{
		{"ralph", "spawn", "--name", "bang", "--prompt-file", "BANG.md", "--no-worktree", "--agent", "claude"},
		{"spawn", "--name", "bang", "--ralph", "--max-iterations", "3", "--prompt-file", "BANG.md", "--agent", "claude"},
	} {
		r := l.Run(append(append(args, "--"), agent...)...)
		if r.Code != 1 || r.Stdout != "" || r.Stderr != wantErr {
			t.Fatalf("swarm %s: %s\nwant exit 1 and:\n%s", strings.Join(args, " "), r, wantErr)
		}
		if ws := l.Workers(); len(ws) != 0 || l.state() != nil {
			t.Fatalf("a refused spawn left records %v, loop state %v", ws, l.state())
		}
	}

	r := l.Run(append([]string{"ralph", "spawn", "--name", "bang", "--prompt-file", "PROMPT.md", "--no-worktree", "--agent", "claude", "--no-run", "--"}, agent...)...)
	if r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Fatal(r)
	}
	l.WriteFile("PROMPT.md", "\n  !touch "+pwned+"\nthen fix the tests\n")
	r = l.Run("ralph", "run", "bang")
	prompt := filepath.Join(l.Dir, "PROMPT.md")
	fix := "start the prompt file with other text (a line further down may start with '!'), then: swarm ralph resume bang"
	if r.Code != 1 || !strings.Contains(r.Stderr, "swarm: error: "+shellPromptText(prompt)+"\nhint: "+fix+"\n") ||
		l.str("status") != "failed" || l.str("exit_detail") != shellPromptText(prompt) || l.str("exit_hint") != fix {
		t.Fatalf("%s\nstate %v\nlog:\n%s", r, l.state(), l.RalphLog("bang"))
	}
	if msgs := l.messages(); len(msgs) != 0 {
		t.Errorf("the agent was started: %d messages", len(msgs))
	}
	if _, err := os.Stat(filepath.Join(l.Home, "ralph", "bang", "output", "iteration-0001.log")); err == nil {
		t.Errorf("an iteration was started")
	}
	if st := l.Run("ralph", "status", "bang"); !strings.Contains(st.Stdout, "Fix: "+fix) {
		t.Errorf("ralph status does not show the fix:\n%s", st)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the prompt ran as a shell command")
	}

	// Not typed: --prompt-mode stdin hands the text over as a prompt.
	r = l.Run(append([]string{"ralph", "spawn", "--name", "bang2", "--prompt-file", "BANG.md", "--no-worktree", "--agent", "claude", "--prompt-mode", "stdin", "--no-run", "--"}, agent...)...)
	if r.Code != 0 {
		t.Fatalf("--prompt-mode stdin: %s", r)
	}
}
