package main

// Shell completion (complete.go): the candidates and directive of
// "swarm __complete ..." on a state root written with internal/state, that
// a completion reads the state and nothing else (no tmux, no write), and
// that the generated scripts call back into swarm.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// cpWorkers are the fixture's workers: name, status, tmux, ralph loop,
// tags; cpLoops their loops; cpHeartbeats the heartbeats.
var (
	cpWorkers = []struct {
		name, status string
		tmux, ralph  bool
		tags         []string
	}{
		{"alpha", state.StatusRunning, true, false, []string{"ci", "nightly"}},
		{"beta", state.StatusStopped, true, false, nil},
		{"gamma", state.StatusRunning, false, false, []string{"ci"}},
		{"delta", state.StatusStarting, true, false, nil},
		// A loop between iterations: its worker reads stopped.
		{"loopy", state.StatusStopped, true, true, nil},
		{"paused", state.StatusRunning, true, true, nil},
		{"ended", state.StatusStopped, true, true, nil},
	}
	cpLoops = []struct {
		name      string
		status    state.RalphStatus
		iter, max int
	}{
		{"loopy", state.RalphRunning, 2, 10},
		{"paused", state.RalphPaused, 3, 10},
		{"ended", state.RalphFailed, 10, 10},
	}
	cpHeartbeats = map[string]string{
		"alpha": heartbeat.StatusActive, "beta": heartbeat.StatusPaused, "gamma": heartbeat.StatusStopped,
	}
)

// cpDesc is the description each candidate is completed with.
var cpDesc = map[string]string{
	"w:alpha": "running, tmux", "w:beta": "stopped, tmux", "w:gamma": "running, process",
	"w:delta": "starting, tmux", "w:loopy": "stopped, tmux, ralph loop",
	"w:paused": "running, tmux, ralph loop", "w:ended": "stopped, tmux, ralph loop",
	"l:loopy": "running, iteration 2/10", "l:paused": "paused, iteration 3/10", "l:ended": "failed, iteration 10/10",
	"h:alpha": "active, every 2h 0m", "h:beta": "paused, every 2h 0m", "h:gamma": "stopped, every 2h 0m",
}

// cpRoot writes the fixture into a new state root.
func cpRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "swarm-home")
	s := state.NewStore(root, nil)
	err := s.Update(func(reg *state.Registry) error {
		for _, w := range cpWorkers {
			rec := state.Worker{Name: w.name, Status: w.status, Cmd: []string{"agent"}, Started: state.Now(), Tags: w.tags}
			if w.tmux {
				rec.Tmux = &state.TmuxInfo{Session: "swarm-test", Window: w.name}
			}
			if w.ralph {
				rec.Metadata = map[string]any{"ralph": true}
			}
			reg.Workers = append(reg.Workers, rec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range cpLoops {
		st := &state.Ralph{LoopConfig: state.LoopConfig{WorkerName: l.name, MaxIterations: l.max},
			LoopProgress: state.LoopProgress{Status: l.status, CurrentIteration: l.iter}}
		if err := s.Ralph(l.name).Create(st); err != nil {
			t.Fatal(err)
		}
	}
	for name, status := range cpHeartbeats {
		hbPut(t, root, name, status)
	}
	return root
}

// cpOut is the stdout of __complete offering names of kind (w worker, l
// loop, h heartbeat; "" plain values) with directive line dir.
func cpOut(kind, dir string, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		if d := cpDesc[kind+":"+n]; d != "" {
			b.WriteString("\t" + d)
		}
		b.WriteString("\n")
	}
	return b.String() + dir + "\n"
}

const (
	noFiles  = ":4"  // ShellCompDirectiveNoFileComp
	files    = ":0"  // ShellCompDirectiveDefault
	dirsOnly = ":16" // ShellCompDirectiveFilterDirs
)

var (
	cpAll      = []string{"alpha", "beta", "delta", "ended", "gamma", "loopy", "paused"}
	cpLiveTmux = []string{"alpha", "delta", "paused"}
	cpAllLoops = []string{"ended", "loopy", "paused"}
)

// cpCases are command lines after "swarm __complete" and the exact stdout.
var cpCases = []struct {
	args []string
	want string
}{
	{[]string{"status", ""}, cpOut("w", noFiles, cpAll...)},
	{[]string{"logs", ""}, cpOut("w", noFiles, cpAll...)},
	{[]string{"clean", ""}, cpOut("w", noFiles, cpAll...)},
	{[]string{"respawn", ""}, cpOut("w", noFiles, "alpha", "beta", "delta", "gamma")},
	{[]string{"peek", ""}, cpOut("w", noFiles, "alpha", "beta", "delta", "ended", "loopy", "paused")},
	{[]string{"attach", ""}, cpOut("w", noFiles, cpLiveTmux...)},
	{[]string{"send", ""}, cpOut("w", noFiles, cpLiveTmux...)},
	{[]string{"interrupt", ""}, cpOut("w", noFiles, cpLiveTmux...)},
	{[]string{"eof", ""}, cpOut("w", noFiles, cpLiveTmux...)},
	{[]string{"wait", ""}, cpOut("w", noFiles, "alpha", "delta", "gamma", "paused")},
	{[]string{"kill", ""}, cpOut("w", noFiles, "alpha", "delta", "gamma", "loopy", "paused")},
	{[]string{"heartbeat", "start", ""}, cpOut("w", noFiles, cpLiveTmux...)},

	// A prefix; flags before the name.
	{[]string{"kill", "--rm-worktree", "p"}, cpOut("w", noFiles, "paused")},
	{[]string{"peek", "-n", "5", "b"}, cpOut("w", noFiles, "beta")},
	{[]string{"status", "zz"}, cpOut("w", noFiles)},
	// One name per command: nothing after it, nothing with --all.
	{[]string{"kill", "alpha", ""}, cpOut("w", noFiles)},
	{[]string{"send", "alpha", ""}, cpOut("w", noFiles)},
	{[]string{"kill", "--all", ""}, cpOut("w", noFiles)},
	{[]string{"send", "--all", ""}, cpOut("w", noFiles)},
	{[]string{"ralph", "status", "loopy", ""}, cpOut("l", noFiles)},
	{[]string{"heartbeat", "stop", "alpha", ""}, cpOut("h", noFiles)},

	{[]string{"ralph", "status", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "logs", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "wait", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "clean", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "run", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "resume", ""}, cpOut("l", noFiles, cpAllLoops...)},
	{[]string{"ralph", "pause", ""}, cpOut("l", noFiles, "loopy")},
	{[]string{"ralph", "stop", ""}, cpOut("l", noFiles, "loopy", "paused")},
	{[]string{"ralph", "clean", "--all", ""}, cpOut("l", noFiles)},
	{[]string{"ralph", "template", ""}, cpOut("", noFiles, "default", "plan", "promise")},

	{[]string{"heartbeat", "status", ""}, cpOut("h", noFiles, "alpha", "beta", "gamma")},
	{[]string{"heartbeat", "stop", ""}, cpOut("h", noFiles, "alpha", "beta")},
	{[]string{"heartbeat", "resume", ""}, cpOut("h", noFiles, "alpha", "beta")},
	{[]string{"heartbeat", "pause", ""}, cpOut("h", noFiles, "alpha")},

	// Flag values.
	{[]string{"ls", "--format", ""}, cpOut("", noFiles, "json", "names", "table")},
	{[]string{"ls", "--format=j"}, cpOut("", noFiles, "json")},
	{[]string{"ls", "--status", ""}, cpOut("", noFiles, "all", "running", "stopped")},
	{[]string{"ls", "--tag", ""}, cpOut("", noFiles, "ci", "nightly")},
	{[]string{"ralph", "list", "--status", ""}, cpOut("", noFiles, "all", "failed", "paused", "running", "stopped")},
	{[]string{"ralph", "status", "--format", ""}, cpOut("", noFiles, "json", "text")},
	{[]string{"heartbeat", "list", "--format", ""}, cpOut("", noFiles, "json", "table")},
	{[]string{"heartbeat", "status", "alpha", "--format", ""}, cpOut("", noFiles, "json", "text")},
	{[]string{"ralph", "spawn", "--prompt-mode", ""}, cpOut("", noFiles, "arg", "stdin", "type")},
	{[]string{"spawn", "--prompt-mode", "s"}, cpOut("", noFiles, "stdin")},
	{[]string{"ralph", "spawn", "--agent", ""}, cpOut("", noFiles, "aider", "claude", "codex", "gemini", "generic", "opencode")},
	{[]string{"ralph", "init", "--template", ""}, cpOut("", noFiles, "default", "plan", "promise")},
	{[]string{"init", "--file", ""}, cpOut("", noFiles, "AGENTS.md", "CLAUDE.md")},
	{[]string{"ralph", "spawn", "--prompt-file", ""}, cpOut("", files)},
	{[]string{"spawn", "--cwd", ""}, cpOut("", dirsOnly)},
	{[]string{"heartbeat", "start", "alpha", "--interval", ""}, cpOut("", noFiles)},
	{[]string{"ralph", "spawn", "--max-iterations", ""}, cpOut("", noFiles)},

	// Arguments that are not names.
	{[]string{"ls", ""}, cpOut("", noFiles)},
	{[]string{"version", ""}, cpOut("", noFiles)},
	{[]string{"spawn", "--name", "x", "--", ""}, cpOut("", files)},
	{[]string{"ralph", "spawn", "--name", "x", "--prompt-file", "P.md", "--", ""}, cpOut("", files)},
}

// cpComplete runs "swarm __complete args..." in-process on root.
func cpComplete(root string, args ...string) ipResult {
	var out, errb bytes.Buffer
	code := execute(newFactory(&IO{In: strings.NewReader(""), Out: &out, Err: &errb}, root), append([]string{"__complete"}, args...))
	return ipResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// cpSnapshot lists every file under root with its size, mode and time of
// change, to show that a run changed nothing.
func cpSnapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %d %s\n", p, fi.Mode(), fi.Size(), fi.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	root := cpRoot(t)
	before := cpSnapshot(t, root)
	for _, c := range cpCases {
		r := cpComplete(root, c.args...)
		// stderr: cobra's note of the directive, and no warning.
		if r.code != 0 || r.stdout != c.want || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "Completion ended with directive: ") {
			t.Errorf("swarm __complete %q:\n got: exit %d\n%s\nstderr %q\nwant:\n%s", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if after := cpSnapshot(t, root); after != before {
		t.Errorf("completion changed the state root:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// __completeNoDesc (bash without descriptions, and scripts) drops them.
	if r := cpComplete(root, "ralph", "stop", ""); !strings.Contains(r.stdout, "paused\t") {
		t.Errorf("no descriptions: %q", r.stdout)
	}
	var out bytes.Buffer
	execute(newFactory(&IO{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}}, root), []string{"__completeNoDesc", "ralph", "stop", ""})
	if out.String() != "loopy\npaused\n:4\n" {
		t.Errorf("__completeNoDesc ralph stop: %q", out.String())
	}
}

// A state root that does not exist offers nothing and is not created
// (ipRun fails the test if it is).
func TestCompletionWithoutState(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"kill", ""}, {"ralph", "status", ""}, {"heartbeat", "stop", ""}, {"ls", "--tag", ""}} {
		if r := ipRun(t, append([]string{"__complete"}, args...)...); r.code != 0 || r.stdout != ":4\n" {
			t.Errorf("swarm __complete %q on no state: exit %d, %q", args, r.code, r.stdout)
		}
	}
}

// Every command with a worker, loop or template NAME argument has its
// completion in nameCompletions, and every entry but one for a command
// yet to come names a command.
func TestNameCompletionsCoverCommands(t *testing.T) {
	t.Parallel()
	nameArgs := map[string]bool{"NAME": true, "[NAME]": true, "WORKER": true, "[WORKER]": true}
	root := newCmdRoot(newFactory(&IO{}, t.TempDir()), nil)
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
			path := commandPath(sub)
			seen[path] = true
			if sub.Hidden || sub.HasSubCommands() || strings.HasPrefix(path, "completion ") {
				continue
			}
			if sub.ValidArgsFunction == nil {
				t.Errorf("swarm %s has no argument completion", path)
			}
			use := strings.Fields(sub.Use)
			if len(use) > 1 && nameArgs[use[1]] && nameCompletions[path] == nil {
				t.Errorf("swarm %s takes %s but has no entry in nameCompletions", path, use[1])
			}
		}
	}
	walk(root)
	for path := range nameCompletions {
		if !seen[path] {
			t.Errorf("nameCompletions has %q, which is no command", path)
		}
	}
}

// cpTrap is a stand-in tmux that records each call in log and fails.
func cpTrap(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$@\" >> '" + log + "'\nexit 1\n"
	testenv.WriteExecutable(t, filepath.Join(dir, "tmux"), script)
	return dir, log
}

// cpEnv is the environment of the swarm binary on root with the trap as
// tmux ($SWARM_TMUX, and first on $PATH) and no tmux server around.
func cpEnv(root, trap string) []string {
	return append(os.Environ(), "SWARM_HOME="+root, "SWARM_DIR=", "SWARM_TMUX="+filepath.Join(trap, "tmux"),
		"PATH="+trap+string(os.PathListSeparator)+os.Getenv("PATH"), "TMUX=", "TMUX_TMPDIR="+trap, "SWARM_TMUX_SOCKET=nonexistent")
}

// Completion, in the real binary with the state root from $SWARM_HOME,
// never runs tmux; a command that does is seen by the trap.
func TestCompletionNeverRunsTmux(t *testing.T) {
	t.Parallel()
	swarm, _ := testenv.Binaries(t)
	root := cpRoot(t)
	trap, log := cpTrap(t)
	env := cpEnv(root, trap)
	for _, c := range cpCases {
		cmd := exec.Command(swarm, append([]string{"__complete"}, c.args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("swarm __complete %q: %v\n%s\nwant:\n%s", c.args, err, out, c.want)
		}
	}
	if calls, err := os.ReadFile(log); err == nil {
		t.Errorf("completion ran tmux:\n%s", calls)
	}
	cmd := exec.Command(swarm, "peek", "alpha")
	cmd.Env = env
	cmd.Run()
	if _, err := os.Stat(log); err != nil {
		t.Errorf("the trap is not armed: swarm peek alpha ran no tmux it saw (%v)", err)
	}
}

// The completion scripts are cobra's, calling "swarm __complete" back; bash
// accepts its script, and completes with it from $SWARM_HOME.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := ipRun(t, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "__complete") || r.stderr != "" {
			t.Errorf("swarm completion %s: exit %d, %d bytes, stderr %q", shell, r.code, len(r.stdout), r.stderr)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "swarm.bash")
	if err := os.WriteFile(script, []byte(ipRun(t, "completion", "bash").stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	cpBashComplete(t, bash, script)
}

// cpBashComplete presses TAB on "swarm kill " in bash with the script
// loaded and checks what it offers. Without the bash-completion package,
// a minimal _get_comp_words_by_ref stands in for it.
func cpBashComplete(t *testing.T, bash, script string) {
	t.Helper()
	swarm, _ := testenv.Binaries(t)
	trap, log := cpTrap(t)
	driver := `
_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source "$1"
COMP_WORDS=("$2" kill "")
COMP_CWORD=2
COMP_LINE="$2 kill "
COMP_POINT=${#COMP_LINE}
COMP_TYPE=37 # menu-complete: names without descriptions
__start_swarm 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command(bash, "-c", driver, "bash", script, swarm)
	cmd.Env = cpEnv(cpRoot(t), trap)
	out, err := cmd.Output()
	if want := "alpha\ndelta\ngamma\nloopy\npaused\n"; err != nil || string(out) != want {
		t.Errorf("bash completion of 'swarm kill ': %v\n got %q\nwant %q", err, out, want)
	}
	if calls, err := os.ReadFile(log); err == nil {
		t.Errorf("bash completion ran tmux:\n%s", calls)
	}
}
