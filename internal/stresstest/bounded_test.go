package stresstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chatty prints 4000 numbered lines (about 90 KB), then LAST-LINE.
const chatty = `i=0; while [ $i -lt 4000 ]; do echo "line $i of the output"; i=$((i+1)); done; echo LAST-LINE`

const capBytes = 16 << 10

// checkCapped checks a capped log: within the cap, its head kept, the
// marker where output was dropped, and the last line there.
func checkCapped(t *testing.T, what, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	// A pane's output has the terminal's line ends.
	data := strings.ReplaceAll(readFile(path), "\r\n", "\n")
	if fi.Size() > capBytes {
		t.Errorf("%s is %d bytes, over the %d cap", what, fi.Size(), capBytes)
	}
	if !strings.Contains(data, "line 0 of the output\n") || !strings.Contains(data, "bytes of output dropped here") {
		t.Errorf("%s (%d bytes) lost its head or has no marker:\n%s", what, fi.Size(), tail(data, 400))
	}
}

// TestOutputLogsStayBounded: a process worker's log and a loop
// iteration's agent output stay within --max-log-size however much the
// command prints, keeping the head, a marker and the tail.
func TestOutputLogsStayBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must("spawn", "--name", "pw", "--max-log-size", "16KiB", "--", "sh", "-c", chatty+"; exec sleep 1000")
	log := filepath.Join(w.e.Home, "logs", "pw.stdout.log")
	w.e.Eventually("the last line in the log", 30*time.Second, func() bool { return strings.Contains(readFile(log), "LAST-LINE\n") })
	checkCapped(t, "process worker log", log)

	prompt := w.e.WriteFile("PROMPT.md", "go")
	w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", prompt, "--max-iterations", "1",
		"--prompt-mode", "arg", "--max-log-size", "16KiB", "--", "sh", "-c", chatty, "sh")
	w.waitLoopEnd("rl", 40*time.Second)
	out := filepath.Join(w.e.Home, "ralph", "rl", "output", "iteration-0001.log")
	checkCapped(t, "iteration output", out)
	if !strings.Contains(readFile(out), "LAST-LINE") {
		t.Errorf("iteration output lost its tail:\n%s", tail(readFile(out), 400))
	}
}

// TestPromptFilesAreBounded: a prompt file over 1 MiB, or a FIFO (which
// would block whoever opens it for reading), is refused with an error,
// and nothing waits on it.
func TestPromptFilesAreBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	big := w.e.WriteFile("big.md", strings.Repeat("x", 1<<20+1))
	fifo := filepath.Join(w.e.Dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{big, fifo} {
		name := fmt.Sprintf("rl%d", i)
		cmd, out, errb := w.startWith(nil, "spawn", "--name", name, "--ralph", "--prompt-file", p, "--max-iterations", "1",
			"--foreground", "--", w.e.Agent, "--script", "exit 0", w.marker)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(errb.String(), "swarm: error: ") {
				t.Errorf("%s accepted: %v\n%s%s", filepath.Base(p), err, out, errb)
			}
		case <-time.After(30 * time.Second):
			// startWith put it in its own group: this reaches only it.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("spawn with %s as the prompt file hangs", filepath.Base(p))
		}
	}
	for _, f := range w.check(checkOptions{}) {
		t.Error(f)
	}
}
