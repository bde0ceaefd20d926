package stresstest

// Issue 27, item 5: swarm restore keeps the exit status an agent's
// wrapper recorded before its tmux server went.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRestoreKeepsTheRecordedExitCode: the monitor dies (SIGKILL), its
// agent then exits 3 (recorded by its wrapper) and the tmux server goes;
// swarm restore's new monitor ends that iteration as the exit it was
// (exit=3, a failure), as ralph resume's would, not as exit=none.
func TestRestoreKeepsTheRecordedExitCode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.WriteFile("PROMPT.md", "work\n")
	// The agent exits 3 s after its prompt: its monitor is dead by then.
	w.must(append([]string{"ralph", "spawn", "--name", "lx", "--no-worktree", "--prompt-file", "PROMPT.md",
		"--max-iterations", "1", "--"}, w.e.Agent, "--script", "print working;sleep 3s;exit 3", w.marker+"-loop")...)
	w.e.Eventually("the prompt to be delivered", 30*time.Second, func() bool {
		return w.ralphFlag("lx", "prompt_delivered") && w.ralphNum("lx", "agent_pid") > 0
	})
	ms := w.monitors("lx")
	if len(ms) != 1 {
		t.Fatalf("%d monitors", len(ms))
	}
	if err := signalConfirmed(ms[0], unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exit := filepath.Join(w.e.Home, "ralph", "lx", "output", "iteration-0001.exit")
	w.e.Eventually("the agent's exit to be recorded", 30*time.Second, func() bool {
		data, err := os.ReadFile(exit)
		return err == nil && strings.TrimSpace(string(data)) == "3"
	})
	if out, err := w.e.Tmux("kill-server"); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	w.must("restore", "--all")
	st := w.waitLoopEnd("lx", 60*time.Second)
	log := w.e.RalphLog("lx")
	if !strings.Contains(log, "[END] iteration 1 exit=3 ") || strings.Contains(log, "exit=none") {
		t.Errorf("the restored iteration's END does not keep the recorded exit 3:\n%s", log)
	}
	if st["total_failures"] != float64(1) || st["last_exit_code"] != float64(3) {
		t.Errorf("total_failures %v, last_exit_code %v; want 1 and 3", st["total_failures"], st["last_exit_code"])
	}
}
