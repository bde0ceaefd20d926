package stresstest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// hostileArgs reach a tmux, shell or format parser if anything on the way
// is not escaped: a trailing ';' ends a tmux command, {} and $HOME are
// expanded by shells, #{pane_id} by tmux formats.
var hostileArgs = []string{"x;", "{}", "$HOME", "#{pane_id}"}

// hostileDir is a directory name with a tmux format character and a
// command separator in it.
const hostileDir = "C#Sharp;x"

var kinds = []struct {
	name  string
	flags []string
}{{"tmux", []string{"--tmux"}}, {"process", nil}}

// waitLines polls a file until it has n lines and returns them.
func waitLines(t *testing.T, path string, n int) []string {
	t.Helper()
	var lines []string
	testenv.Eventually(t, fmt.Sprintf("%d lines in %s", n, path), 20*time.Second, func() bool {
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		return len(lines) >= n
	})
	return lines
}

// TestHostileDirectoryAndArguments: a worker spawned from a directory
// named "C#Sharp;x" with the arguments x; {} $HOME #{pane_id} runs in
// exactly that directory with exactly those arguments, as a tmux window
// and as a process. Shown three ways: the agent's own argv and cwd in
// /proc, a shell that writes pwd and "$@" to a file, and a program whose
// path (one command element) holds "$(touch PWNED);".
func TestHostileDirectoryAndArguments(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			dir := filepath.Join(w.e.Dir, hostileDir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			spawn := func(name string, cmd ...string) {
				t.Helper()
				args := append(append([]string{"spawn", "--name", name}, k.flags...), "--")
				r := w.e.RunIn(dir, append(args, cmd...)...)
				if r.Code != 0 {
					t.Fatalf("%s", r)
				}
			}

			// 1. The agent's argv and cwd, from /proc.
			agentArgv := append([]string{w.e.Agent, "--input", "none", "--script", "cwd;quiet", w.marker}, hostileArgs...)
			spawn("fa", agentArgv...)
			var agent procInfo
			testenv.Eventually(t, "the agent", 20*time.Second, func() bool {
				as := w.markedAgents(processes())
				if len(as) == 1 {
					agent = as[0]
				}
				return len(as) == 1
			})
			if !slices.Equal(agent.argv, agentArgv) {
				t.Errorf("argv %q, want %q", agent.argv, agentArgv)
			}
			if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", agent.pid)); cwd != dir {
				t.Errorf("cwd %q, want %q", cwd, dir)
			}
			testenv.Eventually(t, "the agent's CWD line", 20*time.Second, func() bool {
				return strings.Contains(w.run("peek", "fa").stdout+w.run("logs", "fa").stdout, "CWD="+dir+"\n")
			})

			// 2. A shell reports where it runs and what it got.
			script := `pwd -P > out.txt && printf '%s\n' "$@" >> out.txt`
			spawn("sh", append([]string{"sh", "-c", script, "sh"}, hostileArgs...)...)
			got := waitLines(t, filepath.Join(dir, "out.txt"), 1+len(hostileArgs))
			if want := append([]string{dir}, hostileArgs...); !slices.Equal(got, want) {
				t.Errorf("sh saw %q, want %q", got, want)
			}

			// 3. A one-element command is executed, not parsed.
			prog := filepath.Join(dir, "ag$(touch PWNED);x")
			if err := os.Link(w.e.Agent, prog); err != nil {
				copyFile(t, w.e.Agent, prog)
			}
			spawn("one", prog)
			testenv.Eventually(t, "the one-element program's banner", 20*time.Second, func() bool {
				return strings.Contains(w.run("peek", "one").stdout+w.run("logs", "one").stdout, "Fake Agent v1.0")
			})
			for _, d := range []string{dir, w.e.Dir, w.e.Home} {
				if _, err := os.Stat(filepath.Join(d, "PWNED")); err == nil {
					t.Errorf("the command's path was run by a shell: %s/PWNED exists", d)
				}
			}
			for _, f := range w.check(checkOptions{}) {
				t.Error(f)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHostileEnvValues: --env values with ';', '#{...}', '$' and '{}'
// reach the command exactly, in a tmux window and as a process.
func TestHostileEnvValues(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := []string{"A=x;", "B=#{pane_id} $HOME", "C={};", "D=a=b; c"}
	for _, k := range kinds {
		out := filepath.Join(w.e.Dir, k.name+".env")
		args := append([]string{"spawn", "--name", "e-" + k.name}, k.flags...)
		for _, e := range env {
			args = append(args, "--env", e)
		}
		args = append(args, "--", "sh", "-c", `printf '%s\n' "$A" "$B" "$C" "$D" > "$0"`, out)
		w.must(args...)
		got := waitLines(t, out, len(env))
		var want []string
		for _, e := range env {
			_, v, _ := strings.Cut(e, "=")
			want = append(want, v)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s worker got %q, want %q", k.name, got, want)
		}
	}
}

// TestHostileSendText: swarm send types text exactly as given: "b;" is
// b and ;, format and shell syntax stay literal, and a multi-line text
// carrying the end-of-paste sequence still arrives as ONE message, with
// the sequence removed (tmux.SanitizePaste).
func TestHostileSendText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	w.must("spawn", "--name", "w", "--tmux", "--ready-wait", "--ready-timeout", "20", "--",
		w.e.Agent, "--record", rec, "--script", "wait;wait;wait;wait;wait;quiet", w.marker)
	cases := []struct{ send, want string }{
		{"b;", "b;"},
		{`x\;`, `x\;`},
		{"#{pane_id} $HOME {} ;", "#{pane_id} $HOME {} ;"},
		{"-t =x:0 ; kill-server", "-t =x:0 ; kill-server"},
		{"one\x1b[201~two\nthree\x1b[200~four\x03", "onetwo\nthreefour"},
		{"end", "end"},
	}
	for i, c := range cases {
		r := w.run("send", "w", "--", c.send)
		if r.code != 0 || r.stdout != "sent to w\n" {
			t.Fatalf("send %q: %s", c.send, r)
		}
		testenv.Eventually(t, fmt.Sprintf("message %d", i+1), 20*time.Second, func() bool {
			return len(testenv.Messages(t, rec)) > i
		})
	}
	got := testenv.Messages(t, rec)
	var want []string
	for _, c := range cases {
		want = append(want, c.want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
	if r := w.run("status", "w"); r.code != 0 {
		t.Errorf("the tmux server or the worker did not survive: %s", r)
	}
}

// TestHostileStateRoot: a SWARM_HOME whose path holds '#', ';' and a
// space works for tmux and process workers, ls, and a ralph loop (whose
// monitor pipes the pane into a file under it).
func TestHostileStateRoot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.Home = filepath.Join(filepath.Dir(w.e.Home), "h#o;me x", "#{session_name};")
	w.session = state.DefaultSession(w.e.Home)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	prompt := w.e.WriteFile("PROMPT.md", "do #{pane_id}; $HOME")

	w.must(append([]string{"spawn", "--name", "tw", "--tmux", "--"}, w.agent()...)...)
	w.must(append([]string{"spawn", "--name", "pw", "--"}, w.agent()...)...)
	w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", prompt, "--max-iterations", "2",
		"--restart-delay", "100ms", "--", w.e.Agent, "--record", rec, "--script", "print done;exit 0", w.marker)
	recs, r, err := w.ls()
	if err != nil {
		t.Fatalf("%v: %s", err, r)
	}
	if len(recs) != 3 {
		t.Fatalf("ls: %s", r)
	}
	for _, n := range []string{"tw", "pw"} {
		if r := w.run("status", n); r.code != 0 {
			t.Errorf("%s", r)
		}
	}
	if _, err := os.Stat(filepath.Join(w.e.Home, "logs", "pw.stdout.log")); err != nil {
		t.Errorf("process log: %v", err)
	}
	st := w.waitLoopEnd("rl", 40*time.Second)
	if st["exit_reason"] != "max_iterations" || strings.Count(w.e.RalphLog("rl"), "[START]") != 2 {
		t.Errorf("loop: %v\n%s", st, w.e.RalphLog("rl"))
	}
	if got := testenv.Messages(t, rec); !slices.Equal(got, []string{"do #{pane_id}; $HOME", "do #{pane_id}; $HOME"}) {
		t.Errorf("agent got %q", got)
	}
	out := readFile(filepath.Join(w.e.Home, "ralph", "rl", "output", "iteration-0002.log"))
	if !strings.Contains(out, "done") {
		t.Errorf("iteration output under the hostile root: %q", out)
	}
	if r := w.run("ralph", "status", "rl"); r.code != 0 {
		t.Errorf("%s", r)
	}
	for _, f := range w.check(checkOptions{}) {
		t.Error(f)
	}
	w.must("kill", "--all")
	w.must("clean", "--all")
	for _, f := range w.check(checkOptions{}) {
		t.Error(f)
	}
}

// TestHostilePromptEndsPaste: a prompt file holding the end-of-paste
// sequence ESC[201~ (and a start, and a Ctrl-C byte) reaches the agent as
// ONE message per iteration, the sequences removed: the paste cannot be
// ended early and the rest typed as separate submissions.
func TestHostilePromptEndsPaste(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	prompt := w.e.WriteFile("PROMPT.md", "first\x1b[201~second\nthird\x1b[200~fourth\x03 fifth\n")
	w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", prompt, "--max-iterations", "1",
		"--", w.e.Agent, "--record", rec, "--script", "print ok;exit 0", w.marker)
	w.waitLoopEnd("rl", 40*time.Second)
	got := testenv.Messages(t, rec)
	if want := []string{"firstsecond\nthirdfourth fifth\n"}; !slices.Equal(got, want) {
		t.Errorf("agent got %q, want %q", got, want)
	}
}
