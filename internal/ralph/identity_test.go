package ralph

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// The agent's exit status file is created private (0600), whatever the
// umask the agent's pane runs with: it lives in the state root, whose files
// are 0600 (issue 16, item 19). The agent itself keeps the pane's umask.
func TestExitFileIsPrivate(t *testing.T) {
	t.Parallel()
	for _, mode := range []state.PromptMode{ModeType, ModeStdin, ModeArg} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			snapshot, exit, umask := filepath.Join(dir, "prompt.txt"), filepath.Join(dir, "iteration-0001.exit"), filepath.Join(dir, "umask")
			if err := os.WriteFile(snapshot, []byte("work"), 0o600); err != nil {
				t.Fatal(err)
			}
			argv := agentCommand(mode, []string{"sh", "-c", `umask > "$0"; exit 3`, umask}, snapshot, exit)
			cmd := exec.Command("sh", append([]string{"-c", `umask 022; exec "$@"`, "sh"}, argv...)...)
			if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
				t.Fatalf("wrapper: %v", err)
			}
			fi, err := os.Stat(exit)
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("exit file mode %o, want 600", perm)
			}
			if data, _ := os.ReadFile(exit); string(data) != "3\n" {
				t.Errorf("exit file %q", data)
			}
			if data, _ := os.ReadFile(umask); string(data) != "0022\n" {
				t.Errorf("the agent ran with umask %q, want the pane's 0022", data)
			}
		})
	}
}

// The agent's identity recorded in a loop's state holds the boot it
// started in: after a reboot, the same pid and start ticks are not the
// agent (issue 16, item 19). A state without one compares the ticks.
func TestAgentOfAnotherBootIsNotTheAgent(t *testing.T) {
	t.Parallel()
	if proc.BootID() == "" {
		t.Skip("no boot id on this system")
	}
	self, _ := proc.Identify(os.Getpid())
	for _, c := range []struct {
		boot  string
		alive bool
	}{
		{"00000000-0000-0000-0000-000000000000", false},
		{proc.BootID(), true},
		{"", true},
	} {
		st := &state.Ralph{LoopProgress: state.LoopProgress{AgentPID: self.PID, AgentStartTicks: self.Ticks, AgentBootID: c.boot}}
		if got := agentTarget(st).Alive(); got != c.alive {
			t.Errorf("agent of boot %q: alive %v, want %v", c.boot, got, c.alive)
		}
	}
}
