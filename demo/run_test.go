// Package demo is make demo: run.sh, its prompt and task file, and the
// demo agent (demo/agent). Its test runs the demo.
package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// The demo's loop completes, and the commands it prints at the end work
// as printed once it is over: from another directory, in a shell whose
// environment has no SWARM_HOME.
func TestDemoCommandsWorkAfterIt(t *testing.T) {
	t.Parallel()
	testenv.RequireTmux(t)
	swarm, _ := testenv.Binaries(t)
	// A copy of the repository's layout: run.sh finds bin/ next to demo/.
	root := t.TempDir()
	for _, d := range []string{"demo", "bin"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"run.sh", "PROMPT.md", "TASKS.md"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "demo", f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(swarm, filepath.Join(root, "bin", "swarm")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin", "demo-agent"), "./agent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./demo/agent: %v\n%s", err, out)
	}
	// Nothing of the caller's swarm set-up reaches the demo or the
	// commands it prints: they must carry what they need.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWARM_") && !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+t.TempDir())
	run := exec.Command(filepath.Join(root, "demo", "run.sh"))
	run.Env = env
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "== the loop's files stay in ")
	if !ok || !strings.Contains(string(out), "demo: complete after 3 iterations\n") {
		t.Fatalf("demo output:\n%s", out)
	}
	want := map[string]string{
		"ralph status demo":             "\nExit reason: complete\n",
		"ralph logs demo":               "[DONE] loop complete after 3 iterations reason=complete",
		"ralph logs demo --iteration 3": "<promise>COMPLETE</promise>",
	}
	elsewhere := t.TempDir()
	ran := 0
	for _, line := range strings.Split(after, "\n")[1:] {
		if !strings.HasPrefix(line, "   ") {
			continue
		}
		ran++
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = elsewhere, env
		got, err := cmd.CombinedOutput()
		found := false
		for suffix, text := range want {
			if strings.HasSuffix(line, " "+suffix) {
				found = true
				if !strings.Contains(string(got), text) {
					t.Errorf("%s: no %q in\n%s", line, text, got)
				}
			}
		}
		if err != nil || !found {
			t.Errorf("%s: %v (a command the test does not know: %v)\n%s", line, err, !found, got)
		}
	}
	if ran != len(want) {
		t.Errorf("ran %d printed commands, want %d:\n%s", ran, len(want), out)
	}
}
