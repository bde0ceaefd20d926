package agenttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/mockapi"
)

var (
	modesMu sync.Mutex
	modes   = map[string][]string{}
)

// PermissionModes are the --permission-mode choices the claude binary
// lists in its --help: 2.1.197 has "default" (ask before every action but
// reads), which 2.1.200 renamed "manual"; from 2.1.283 a session starts
// in "auto" (a classifier decides instead of asking).
func PermissionModes(t testing.TB, bin string) []string {
	t.Helper()
	modesMu.Lock()
	defer modesMu.Unlock()
	if m, ok := modes[bin]; ok {
		return m
	}
	cmd := exec.Command(bin, "--help")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "DISABLE_AUTOUPDATER=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
	// (choices: "acceptEdits", "auto", "bypassPermissions", "manual",
	// "dontAsk", "plan"), wrapped over several lines.
	text := strings.Join(strings.Fields(string(out)), " ")
	_, rest, ok := strings.Cut(text, "--permission-mode <mode>")
	_, rest, ok2 := strings.Cut(rest, "(choices:")
	list, _, ok3 := strings.Cut(rest, ")")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%s --help lists no --permission-mode choices:\n%s", bin, out)
	}
	var m []string
	for _, c := range strings.Split(list, ",") {
		m = append(m, strings.Trim(strings.TrimSpace(c), `"`))
	}
	modes[bin] = m
	return m
}

// AskFlags are the flags that make claude ask before it runs a tool (a
// permission prompt): --permission-mode manual where the release has it,
// which a release that starts in auto mode needs; none before (its
// default mode asks).
func AskFlags(t testing.TB, bin string) []string {
	for _, m := range PermissionModes(t, bin) {
		if m == "manual" {
			return []string{"--permission-mode", "manual"}
		}
	}
	return nil
}

// The screens of each permission mode, as the loop sees them: the idle
// input box in the mode a session starts in (2.1.332: auto mode, footer
// "⏵⏵ auto mode on"; 2.1.197: "? for shortcuts"), and in manual mode a
// Bash call's permission prompt. Claude Code's profile judges each: idle
// and ready, or a permission dialog.
func TestClaudePermissionModeScreens(t *testing.T) {
	Require(t)
	t.Parallel()
	p := agent.Claude()
	a := StartClaude(t, Config{}, nil, mockapi.Text("Working through the items. Not done yet."))
	screen := a.WaitIdle(ReadyTimeout)
	a.SaveFixture("idle-start-mode.txt", screen)
	auto := strings.Contains(strings.Join(PermissionModes(t, a.Setup.Bin), " "), "manual")
	if auto && !strings.Contains(screen, "auto mode on") {
		t.Errorf("a release with a manual mode started in another mode than auto:\n%s", screen)
	}
	if v := p.Judge(screen, time.Now()); v.State != agent.Idle || !p.Ready(screen) {
		t.Errorf("start screen judged %+v, ready %v:\n%s", v, p.Ready(screen), screen)
	}
	// A long prompt pasted: collapsed in the input box until Enter, then
	// (2.1.332) shown expanded in the transcript above the answer.
	prompt := longPrompt()
	a.Paste(prompt)
	pasted := a.WaitScreen(10*time.Second, "the pasted prompt", Contains("[Pasted text"))
	a.SaveFixture("prompt-pasted-collapsed.txt", pasted)
	if pending, ok := p.Pending(pasted, prompt); !ok || !pending {
		t.Errorf("the pasted prompt is not seen waiting in the box (%v %v):\n%s", pending, ok, pasted)
	}
	a.Keys("Enter")
	answered := a.WaitScreen(AnswerTimeout, "the answer", func(s string) bool { return strings.Contains(s, "Not done yet.") && IsIdle(s) })
	a.SaveFixture("idle-after-answer-long-prompt.txt", answered)
	if v := p.Judge(answered, time.Now()); v.State != agent.Idle || v.Turns != 1 {
		t.Errorf("the answer judged %+v:\n%s", v, answered)
	}

	m := StartClaude(t, Config{}, AskFlags(t, a.Setup.Bin), mockapi.Bash("touch DONE"), mockapi.Text("Created DONE."))
	m.WaitIdle(ReadyTimeout)
	m.Submit("Create the file DONE")
	dialog := m.WaitScreen(AnswerTimeout, "permission prompt", Contains("touch DONE", "Do you want to proceed?"))
	m.SaveFixture("dialog-permission-bash.txt", dialog)
	if v := p.Judge(dialog, time.Now()); v.State != agent.Dialog || v.Kind != agent.StuckPermission {
		t.Errorf("permission prompt judged %+v:\n%s", v, dialog)
	}
	if _, err := os.Stat(filepath.Join(m.Setup.Dir, "DONE")); err == nil {
		t.Error("the tool ran without its permission")
	}
	t.Logf("result: Claude Code %s starts in %s mode; manual mode flags %q give a permission prompt, judged a dialog",
		Version(), map[bool]string{true: "auto", false: "its default"}[auto], AskFlags(t, a.Setup.Bin))
}
