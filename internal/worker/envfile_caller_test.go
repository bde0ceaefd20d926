package worker

import (
	"strings"
	"testing"
)

// A window's env file holds the caller's environment beneath the
// worker's own (--env wins, each key once), without what the window gets
// from tmux (TMUX, TERM, ...) and without the variables named to unset.
func TestCallerEnvBeneathTheWorkers(t *testing.T) {
	got := callerEnv(
		[]string{"HOME=/h", "TMUX=/s,1,0", "TMUX_PANE=%1", "TERM=xterm", "PWD=/x", "K=caller", "SWARM_RALPH_MONITOR=1", "API_KEY=k"},
		[]string{"SWARM_RALPH_MONITOR"},
		[]string{"K=flag", "PATH=/bin"})
	want := "HOME=/h API_KEY=k K=flag PATH=/bin"
	if strings.Join(got, " ") != want {
		t.Errorf("callerEnv = %q, want %q", got, want)
	}
}
