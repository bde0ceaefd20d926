package main

// Tests of what the views and messages say about loops (issue 27, items
// 10-12): real loops of the fake agent in tmux. Helpers start with "vw".

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// vwEnded runs a loop of the fake agent to its end: script is what each
// iteration's agent does.
func vwEnded(t *testing.T, e *testenv.Env, name, script string, extra ...string) {
	t.Helper()
	prompt := e.WriteFile(name+".md", "work\n")
	args := append([]string{"ralph", "spawn", "--name", name, "--no-worktree", "--prompt-file", prompt}, extra...)
	e.MustRun(append(args, "--", e.Agent, "--script", script)...)
	if r := e.Run("ralph", "wait", name, "--timeout", "60"); r.Code == 124 || r.Code == 125 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog(name))
	}
	e.Eventually("the monitor to exit", wkTimeout, func() bool { return !lcMonitorRuns(e, name) })
}

// peek (and logs) of a loop's worker once the loop ended points at the
// loop's kept output, not at swarm respawn (which would start the agent
// alone).
func TestPeekOfEndedLoopHintsItsLogs(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	vwEnded(t, e, "pk", "print bye;exit 3", "--max-iterations", "2")
	noWindow := "swarm: error: worker 'pk' is not running\n" +
		"hint: its ralph loop ended (max_iterations); the agent's last output: swarm ralph logs pk --iteration 2\n"
	wkExpect(t, "peek of the ended loop's worker", e.Run("peek", "pk"), 1, "", noWindow)
	wkExpect(t, "logs of the ended loop's worker", e.Run("logs", "pk"), 1, "", noWindow)
	wkExpect(t, "logs -f of the ended loop's worker", e.Run("logs", "-f", "pk"), 1, "", noWindow)
	if r := e.Run("ralph", "logs", "pk", "--iteration", "2"); r.Code != 0 || !strings.Contains(r.Stdout, "bye") {
		t.Errorf("the hint's command: %s", r)
	}
}

// A swarm flag after the command goes to the command: spawn, spawn
// --ralph and ralph spawn say so (the loop would run with swarm's
// defaults), except for the agent's own options of the same name and
// anything after the command's own "--".
func TestSpawnWarnsOfSwarmFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("P.md", "work\n")
	one := "swarm: warning: --max-iterations after the command is passed to fakeagent, not read by swarm: put swarm's flags before the command (or before \"--\")\n"
	two := "swarm: warning: --max-iterations, --max-time after the command are passed to fakeagent, not read by swarm: put swarm's flags before the command (or before \"--\")\n"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ralph", "spawn", "--name", "a", "--no-worktree", "--prompt-file", prompt, "--no-run", "--", e.Agent, "--max-iterations", "3"}, one},
		{[]string{"spawn", "--name", "b", "--ralph", "--prompt-file", prompt, "--max-iterations", "2", "--no-run", e.Agent, "--max-iterations=3", "--max-time", "1h", "--max-iterations", "4"}, two},
		{[]string{"spawn", "--name", "c", "--tmux", "--", e.Agent, "--script", "quiet", "--max-iterations", "3"}, one},
		// After the command's own "--" a word is an argument, not a flag.
		{[]string{"spawn", "--name", "d", "--tmux", "--", e.Agent, "--script", "quiet", "--", "--max-iterations"}, ""},
	}
	for _, c := range cases {
		r := e.Run(c.args...)
		if r.Code != 0 || r.Stderr != c.want {
			t.Errorf("swarm %q:\n got %s\nwant stderr %q", c.args, r, c.want)
		}
	}
	// claude's own --agent and --worktree are claude's; the swarm flag
	// among them is warned about (before claude is found missing).
	r := e.Run("ralph", "spawn", "--name", "e", "--no-worktree", "--prompt-file", prompt, "--no-run", "--",
		"claude", "--agent", "reviewer", "--worktree", "--max-time", "2h", "--help")
	if want := "swarm: warning: --max-time after the command is passed to claude, not read by swarm: put swarm's flags before the command (or before \"--\")\n"; !strings.HasPrefix(r.Stderr, want) {
		t.Errorf("claude's own options:\n got %s\nwant stderr starting %q", r, want)
	}
}

// ralph status of a failed loop shows what its agent printed last (its
// window is gone): the last non-blank lines of the last iteration's
// output, in the text and the JSON.
func TestRalphStatusOfFailedLoopShowsAgentsLastLines(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// Exit 127 (command not found) fails the loop at once.
	vwEnded(t, e, "fl", "print Error: could not reach the API;print;print   ;print giving up now;exit 127", "--max-iterations", "3")
	r := e.MustRun("ralph", "status", "fl")
	want := "Last output (iteration 1, the agent's last lines):\n  Fake Agent v1.0\n  > work\n  Error: could not reach the API\n  giving up now\nExit reason: failed\n"
	if !strings.Contains(r.Stdout, "Status: failed\n") || !strings.Contains(r.Stdout, want) {
		t.Errorf("ralph status of the failed loop:\n%s\nwant it to hold:\n%s", r.Stdout, want)
	}
	var st map[string]any
	vwJSON(t, e.MustRun("ralph", "status", "fl", "--format", "json").Stdout, &st)
	lines, _ := st["last_output"].([]any)
	if n := len(lines); n < 2 || lines[n-2] != "Error: could not reach the API" || lines[n-1] != "giving up now" || st["last_output_iteration"] != 1.0 {
		t.Errorf("JSON last_output %q, last_output_iteration %v", lines, st["last_output_iteration"])
	}
}

// vwJSON decodes a command's JSON output.
func vwJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// The status fields agree and are current: agent names the profile
// (given or found from the command's name); a lost loop (its monitor and
// tmux server gone) shows no current screen change, ETA or agent state,
// and its worker is marked lost in ralph ls, ralph status and top as in
// ls; text and JSON say the same last screen change.
func TestStatusFieldsAgreeAndAreCurrent(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("P.md", "work\n")
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(e.Agent, claude); err != nil {
		t.Fatal(err)
	}
	e.MustRun("ralph", "spawn", "--name", "byname", "--no-worktree", "--prompt-file", prompt, "--no-run", "--", claude)
	e.MustRun("ralph", "spawn", "--name", "given", "--no-worktree", "--prompt-file", prompt, "--no-run", "--agent", "codex", "--", e.Agent)
	for name, want := range map[string]string{"byname": "claude", "given": "codex"} {
		var st map[string]any
		vwJSON(t, e.MustRun("ralph", "status", name, "--format", "json").Stdout, &st)
		if st["agent"] != want {
			t.Errorf("ralph status %s: agent %v, want %q", name, st["agent"], want)
		}
		if r := e.MustRun("ralph", "status", name); !strings.Contains(r.Stdout, "\nAgent: "+want+"\n") {
			t.Errorf("ralph status %s lacks Agent: %s:\n%s", name, want, r.Stdout)
		}
	}

	e.MustRun("spawn", "--name", "plain", "--tmux", "--", e.Agent, "--script", "quiet")
	e.MustRun("ralph", "spawn", "--name", "lost", "--no-worktree", "--prompt-file", prompt, "--max-iterations", "3",
		"--", e.Agent, "--script", "print working on it;quiet")
	e.Eventually("the agent to work and the monitor to record it", wkTimeout, func() bool {
		st := e.RalphState("lost")
		return st != nil && st["iteration_active"] == true && st["last_screen_change"] != nil && strings.Contains(e.Screen("lost"), "working on it")
	})
	if r := e.MustRun("ralph", "ls"); !regexp.MustCompile(`\n` + `lost +running +running +1/3 .* \d+s ago +\d+ `).MatchString(r.Stdout) {
		t.Errorf("ralph ls of the running loop:\n%s", r.Stdout)
	}
	// The loop is lost: its monitor killed, then its tmux server.
	pid := int(e.RalphState("lost")["monitor_pid"].(float64))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the monitor to go", wkTimeout, func() bool { return !lcMonitorRuns(e, "lost") })
	if _, err := e.Tmux("kill-server"); err != nil {
		t.Fatal(err)
	}
	// What the last judgement said of the agent is not current any more.
	vwEditState(t, e, "lost", func(st map[string]any) { st["agent_state"], st["agent_detail"] = "working", "✻ Working" })
	changed := e.RalphState("lost")["last_screen_change"].(string)

	wkExpect(t, "peek of the lost loop's worker", e.Run("peek", "lost"), 1, "",
		"swarm: error: worker 'lost' is not running\nhint: its ralph loop was lost (a reboot, a killed tmux server): swarm restore lost\n")
	for _, name := range []string{"plain", "lost"} {
		if r := e.Run("status", name); r.Code != 1 || !strings.HasSuffix(r.Stdout, ", lost: swarm restore "+name+")\n") {
			t.Errorf("status of lost %s: want it marked lost, as ls does: %s", name, r)
		}
	}
	if r := e.MustRun("ls"); !regexp.MustCompile(`\nlost +stopped\(lost\) `).MatchString(r.Stdout) {
		t.Errorf("ls:\n%s", r.Stdout)
	}
	if r := e.MustRun("ralph", "ls"); !regexp.MustCompile(`\nlost +running +stopped\(lost\) +1/3 +0/0 +\S+ +- +- +dead +- `).MatchString(r.Stdout) {
		t.Errorf("ralph ls of the lost loop: want worker stopped(lost), no ETA, no LAST-CHANGE:\n%s", r.Stdout)
	}
	if r := e.MustRun("top", "--once"); !regexp.MustCompile(`\nlost +loop +running\(lost\) +1/3 +\S+ +- +- +dead `).MatchString(r.Stdout) ||
		!regexp.MustCompile(`\nplain +tmux +stopped\(lost\) `).MatchString(r.Stdout) {
		t.Errorf("top --once: want the loop running(lost) with no ETA or QUIET, the worker stopped(lost) as ls says:\n%s", r.Stdout)
	}
	var st map[string]any
	vwJSON(t, e.MustRun("ralph", "status", "lost", "--format", "json").Stdout, &st)
	if st["last_screen_change"] != changed || st["quiet_seconds"] != 0.0 || st["agent_state"] != nil || st["agent_detail"] != nil ||
		st["worker_lost"] != true || st["agent"] != "generic" {
		t.Errorf("ralph status --format json of the lost loop: last_screen_change %v (want %s), quiet_seconds %v, agent_state %v, agent_detail %v, worker_lost %v, agent %v",
			st["last_screen_change"], changed, st["quiet_seconds"], st["agent_state"], st["agent_detail"], st["worker_lost"], st["agent"])
	}
	text := e.MustRun("ralph", "status", "lost").Stdout
	ts, err := time.Parse("2006-01-02T15:04:05.999999-07:00", changed)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nIteration: 1/3\n",
		"\nLast screen change: " + ts.Local().Format("2006-01-02 15:04:05") + " (not watched: no monitor)\n",
		"\nAgent: generic\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ralph status of the lost loop lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "working") || strings.Contains(text, "possibly stuck") {
		t.Errorf("ralph status of the lost loop says the gone agent works:\n%s", text)
	}
}

// vwEditState changes a loop's state file (its monitor is gone).
func vwEditState(t *testing.T, e *testenv.Env, name string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(e.Home, "ralph", name, "state.json")
	st := e.RalphState(name)
	edit(st)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// ralph logs --iteration of a full-screen agent (Claude Code redraws its
// spinner and input box in place) prints what its screens showed, each
// message once, not the fragments of every redraw; --raw is unchanged.
func TestRalphLogsIterationOfFullScreenAgentReads(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../internal/termtext/testdata/claude-2.1.197-iteration.raw")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	st := state.NewStore(home, func(w string) { t.Errorf("warning: %s", w) })
	rs := st.Ralph("cc")
	started := state.Timestamp{Time: time.Now().Add(-time.Minute)}
	if err := rs.Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "cc", MaxIterations: 3},
		LoopProgress: state.LoopProgress{Status: state.RalphStopped, CurrentIteration: 1,
			Started: started, LastIterationEnd: started, ExitReason: "complete"}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(rs.Dir, "output", "iteration-0001.log")
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r := hbRun(home, "ralph", "logs", "cc", "--iteration", "1")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("ralph logs --iteration 1: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, once := range []string{
		"\n❯ Do the next step of the task in this folder.\n",
		"\n● Bash(ls -la; seq 1 80)\n",
		"\n● Let me look around first. I listed the files in this folder and will now read the task.\n",
		"\n✻ Cooked for 7s\n",
	} {
		if n := strings.Count(r.stdout, once); n != 1 {
			t.Errorf("%q shows %d times, want once:\n%s", once, n, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Transfiguring") || strings.Count(r.stdout, "\n") > 60 {
		t.Errorf("the spinner's redraws are in the text (%d lines):\n%s", strings.Count(r.stdout, "\n"), r.stdout)
	}
	if r := hbRun(home, "ralph", "logs", "cc", "--iteration", "1", "--raw"); r.stdout != string(raw) {
		t.Errorf("--raw changed the output")
	}
}

// peek (and logs) of a loop's worker made with --no-run and never run
// says how to start it, not that the loop is between iterations or
// paused (it is neither).
func TestPeekOfNotStartedLoopHintsHowToStartIt(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	prompt := e.WriteFile("ns.md", "work\n")
	e.MustRun("ralph", "spawn", "--name", "ns", "--no-worktree", "--prompt-file", prompt, "--no-run", "--", e.Agent, "--script", "quiet")
	want := "swarm: error: worker 'ns' is not running\n" +
		"hint: its ralph loop has not started (spawned with --no-run): swarm ralph run ns\n"
	wkExpect(t, "peek of the not-started loop's worker", e.Run("peek", "ns"), 1, "", want)
	wkExpect(t, "logs of the not-started loop's worker", e.Run("logs", "ns"), 1, "", want)
}
