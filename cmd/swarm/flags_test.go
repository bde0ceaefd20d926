package main

// In-process tests of every command's flag and argument errors: Main's
// code path (execute) with buffers for streams and a state root of the
// test's own. No tmux, no binary; the tests run in parallel.

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// ipResult is what an in-process run printed and returned.
type ipResult struct {
	code           int
	stdout, stderr string
}

// ipRun runs swarm in-process on a state root that does not exist yet and
// fails the test if the run created it.
func ipRun(t *testing.T, args ...string) ipResult {
	t.Helper()
	home := filepath.Join(t.TempDir(), "swarm-home")
	var out, errb bytes.Buffer
	streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
	code := execute(newFactory(streams, home), args)
	if _, err := os.Lstat(home); err == nil {
		entries, _ := os.ReadDir(home)
		t.Errorf("swarm %q created the state root %s (%d entries)", args, home, len(entries))
	}
	return ipResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// ipUsageCases are the bad command lines of every command: exit code and
// exact stderr. Usage errors exit 2 and point to the command's help; the
// swarm.py messages docs/commands.md lists with exit 1 keep exit 1.
var ipUsageCases = []struct {
	args   []string
	code   int
	stderr string
}{
	// swarm
	{[]string{"nosuch"}, 2, `swarm: error: unknown command "nosuch" for "swarm" (see: swarm --help)` + "\n"},
	{[]string{"spwan", "--name", "x"}, 2, `swarm: error: unknown command "spwan" for "swarm" (see: swarm --help)` + "\n\nDid you mean this?\n\tspawn\n"},
	{[]string{"--bogus"}, 2, "swarm: error: unknown flag: --bogus (see: swarm --help)\n"},

	// spawn
	{[]string{"spawn", "--", "sleep", "1"}, 2, "swarm: error: --name is required (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x"}, 1, "swarm: error: no command provided (use -- command...)\n"},
	{[]string{"spawn", "--name", "x", "--bogus", "--", "y"}, 2, "swarm: error: unknown flag: --bogus (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ready-timeout", "-1", "--", "y"}, 2, "swarm: error: invalid --ready-timeout '-1' (use a whole number, at least 0) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ready-timeout", "soon", "--", "y"}, 2, "swarm: error: invalid --ready-timeout 'soon' (use a whole number, at least 0) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--tmux=maybe", "--", "y"}, 2, "swarm: error: invalid --tmux 'maybe' (use true or false) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--cwd"}, 2, "swarm: error: flag needs an argument: --cwd (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--max-iterations", "3", "--", "y"}, 1, "swarm: error: --ralph requires --prompt-file\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--", "y"}, 1, "swarm: error: --ralph requires --max-iterations\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--max-iterations", "3"}, 1, "swarm: error: no command provided (use -- command...)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--max-iterations", "0", "--", "y"}, 2, "swarm: error: invalid --max-iterations '0' (use a whole number, at least 1) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--max-iterations", "-3", "--", "y"}, 2, "swarm: error: invalid --max-iterations '-3' (use a whole number, at least 1) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--prompt-mode", "pipe", "--", "y"}, 2, "swarm: error: invalid choice for --prompt-mode: 'pipe' (use type, stdin or arg) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-time", "5x", "--", "y"}, 2, "swarm: error: invalid --max-time '5x': invalid duration '5x' (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-time", "-1h", "--", "y"}, 2, "swarm: error: invalid --max-time '-1h': invalid duration '-1h' (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--inactivity-timeout", "0", "--", "y"}, 2, "swarm: error: invalid --inactivity-timeout '0' (use at least 1s) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--inactivity-timeout", "500ms", "--", "y"}, 2, "swarm: error: invalid --inactivity-timeout '500ms' (use at least 1s) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--check-timeout", "0", "--", "y"}, 2, "swarm: error: invalid --check-timeout '0' (use at least 1s) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--restart-delay", "later", "--", "y"}, 2, "swarm: error: invalid --restart-delay 'later': invalid duration 'later' (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-context", "101", "--", "y"}, 2, "swarm: error: invalid --max-context '101' (use a whole number from 0 to 100) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-context", "-1", "--", "y"}, 2, "swarm: error: invalid --max-context '-1' (use a whole number from 0 to 100) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--done-pattern", "a(b", "--", "y"}, 2, "swarm: error: invalid --done-pattern: error parsing regexp: missing closing ): `a(b` (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--completion-promise", "ALL DONE", "--", "y"}, 2, "swarm: error: invalid --completion-promise 'ALL DONE' (use letters, digits, '.', '_', '-') (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--same-session", "--prompt-mode", "arg", "--", "y"}, 2, "swarm: error: --same-session needs --prompt-mode type (the continuation is typed into the agent) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "../evil", "--", "y"}, 1, "swarm: error: invalid worker name '../evil' (use letters, digits, '.', '_', '-'; max 64)\n"},
	{[]string{"spawn", "--name", "x", "--env", "NOVALUE", "--", "y"}, 1, "swarm: error: invalid env format 'NOVALUE' (expected KEY=VAL)\n"},
	{[]string{"spawn", "--name", "x", "--cwd", "/nonexistent", "--", "y"}, 1, "swarm: error: directory not found: /nonexistent (check --cwd)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "/", "--max-iterations", "3", "--", "y"}, 1, "swarm: error: prompt file is not a regular file: /\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "/nonexistent/P.md", "--max-iterations", "3", "--", "y"}, 1, "swarm: error: prompt file not found: /nonexistent/P.md\n"},
	{[]string{"spawn", "--name", "x", "--tmux", "--heartbeat", "abc", "--", "y"}, 1, "swarm: error: invalid heartbeat interval 'abc'\n"},
	{[]string{"spawn", "--name", "x", "--tmux", "--heartbeat", "0", "--", "y"}, 1, "swarm: error: invalid heartbeat interval '0'\n"},
	{[]string{"spawn", "--name", "x", "--tmux", "--heartbeat", "4h", "--heartbeat-expire", "x", "--", "y"}, 1, "swarm: error: invalid heartbeat-expire 'x'\n"},
	{[]string{"spawn", "--name", "x", "--tmux", "--heartbeat", "4h", "--heartbeat-message", "", "--", "y"}, 1, "swarm: error: heartbeat message cannot be empty\n"},
	{[]string{"spawn", "--name", "x", "--tmux", "--heartbeat"}, 2, "swarm: error: flag needs an argument: --heartbeat (see: swarm spawn --help)\n"},
	// A bad heartbeat comes before any check of the worker or prompt file:
	// nothing is created.
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "/nonexistent/P.md", "--max-iterations", "3", "--heartbeat", "soon", "--", "y"}, 1, "swarm: error: invalid heartbeat interval 'soon'\n"},

	// ls
	{[]string{"ls", "--format", "yaml"}, 2, "swarm: error: invalid choice for --format: 'yaml' (use table, json or names) (see: swarm ls --help)\n"},
	{[]string{"ls", "--status", "zombie"}, 2, "swarm: error: invalid choice for --status: 'zombie' (use running, stopped or all) (see: swarm ls --help)\n"},
	{[]string{"ls", "extra"}, 2, "swarm: error: swarm ls expects no arguments (see: swarm ls --help)\n"},
	{[]string{"list", "--bogus"}, 2, "swarm: error: unknown flag: --bogus (see: swarm ls --help)\n"},

	// status
	{[]string{"status"}, 2, "swarm: error: swarm status expects one worker name (see: swarm status --help)\n"},
	{[]string{"status", "a", "b"}, 2, "swarm: error: swarm status expects one worker name (see: swarm status --help)\n"},
	{[]string{"status", "nope"}, 2, "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n"},

	// peek
	{[]string{"peek"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"peek", "a", "--all"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm peek --help)\n"},
	{[]string{"peek", "-n", "0", "a"}, 2, "swarm: error: invalid --lines '0' (use a whole number, at least 1) (see: swarm peek --help)\n"},
	{[]string{"peek", "--lines", "x", "a"}, 2, "swarm: error: invalid --lines 'x' (use a whole number, at least 1) (see: swarm peek --help)\n"},
	{[]string{"peek", "a", "b"}, 2, "swarm: error: swarm peek expects a worker name, or --all (see: swarm peek --help)\n"},

	// logs
	{[]string{"logs"}, 2, "swarm: error: swarm logs expects one worker name (see: swarm logs --help)\n"},
	{[]string{"logs", "--lines", "0", "a"}, 2, "swarm: error: invalid --lines '0' (use a whole number, at least 1) (see: swarm logs --help)\n"},
	{[]string{"logs", "-x", "a"}, 2, "swarm: error: unknown shorthand flag: 'x' in -x (see: swarm logs --help)\n"},

	// attach
	{[]string{"attach"}, 2, "swarm: error: swarm attach expects one worker name (see: swarm attach --help)\n"},
	{[]string{"attach", "a", "b"}, 2, "swarm: error: swarm attach expects one worker name (see: swarm attach --help)\n"},

	// send
	{[]string{"send"}, 2, "swarm: error: swarm send expects NAME TEXT, or --all TEXT (see: swarm send --help)\n"},
	{[]string{"send", "w"}, 2, "swarm: error: give a worker name and the text (see: swarm send --help)\n"},
	{[]string{"send", "--all", "w", "text"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm send --help)\n"},
	{[]string{"send", "a", "b", "c"}, 2, "swarm: error: swarm send expects NAME TEXT, or --all TEXT (see: swarm send --help)\n"},

	// interrupt, eof
	{[]string{"interrupt"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"interrupt", "a", "--all"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm interrupt --help)\n"},
	{[]string{"eof"}, 2, "swarm: error: swarm eof expects one worker name (see: swarm eof --help)\n"},
	{[]string{"eof", "--all"}, 2, "swarm: error: unknown flag: --all (see: swarm eof --help)\n"},

	// wait
	{[]string{"wait"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"wait", "--all", "a"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm wait --help)\n"},
	{[]string{"wait", "--timeout", "-1", "a"}, 2, "swarm: error: invalid --timeout '-1' (use a whole number, at least 0) (see: swarm wait --help)\n"},

	// kill
	{[]string{"kill"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"kill", "a", "--all"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm kill --help)\n"},
	{[]string{"kill", "a", "b"}, 2, "swarm: error: swarm kill expects a worker name, or --all (see: swarm kill --help)\n"},
	{[]string{"kill", "nope"}, 1, "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n"},

	// clean
	{[]string{"clean"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"clean", "a", "--all"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm clean --help)\n"},
	{[]string{"clean", "--rm-worktree=sometimes", "a"}, 2, "swarm: error: invalid --rm-worktree 'sometimes' (use true or false) (see: swarm clean --help)\n"},

	// respawn
	{[]string{"respawn"}, 2, "swarm: error: swarm respawn expects one worker name (see: swarm respawn --help)\n"},
	{[]string{"respawn", "--bogus", "a"}, 2, "swarm: error: unknown flag: --bogus (see: swarm respawn --help)\n"},

	// init, version, completion
	{[]string{"init", "extra"}, 2, "swarm: error: swarm init expects no arguments (see: swarm init --help)\n"},
	{[]string{"init", "--with-sandbox=maybe"}, 2, "swarm: error: invalid --with-sandbox 'maybe' (use true or false) (see: swarm init --help)\n"},
	{[]string{"init", "--file", "README.md"}, 2, "swarm: error: invalid choice for --file: 'README.md' (use AGENTS.md or CLAUDE.md) (see: swarm init --help)\n"},
	{[]string{"version", "extra"}, 2, "swarm: error: swarm version expects no arguments (see: swarm version --help)\n"},
	{[]string{"completion"}, 2, `swarm: error: missing command for "swarm completion" (see: swarm completion --help)` + "\n"},
	{[]string{"completion", "fishh"}, 2, `swarm: error: unknown command "fishh" for "swarm completion" (see: swarm completion --help)` + "\n\nDid you mean this?\n\tfish\n"},
	{[]string{"completion", "bash", "extra"}, 2, `swarm: error: unknown command "extra" for "swarm completion bash" (see: swarm completion bash --help)` + "\n"},

	// ralph
	{[]string{"ralph"}, 2, `swarm: error: missing command for "swarm ralph" (see: swarm ralph --help)` + "\n"},
	{[]string{"ralph", "stauts", "x"}, 2, `swarm: error: unknown command "stauts" for "swarm ralph" (see: swarm ralph --help)` + "\n\nDid you mean this?\n\tstatus\n"},
	{[]string{"ralph", "stauts", "--name", "x"}, 2, `swarm: error: unknown command "stauts" for "swarm ralph" (see: swarm ralph --help)` + "\n\nDid you mean this?\n\tstatus\n"},
	{[]string{"ralph", "zzz"}, 2, `swarm: error: unknown command "zzz" for "swarm ralph" (see: swarm ralph --help)` + "\n"},
	{[]string{"ralph", "--bogus"}, 2, "swarm: error: unknown flag: --bogus (see: swarm ralph --help)\n"},

	// ralph spawn
	{[]string{"ralph", "spawn", "--", "y"}, 2, "swarm: error: --name is required (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--", "y"}, 2, "swarm: error: --prompt-file is required (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md"}, 1, "swarm: error: no command provided (use -- command...)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "/", "--", "y"}, 1, "swarm: error: prompt file is not a regular file: /\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--prompt-mode", "pipe", "--", "y"}, 2, "swarm: error: invalid choice for --prompt-mode: 'pipe' (use type, stdin or arg) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--agent", "gpt", "--", "y"}, 2, "swarm: error: invalid --agent 'gpt' (use aider, claude, codex, gemini, generic, opencode) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--limit-pattern", "a(", "--", "y"}, 2, "swarm: error: invalid --limit-pattern: error parsing regexp: missing closing ): `a(` (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--ready-pattern", "[", "--", "y"}, 2, "swarm: error: invalid --ready-pattern: error parsing regexp: missing closing ]: `[` (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--idle-grace", "soon", "--", "y"}, 2, "swarm: error: invalid --idle-grace 'soon': invalid duration 'soon' (see: swarm ralph spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-log-size", "12", "--", "y"}, 2, "swarm: error: invalid --max-log-size '12' (use a size such as 50MiB or 1G, at least 1024 bytes) (see: swarm spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--max-log-size", "5Q", "--", "y"}, 2, "swarm: error: invalid --max-log-size '5Q' (use a size such as 50MiB or 1G, at least 1024 bytes) (see: swarm spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--max-time", "5x", "--", "y"}, 2, "swarm: error: invalid --max-time '5x': invalid duration '5x' (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--max-iterations", "0", "--", "y"}, 2, "swarm: error: invalid --max-iterations '0' (use a whole number, at least 1) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--inactivity-timeout", "-5", "--", "y"}, 2, "swarm: error: invalid --inactivity-timeout '-5': invalid duration '-5' (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--ready-timeout", "-1", "--", "y"}, 2, "swarm: error: invalid --ready-timeout '-1' (use a whole number, at least 0) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--max-context", "150", "--", "y"}, 2, "swarm: error: invalid --max-context '150' (use a whole number from 0 to 100) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--done-pattern", "[", "--", "y"}, 2, "swarm: error: invalid --done-pattern: error parsing regexp: missing closing ]: `[` (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "/nonexistent/P.md", "--heartbeat", "abc", "--", "y"}, 1, "swarm: error: invalid heartbeat interval 'abc'\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--heartbeat", "4h", "--heartbeat-expire", "-1h", "--", "y"}, 1, "swarm: error: invalid heartbeat-expire '-1h'\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--heartbeat-expire"}, 2, "swarm: error: flag needs an argument: --heartbeat-expire (see: swarm ralph spawn --help)\n"},
	// issue 19: --notify's targets, --on-complete
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--notify=mail:me", "--", "y"}, 2, "swarm: error: invalid --notify 'mail:me': unknown notification target 'mail:me' (use desktop, webhook:URL or ntfy:URL) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--notify", "ntfy:https://ntfy.sh/t", "--", "y"}, 2, "swarm: error: --notify takes its value with '=': --notify=ntfy:https://ntfy.sh/t (ntfy:https://ntfy.sh/t was read as the command) (see: swarm ralph spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--max-iterations", "1", "--notify", "desktop", "--", "y"}, 2, "swarm: error: --notify takes its value with '=': --notify=desktop (desktop was read as the command) (see: swarm spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--on-complete", "push", "--", "y"}, 2, "swarm: error: invalid choice for --on-complete: 'push' (use merge, rebase or squash) (see: swarm ralph spawn --help)\n"},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--no-worktree", "--on-complete", "merge", "--", "y"}, 2, "swarm: error: --on-complete needs a worktree to merge (--worktree; ralph spawn makes one unless --no-worktree) (see: swarm ralph spawn --help)\n"},
	// issue 27: --auto-commit commits in a worktree
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--no-worktree", "--auto-commit", "--", "y"}, 2, "swarm: error: --auto-commit needs a worktree to commit in (--worktree; ralph spawn makes one unless --no-worktree) (see: swarm ralph spawn --help)\n"},
	{[]string{"spawn", "--name", "x", "--ralph", "--prompt-file", "P.md", "--max-iterations", "1", "--auto-commit", "--", "y"}, 2, "swarm: error: --auto-commit needs a worktree to commit in (--worktree; ralph spawn makes one unless --no-worktree) (see: swarm spawn --help)\n"},
	{[]string{"merge", "a", "--strategy", "octopus"}, 2, "swarm: error: invalid choice for --strategy: 'octopus' (use merge, rebase or squash) (see: swarm merge --help)\n"},
	{[]string{"merge"}, 2, "swarm: error: swarm merge expects one worker name (see: swarm merge --help)\n"},
	{[]string{"diff", "a", "b"}, 2, "swarm: error: swarm diff expects one worker name (see: swarm diff --help)\n"},
	{[]string{"restore"}, 2, "swarm: error: give worker names, --all or --install-unit (see: swarm restore --help)\n"},
	{[]string{"restore", "--all", "a"}, 2, "swarm: error: give worker names or --all, not both (see: swarm restore --help)\n"},

	// ralph run, pause, resume, stop
	{[]string{"ralph", "run"}, 2, "swarm: error: swarm ralph run expects one loop name (see: swarm ralph run --help)\n"},
	{[]string{"ralph", "pause"}, 2, "swarm: error: swarm ralph pause expects one loop name (see: swarm ralph pause --help)\n"},
	{[]string{"ralph", "resume", "a", "b"}, 2, "swarm: error: swarm ralph resume expects one loop name (see: swarm ralph resume --help)\n"},
	{[]string{"ralph", "stop", "--all"}, 2, "swarm: error: unknown flag: --all (see: swarm ralph stop --help)\n"},
	{[]string{"ralph", "pause", "nope"}, 1, "swarm: error: worker 'nope' not found\nhint: swarm ls lists the workers\n"},

	// ralph status, list, logs
	{[]string{"ralph", "status"}, 2, "swarm: error: swarm ralph status expects one loop name (see: swarm ralph status --help)\n"},
	{[]string{"ralph", "status", "a", "--format", "yaml"}, 2, "swarm: error: invalid choice for --format: 'yaml' (use text or json) (see: swarm ralph status --help)\n"},
	{[]string{"ralph", "list", "--format", "yaml"}, 2, "swarm: error: invalid choice for --format: 'yaml' (use table, json or names) (see: swarm ralph list --help)\n"},
	{[]string{"ralph", "ls", "--status", "done"}, 2, "swarm: error: invalid choice for --status: 'done' (use running, paused, stopped, failed or all) (see: swarm ralph list --help)\n"},
	{[]string{"ralph", "list", "extra"}, 2, "swarm: error: swarm ralph list expects no arguments (see: swarm ralph list --help)\n"},
	{[]string{"ralph", "logs"}, 2, "swarm: error: swarm ralph logs expects one loop name (see: swarm ralph logs --help)\n"},
	{[]string{"ralph", "logs", "a", "--lines", "-1"}, 2, "swarm: error: invalid --lines '-1' (use a whole number, at least 0) (see: swarm ralph logs --help)\n"},
	{[]string{"ralph", "logs", "a", "--iteration", "2", "--agent"}, 2, "swarm: error: if any flags in the group [iteration agent live] are set none of the others can be; [agent iteration] were all set (see: swarm ralph logs --help)\n"},
	{[]string{"ralph", "logs", "a", "--iteration", "x"}, 2, "swarm: error: invalid --iteration 'x' (use a whole number, at least 0) (see: swarm ralph logs --help)\n"},
	{[]string{"ralph", "logs", "a", "--raw"}, 2, "swarm: error: --raw needs --iteration or --agent (the events are text already) (see: swarm ralph logs --help)\n"},
	{[]string{"ralph", "set"}, 2, "swarm: error: swarm ralph set expects one loop name (see: swarm ralph set --help)\n"},
	{[]string{"ralph", "set", "a"}, 2, "swarm: error: give at least one of --max-iterations, --inactivity-timeout, --max-time, --max-cost, --max-tokens (see: swarm ralph set --help)\n"},
	{[]string{"ralph", "set", "a", "--max-iterations", "0"}, 2, "swarm: error: invalid --max-iterations '0' (use a whole number, at least 1) (see: swarm ralph set --help)\n"},
	{[]string{"ralph", "set", "a", "--max-time", "5x"}, 2, "swarm: error: invalid --max-time '5x': invalid duration '5x' (see: swarm ralph set --help)\n"},

	// ralph clean, wait
	{[]string{"ralph", "clean"}, 1, "swarm: error: must specify a worker name or --all\n"},
	{[]string{"ralph", "clean", "--all", "a"}, 2, "swarm: error: give a worker name or --all, not both (see: swarm ralph clean --help)\n"},
	{[]string{"ralph", "wait"}, 2, "swarm: error: swarm ralph wait expects one loop name (see: swarm ralph wait --help)\n"},
	{[]string{"ralph", "wait", "a", "--timeout", "-5"}, 2, "swarm: error: invalid --timeout '-5' (use a whole number, at least 0) (see: swarm ralph wait --help)\n"},

	// ralph init, template
	{[]string{"ralph", "init", "extra"}, 2, "swarm: error: swarm ralph init expects no arguments (see: swarm ralph init --help)\n"},
	{[]string{"ralph", "init", "--template", "nope"}, 2, "swarm: error: invalid choice for --template: 'nope' (use default, plan or promise) (see: swarm ralph init --help)\n"},
	{[]string{"ralph", "template", "a", "b"}, 2, "swarm: error: swarm ralph template expects at most one template name (see: swarm ralph template --help)\n"},
	{[]string{"ralph", "template", "nope"}, 1, "swarm: error: unknown template 'nope' (available: default, plan, promise)\n"},

	// top
	{[]string{"top", "extra"}, 2, "swarm: error: swarm top expects no arguments (see: swarm top --help)\n"},
	{[]string{"top", "--interval", "0"}, 2, "swarm: error: invalid --interval '0' (use at least 100ms) (see: swarm top --help)\n"},
	{[]string{"top", "--interval", "soon"}, 2, "swarm: error: invalid --interval 'soon': invalid duration 'soon' (see: swarm top --help)\n"},
	{[]string{"top", "--once=maybe"}, 2, "swarm: error: invalid --once 'maybe' (use true or false) (see: swarm top --help)\n"},

	// hosts, --host
	{[]string{"hosts"}, 2, `swarm: error: missing command for "swarm hosts" (see: swarm hosts --help)` + "\n"},
	{[]string{"hosts", "add", "x"}, 2, "swarm: error: swarm hosts add expects NAME SSH_TARGET (see: swarm hosts add --help)\n"},
	{[]string{"hosts", "add", "x", "-oProxyCommand=y"}, 2, "swarm: error: unknown shorthand flag: 'o' in -oProxyCommand=y (see: swarm hosts add --help)\n"},
	{[]string{"hosts", "rm"}, 2, "swarm: error: swarm hosts rm expects one host name (see: swarm hosts rm --help)\n"},
	{[]string{"hosts", "ls", "x"}, 2, "swarm: error: swarm hosts ls expects no arguments (see: swarm hosts ls --help)\n"},
	{[]string{"hosts", "ls", "--format", "xml"}, 2, "swarm: error: invalid choice for --format: 'xml' (use table or json) (see: swarm hosts ls --help)\n"},
	{[]string{"hosts", "check", "a", "b"}, 2, "swarm: error: swarm hosts check expects at most one host name (see: swarm hosts check --help)\n"},
	{[]string{"hosts", "check", "--connect-timeout", "0"}, 2, "swarm: error: invalid --connect-timeout '0' (use at least 1s) (see: swarm hosts check --help)\n"},
	{[]string{"hosts", "install"}, 2, "swarm: error: swarm hosts install expects one host name (see: swarm hosts install --help)\n"},
	{[]string{"peek", "--host", "a", "b:w"}, 2, "swarm: error: --host a and b:w name different hosts (see: swarm peek --help)\n"},
	{[]string{"ls", "--all-hosts", "--hosts", "a"}, 2, "swarm: error: if any flags in the group [all-hosts hosts] are set none of the others can be; [all-hosts hosts] were all set (see: swarm ls --help)\n"},
	{[]string{"top", "--format", "json"}, 2, "swarm: error: --format json needs --once (see: swarm top --help)\n"},

	// heartbeat
	{[]string{"heartbeat"}, 2, `swarm: error: missing command for "swarm heartbeat" (see: swarm heartbeat --help)` + "\n"},
	{[]string{"heartbeat", "stauts", "w"}, 2, `swarm: error: unknown command "stauts" for "swarm heartbeat" (see: swarm heartbeat --help)` + "\n\nDid you mean this?\n\tstart\n\tstatus\n"},
	{[]string{"heartbeat", "--interval", "4h"}, 2, "swarm: error: unknown flag: --interval (see: swarm heartbeat --help)\n"},

	// heartbeat start
	{[]string{"heartbeat", "start"}, 2, "swarm: error: swarm heartbeat start expects one worker name (see: swarm heartbeat start --help)\n"},
	{[]string{"heartbeat", "start", "w"}, 2, "swarm: error: --interval is required (see: swarm heartbeat start --help)\n"},
	{[]string{"heartbeat", "start", "w", "--interval"}, 2, "swarm: error: flag needs an argument: --interval (see: swarm heartbeat start --help)\n"},
	{[]string{"heartbeat", "start", "w", "--interval", "4h", "--forse"}, 2, "swarm: error: unknown flag: --forse (see: swarm heartbeat start --help)\n"},
	{[]string{"heartbeat", "start", "w", "--interval", "abc"}, 1, "swarm: error: invalid interval 'abc'\n"},
	{[]string{"heartbeat", "start", "w", "--interval", ""}, 1, "swarm: error: invalid interval ''\n"},
	{[]string{"heartbeat", "start", "w", "--interval", "4h", "--expire", "0"}, 1, "swarm: error: invalid expire '0'\n"},
	{[]string{"heartbeat", "start", "w", "--interval", "4h", "--message", ""}, 1, "swarm: error: heartbeat message cannot be empty\n"},
	{[]string{"heartbeat", "start", "nope", "--interval", "4h"}, 1, "swarm: error: worker 'nope' not found\n"},
	{[]string{"heartbeat", "start", "../evil", "--interval", "4h"}, 1, "swarm: error: invalid worker name '../evil' (use letters, digits, '.', '_', '-'; max 64)\n"},

	// heartbeat stop, pause, resume, run
	{[]string{"heartbeat", "stop"}, 2, "swarm: error: swarm heartbeat stop expects one worker name (see: swarm heartbeat stop --help)\n"},
	{[]string{"heartbeat", "stop", "a", "b"}, 2, "swarm: error: swarm heartbeat stop expects one worker name (see: swarm heartbeat stop --help)\n"},
	{[]string{"heartbeat", "pause"}, 2, "swarm: error: swarm heartbeat pause expects one worker name (see: swarm heartbeat pause --help)\n"},
	{[]string{"heartbeat", "pause", "--all"}, 2, "swarm: error: unknown flag: --all (see: swarm heartbeat pause --help)\n"},
	{[]string{"heartbeat", "resume", "a", "b"}, 2, "swarm: error: swarm heartbeat resume expects one worker name (see: swarm heartbeat resume --help)\n"},
	{[]string{"heartbeat", "run"}, 2, "swarm: error: swarm heartbeat run expects one worker name (see: swarm heartbeat run --help)\n"},

	// heartbeat list, status
	{[]string{"heartbeat", "list", "extra"}, 2, "swarm: error: swarm heartbeat list expects no arguments (see: swarm heartbeat list --help)\n"},
	{[]string{"heartbeat", "ls", "--format", "yaml"}, 2, "swarm: error: invalid choice for --format: 'yaml' (use table or json) (see: swarm heartbeat list --help)\n"},
	{[]string{"heartbeat", "status"}, 2, "swarm: error: swarm heartbeat status expects one worker name (see: swarm heartbeat status --help)\n"},
	{[]string{"heartbeat", "status", "w", "--format", "table"}, 2, "swarm: error: invalid choice for --format: 'table' (use text or json) (see: swarm heartbeat status --help)\n"},
	{[]string{"heartbeat", "status", "nope"}, 1, "No heartbeat found for nope\n"},
	{[]string{"heartbeat", "status", "nope", "--format", "json"}, 1, "No heartbeat found for nope\n"},
	{[]string{"heartbeat", "status", "../evil"}, 1, "swarm: error: invalid worker name '../evil' (use letters, digits, '.', '_', '-'; max 64)\n"},
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range ipUsageCases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			r := ipRun(t, c.args...)
			if r.code != c.code || r.stderr != c.stderr || r.stdout != "" {
				t.Errorf("swarm %q:\n got: exit %d, stdout %q\n      stderr %q\nwant: exit %d, no stdout\n      stderr %q",
					c.args, r.code, r.stdout, r.stderr, c.code, c.stderr)
			}
		})
	}
}

// Every command and subcommand has at least one case above, so a new
// command cannot land without its flag and argument errors tested.
func TestUsageErrorsCoverEveryCommand(t *testing.T) {
	t.Parallel()
	tested := map[string]bool{}
	for _, c := range ipUsageCases {
		for i := range c.args {
			tested[strings.Join(c.args[:i+1], " ")] = true
		}
	}
	root := newCmdRoot(newFactory(&IO{}, t.TempDir()), nil)
	var missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Hidden {
				continue
			}
			path := strings.TrimPrefix(sub.CommandPath(), "swarm ")
			// completion's shell subcommands are cobra's own
			if !tested[path] && !strings.HasPrefix(path, "completion ") {
				missing = append(missing, path)
			}
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("commands without a usage-error case in ipUsageCases: %q", missing)
	}
}

// A bare swarm still prints its help and exits 0 (the program, unlike a
// command group, has --help, version and the command list to show).
func TestBareSwarmPrintsHelp(t *testing.T) {
	t.Parallel()
	r := ipRun(t)
	if r.code != 0 || !strings.Contains(r.stdout, "Available Commands:") || r.stderr != "" {
		t.Errorf("swarm: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// Help of a command group lists its commands but no "swarm ralph [flags]"
// usage, and its subcommands keep theirs.
func TestGroupHelp(t *testing.T) {
	t.Parallel()
	r := ipRun(t, "ralph", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage:\n  swarm ralph [command]\n") || strings.Contains(r.stdout, "swarm ralph [flags]") {
		t.Errorf("swarm ralph --help: exit %d\n%s", r.code, r.stdout)
	}
	r = ipRun(t, "ralph", "status", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage:\n  swarm ralph status NAME [flags]\n") {
		t.Errorf("swarm ralph status --help: exit %d\n%s", r.code, r.stdout)
	}
}

// Defaults are printed once, by cobra: no "(default) (default true)".
func TestHelpPrintsDefaultsOnce(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"spawn", "--help"}, {"ralph", "spawn", "--help"}, {"clean", "--help"}, {"kill", "--help"}} {
		r := ipRun(t, args...)
		if r.code != 0 || strings.Contains(r.stdout, "(default) (default") || strings.Contains(r.stdout, "(default)\n") {
			t.Errorf("swarm %q: exit %d\n%s", args, r.code, r.stdout)
		}
	}
	r := ipRun(t, "ralph", "spawn", "--help")
	for _, want := range []string{
		"run in a git worktree on branch NAME (default true)\n",
		"(seconds, or 90s, 5m) (default 3m)\n",
		"stop after this many iterations (default 50)\n",
		"before typing the prompt (default 120)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("swarm ralph spawn --help lacks %q:\n%s", want, r.stdout)
		}
	}
}
