// Package agenttest runs real agent CLIs (Claude Code) in tmux against
// internal/mockapi, for `make test-agents`. It installs a pinned Claude
// Code with npm once per cache, gives every test its own HOME with the
// config that skips (or, on request, keeps) Claude's first-run dialogs,
// and its own tmux server (-L socket, killed at cleanup).
//
// The tests run only when SWARM_TEST_AGENTS=1 (make test-agents sets it):
// they need npm, the npm registry once, and take a minute or more. Without
// it every helper that needs claude skips the test.
//
// A scenario in this package:
//
//	a := agenttest.StartClaude(t, agenttest.Config{NoTrust: true},
//		[]string{"--dangerously-skip-permissions"}, mockapi.Text("done"))
//	a.WaitScreen(agenttest.ReadyTimeout, "trust dialog", agenttest.Contains("Yes, I trust this folder"))
//
// A swarm test that wants claude in a swarm worker prepares the HOME and
// the environment, and hands the command to swarm:
//
//	mock := agenttest.StartMock(t, mockapi.Text("<promise>COMPLETE</promise>"))
//	setup := agenttest.Prepare(t, mock, agenttest.Config{})
//	args := append([]string{"spawn", "--name", "w", "--tmux", "--cwd", setup.Dir, "--"},
//		setup.Command("--dangerously-skip-permissions")...)
//	// run swarm with args; setup.Command is `env -i K=V... claude ...`, so
//	// the worker gets exactly setup.Env whatever the tmux server inherited.
//
// Then assert on mock.Turns() (what claude sent) and on the pane.
//
// loop_test.go does that end to end: the real swarm binary (built once,
// internal/testenv: its own SWARM_HOME and tmux socket per test) runs
// `swarm ralph spawn ... --agent claude -- env -i ... claude` loops
// against the mock, waits with `swarm ralph wait`, and reads ralph status,
// iterations.log and the mock's requests. Each scenario logs one
// "result:" line with what it measured.
package agenttest
