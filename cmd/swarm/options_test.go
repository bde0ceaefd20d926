package main

// The command line reaches each command's run function as the options it
// means: every constructor is called with a runF that captures them.

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// ipParse builds a command with newCmd and a capturing runF, runs args
// through it and returns the options its run function received.
func ipParse[T any](t *testing.T, newCmd func(*factory, func(*T) error) *cobra.Command, args ...string) *T {
	t.Helper()
	f := newFactory(&IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, t.TempDir())
	var got *T
	cmd := newCmd(f, func(o *T) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if got == nil {
		t.Fatalf("%q: run function not called", args)
	}
	return got
}

// ipEqual reports a difference between got and want.
func ipEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestSpawnOptions(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdSpawn, "--name", "w", "--tmux", "--env", "A=1", "--env", "B=x y=z", "--tag", "t1", "--tag", "t2",
		"--cwd", "/tmp", "--ready-wait", "--ready-timeout", "7", "--session", "s", "--tmux-socket", "sock",
		"--max-log-size", "2MiB", "--", "agent", "--flag", "-x", "--", "arg")
	ipEqual(t, "spawn worker options", o.Worker, worker.SpawnOptions{
		Name: "w", Tmux: true, Env: []string{"A=1", "B=x y=z"}, Tags: []string{"t1", "t2"}, Cwd: "/tmp", MaxLogSize: 2 << 20,
		ReadyWait: true, ReadyTimeout: 7 * time.Second, Session: "s", Socket: "sock",
		Command: []string{"agent", "--flag", "-x", "--", "arg"},
	})
	if o.Ralph || o.IO == nil || o.Manager == nil {
		t.Errorf("spawn: ralph %v, IO %v, Manager set %v", o.Ralph, o.IO, o.Manager != nil)
	}

	// Flags after the command's first word belong to the command.
	o = ipParse(t, newCmdSpawn, "--name", "w", "sleep", "--name", "other", "5")
	ipEqual(t, "command without --", o.Worker.Command, []string{"sleep", "--name", "other", "5"})
	ipEqual(t, "name", o.Worker.Name, "w")
	ipEqual(t, "default ready timeout", o.Worker.ReadyTimeout, 120*time.Second)
}

func TestSpawnRalphOptions(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdSpawn, "--name", "r", "--ralph", "--prompt-file", "P.md", "--max-iterations", "3", "--", "claude")
	if !o.Ralph {
		t.Fatal("--ralph not set")
	}
	ipEqual(t, "spawn --ralph loop", o.Loop.Loop, ralph.Options{
		PromptFile: "P.md", MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: 60 * time.Second},
		CheckDoneContinuous: true, PromptMode: "type", ReadyTimeout: state.WholeSeconds{Duration: 120 * time.Second}, Promise: true,
		CompletionPromise: "COMPLETE", CheckTimeout: state.Seconds{Duration: 120 * time.Second}, RestartDelay: state.Seconds{Duration: time.Second},
		IdleGrace: state.Seconds{Duration: 15 * time.Second}, LimitMessage: "continue", LimitWait: state.Seconds{Duration: 30 * time.Minute},
	})
	ipEqual(t, "command", o.Worker.Command, []string{"claude"})
}

// TestLifecycleFlags (issue 19): the worktree set-up flags reach the
// worker; a bare --notify is the desktop (swarm.py's bool flag), values
// add targets; --on-complete names the strategy.
func TestLifecycleFlags(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "P.md", "--base", "main", "--new-branch",
		"--worktree-setup", "npm ci", "--notify", "--notify=webhook:http://127.0.0.1:8/h", "--notify=ntfy:https://ntfy.sh/t",
		"--notify=webhook:http://127.0.0.1:8/h", "--on-complete", "squash", "--", "claude")
	w, l := o.Spawn.Worker, o.Spawn.Loop
	if w.Base != "main" || !w.NewBranch || w.WorktreeSetup != "npm ci" {
		t.Errorf("worker options %+v", w)
	}
	ipEqual(t, "notify", []any{l.Notify, l.NotifyTo}, []any{true, []string{"webhook:http://127.0.0.1:8/h", "ntfy:https://ntfy.sh/t"}})
	ipEqual(t, "on-complete", l.OnComplete, "squash")
	ipEqual(t, "command", o.Spawn.Worker.Command, []string{"claude"})
	s := ipParse(t, newCmdSpawn, "--name", "r", "--ralph", "--prompt-file", "P.md", "--max-iterations", "1", "--notify", "--", "claude")
	ipEqual(t, "spawn --ralph --notify", []any{s.Loop.Loop.Notify, s.Loop.Loop.NotifyTo, s.Worker.Command}, []any{true, []string(nil), []string{"claude"}})
	s = ipParse(t, newCmdSpawn, "--name", "r", "--ralph", "--prompt-file", "P.md", "--max-iterations", "1", "--notify", "claude")
	ipEqual(t, "spawn --ralph --notify CMD", []any{s.Loop.Loop.Notify, s.Worker.Command}, []any{true, []string{"claude"}})
}

func TestRalphSpawnDefaults(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "PROMPT.md", "--", "claude", "-p")
	ipEqual(t, "ralph spawn options", o.Spawn, ralph.SpawnOptions{
		Worker: worker.SpawnOptions{Name: "r", Worktree: true, Command: []string{"claude", "-p"}, MaxLogSize: 50 << 20},
		Loop: ralph.Options{
			PromptFile: "PROMPT.md", MaxIterations: 50, InactivityTimeout: state.WholeSeconds{Duration: 180 * time.Second},
			CheckDoneContinuous: true, PromptMode: "type", ReadyTimeout: state.WholeSeconds{Duration: 120 * time.Second}, Promise: true,
			CompletionPromise: "COMPLETE", CheckTimeout: state.Seconds{Duration: 120 * time.Second}, RestartDelay: state.Seconds{Duration: time.Second},
			IdleGrace: state.Seconds{Duration: 15 * time.Second}, LimitMessage: "continue", LimitWait: state.Seconds{Duration: 30 * time.Minute},
		},
	})
	if o.Tmux {
		t.Error("--tmux set without the flag")
	}
}

func TestRalphSpawnEveryFlag(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "P.md", "--no-worktree", "--tmux",
		"--max-iterations", "7", "--inactivity-timeout", "90s", "--done-pattern", "ALL DONE$",
		"--no-check-done-continuous", "--prompt-mode", "stdin", "--no-promise", "--completion-promise", "FIN",
		"--done-file", "DONE", "--check", "go test ./...", "--check", "go vet ./...", "--check-timeout", "2m",
		"--require-change", "--max-time", "1h30m", "--fail-on-cap", "--restart-delay", "500ms", "--on-exit", "echo bye",
		"--max-context", "80", "--foreground", "--replace", "--clean-state", "--force-dirty",
		"--ready-timeout", "9", "--env", "K=V", "--tag", "t", "--branch", "b", "--worktree-dir", "/wt",
		"--max-log-size", "1G", "--agent", "codex", "--idle-grace", "5s", "--limit-message", "go on", "--limit-wait", "10m",
		"--limit-pattern", "quota", "--ready-pattern", "READY>", "--ready-pattern", "ok$",
		"--", "agent", "--yolo")
	ipEqual(t, "ralph spawn options", o.Spawn, ralph.SpawnOptions{
		Worker: worker.SpawnOptions{
			Name: "r", Env: []string{"K=V"}, Tags: []string{"t"}, Branch: "b", WorktreeDir: "/wt", MaxLogSize: 1 << 30,
			Command: []string{"agent", "--yolo"},
		},
		Loop: ralph.Options{
			PromptFile: "P.md", MaxIterations: 7, InactivityTimeout: state.WholeSeconds{Duration: 90 * time.Second}, DonePattern: "ALL DONE$",
			PromptMode: "stdin", ReadyTimeout: state.WholeSeconds{Duration: 9 * time.Second}, CompletionPromise: "FIN", DoneFile: "DONE",
			Checks: []string{"go test ./...", "go vet ./..."}, CheckTimeout: state.Seconds{Duration: 2 * time.Minute}, RequireChange: true,
			MaxTime: state.Seconds{Duration: 90 * time.Minute}, FailOnCap: true, RestartDelay: state.Seconds{Duration: 500 * time.Millisecond}, OnExit: "echo bye", MaxContext: 80,
			Agent: "codex", IdleGrace: state.Seconds{Duration: 5 * time.Second}, LimitMessage: "go on", LimitWait: state.Seconds{Duration: 10 * time.Minute},
			LimitPatterns: []string{"quota"}, ReadyPatterns: []string{"READY>", "ok$"},
		},
		Foreground: true, Replace: true, CleanState: true, ForceDirty: true,
	})
	if !o.Tmux {
		t.Error("--tmux not recorded")
	}
	// --worktree=false is honoured too (not only --no-worktree).
	o = ipParse(t, newCmdRalphSpawn, "--name", "r", "--prompt-file", "P.md", "--worktree=false", "--", "a")
	ipEqual(t, "--worktree=false", o.Spawn.Worker.Worktree, false)
}

// The "NAME or --all" commands.
func TestNameOrAllOptions(t *testing.T) {
	t.Parallel()
	k := ipParse(t, newCmdKill, "w", "--rm-worktree", "--force-dirty")
	ipEqual(t, "kill w", [3]any{k.Name, k.All, k.Kill}, [3]any{"w", false, worker.KillOptions{RmWorktree: true, ForceDirty: true}})
	k = ipParse(t, newCmdKill, "--all")
	ipEqual(t, "kill --all", [2]any{k.Name, k.All}, [2]any{"", true})

	c := ipParse(t, newCmdClean, "w")
	ipEqual(t, "clean w", c.Clean, worker.CleanOptions{RmWorktree: true})
	c = ipParse(t, newCmdClean, "--all", "--no-rm-worktree", "--force-dirty")
	ipEqual(t, "clean --all --no-rm-worktree", [3]any{c.Name, c.All, c.Clean}, [3]any{"", true, worker.CleanOptions{ForceDirty: true}})

	p := ipParse(t, newCmdPeek, "w", "-n", "5")
	ipEqual(t, "peek w -n 5", [3]any{p.Name, p.All, p.Lines}, [3]any{"w", false, 5})
	p = ipParse(t, newCmdPeek, "--all")
	ipEqual(t, "peek --all", [3]any{p.Name, p.All, p.Lines}, [3]any{"", true, 30})

	i := ipParse(t, newCmdInterrupt, "--all")
	ipEqual(t, "interrupt --all", [2]any{i.Name, i.All}, [2]any{"", true})

	w := ipParse(t, newCmdWait, "w", "--timeout", "5")
	ipEqual(t, "wait w --timeout 5", [3]any{w.Name, w.All, w.Timeout}, [3]any{"w", false, 5 * time.Second})
	w = ipParse(t, newCmdWait, "--all")
	ipEqual(t, "wait --all", [3]any{w.Name, w.All, w.Timeout}, [3]any{"", true, time.Duration(0)})

	s := ipParse(t, newCmdSend, "w", "--no-enter", "--raw", "--", "--not a flag")
	ipEqual(t, "send w TEXT", [3]any{s.Name, s.Text, s.Send}, [3]any{"w", "--not a flag", worker.SendOptions{NoEnter: true, Raw: true}})
	s = ipParse(t, newCmdSend, "--all", "--", "-n starts with a dash")
	ipEqual(t, "send --all -- TEXT", [3]any{s.Name, s.All, s.Text}, [3]any{"", true, "-n starts with a dash"})

	rc := ipParse(t, newCmdRalphClean, "--all")
	ipEqual(t, "ralph clean --all", [2]any{rc.Name, rc.All}, [2]any{"", true})
}

func TestWorkerCommandOptions(t *testing.T) {
	t.Parallel()
	l := ipParse(t, newCmdLs, "--format", "json", "--status", "running", "--tag", "x")
	ipEqual(t, "ls", [3]string{l.Format, l.Status, l.Tag}, [3]string{"json", "running", "x"})
	l = ipParse(t, newCmdLs)
	ipEqual(t, "ls defaults", [3]string{l.Format, l.Status, l.Tag}, [3]string{"table", "all", ""})

	lg := ipParse(t, newCmdLogs, "w", "-f", "--history", "--lines", "10")
	ipEqual(t, "logs", [3]any{lg.Name, lg.Follow, lg.Logs}, [3]any{"w", true, worker.LogsOptions{History: true, Lines: 10}})
	lg = ipParse(t, newCmdLogs, "w")
	ipEqual(t, "logs default lines", lg.Logs.Lines, 1000)

	ipEqual(t, "status", ipParse(t, newCmdStatus, "w").Name, "w")
	ipEqual(t, "attach", ipParse(t, newCmdAttach, "w").Name, "w")
	ipEqual(t, "eof", ipParse(t, newCmdEOF, "w").Name, "w")
	r := ipParse(t, newCmdRespawn, "w", "--clean-first", "--force-dirty")
	ipEqual(t, "respawn", [2]any{r.Name, r.Respawn}, [2]any{"w", worker.RespawnOptions{CleanFirst: true, ForceDirty: true}})
	in := ipParse(t, newCmdInit, "--file", "docs/CLAUDE.md", "--dry-run", "--force")
	ipEqual(t, "init", [3]any{in.File, in.DryRun, in.Force}, [3]any{"docs/CLAUDE.md", true, true})
	ipParse(t, newCmdVersion)
}

func TestRalphCommandOptions(t *testing.T) {
	t.Parallel()
	for _, newCmd := range []func(*factory, func(*loopOptions) error) *cobra.Command{
		newCmdRalphRun, newCmdRalphPause, newCmdRalphResume, newCmdRalphStop,
	} {
		ipEqual(t, "loop name", ipParse(t, newCmd, "loop1").Name, "loop1")
	}
	st := ipParse(t, newCmdRalphStatus, "r", "--format", "json")
	ipEqual(t, "ralph status", [2]string{st.Name, st.Format}, [2]string{"r", "json"})
	ipEqual(t, "ralph status default format", ipParse(t, newCmdRalphStatus, "r").Format, "text")
	ls := ipParse(t, newCmdRalphList, "--status", "paused", "--format", "names")
	ipEqual(t, "ralph list", [2]string{ls.Format, ls.Status}, [2]string{"names", "paused"})
	lg := ipParse(t, newCmdRalphLogs, "r", "--live")
	ipEqual(t, "ralph logs", [3]any{lg.Name, lg.Live, lg.Lines}, [3]any{"r", true, 50})
	w := ipParse(t, newCmdRalphWait, "r", "--timeout", "3")
	ipEqual(t, "ralph wait", [2]any{w.Name, w.Timeout}, [2]any{"r", 3 * time.Second})
	in := ipParse(t, newCmdRalphInit, "--template", "promise", "--force")
	ipEqual(t, "ralph init", [2]any{in.Template, in.Force}, [2]any{"promise", true})
	ipEqual(t, "ralph init default template", ipParse(t, newCmdRalphInit).Template, "default")
	tp := ipParse(t, newCmdRalphTemplate, "plan")
	ipEqual(t, "ralph template", [2]any{tp.Name, tp.List}, [2]any{"plan", false})
	ipEqual(t, "ralph template --list", ipParse(t, newCmdRalphTemplate, "--list").List, true)
}

// A usage error stops the command before its run function.
func TestUsageErrorSkipsRun(t *testing.T) {
	t.Parallel()
	f := newFactory(&IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, t.TempDir())
	called := false
	cmd := newCmdRalphSpawn(f, func(*ralphSpawnOptions) error { called = true; return nil })
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	var errb bytes.Buffer
	code := runCommand(&IO{Err: &errb}, cmd, []string{"--name", "r", "--prompt-file", "P", "--max-time", "soon", "--", "a"})
	if called || code != 2 || errb.String() != "swarm: error: invalid --max-time 'soon': invalid duration 'soon' (see: spawn --help)\n" {
		t.Errorf("run called %v, exit %d, stderr %q", called, code, errb.String())
	}
}
