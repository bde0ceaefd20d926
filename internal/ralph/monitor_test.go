package ralph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// The background monitor is started as the CLI says (the manager's
// MonitorCommand: swarm ralph run NAME, from cmd/swarm), with the
// environment entries it gives, never a command line ralph makes up.
// Without one no monitor starts.
func TestStartMonitorRunsTheInjectedCommand(t *testing.T) {
	l := newFakeLoop(t, &tmuxtest.Agent{}, Options{MaxIterations: 3})
	seen := filepath.Join(t.TempDir(), "seen")
	var asked []string
	l.m.MonitorCommand = func(name string) ([]string, []string) {
		asked = append(asked, name)
		// A monitor that records how it was started and exits at once.
		return []string{"/bin/sh", "-c", `printf '%s %s %s\n' "$1" "$MARK" "$SWARM_HOME" > "$0"; exit 3`, seen, name}, []string{"MARK=1"}
	}
	_, err := StartMonitor(l.m, "w")
	if err == nil || !strings.Contains(err.Error(), "the ralph monitor exited at start") {
		t.Fatalf("StartMonitor of a monitor that exits at once: %v", err)
	}
	got, _ := os.ReadFile(seen)
	if len(asked) != 1 || asked[0] != "w" || string(got) != "w 1 "+l.m.Store.Root+"\n" {
		t.Fatalf("asked for %q; the monitor saw %q", asked, got)
	}
	l.m.MonitorCommand = nil
	if _, err := StartMonitor(l.m, "w"); err == nil || !strings.Contains(err.Error(), "no program to run") {
		t.Fatalf("StartMonitor without a monitor command: %v", err)
	}
}
