package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Issue 27 item 26: a --foreground loop runs for hours in the process
// whose command line (which every local user can read in ps) held the
// --notify webhook's URL and the --env values. Once the loop runs, the
// process (the same pid) is "swarm ralph run NAME", and the loop goes on
// as before: it completes, notifies the webhook and exits 0.
func TestForegroundLoopKeepsNoSecretOnItsCommandLine(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		posts.Add(1)
	}))
	defer srv.Close()
	token := "tok-" + strconv.Itoa(os.Getpid())
	e.WriteFile("PROMPT.md", "work")
	cmd, out, errb := e.Start("ralph", "spawn", "--name", "fg", "--prompt-file", "PROMPT.md", "--foreground", "--no-worktree",
		"--max-iterations", "2", "--notify=webhook:"+srv.URL+"/"+token, "--env", "SECRET_ENV="+token+"-env", "--",
		e.Agent, "--script", "sleep 1s;print <promise>COMPLETE</promise>;quiet")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The iteration starts in the loop's engine, after the process
	// became ralph run.
	e.Eventually("iteration 1 started", 30*time.Second, func() bool {
		st := e.RalphState("fg")
		n, _ := st["current_iteration"].(float64)
		return n >= 1
	})
	argv, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(argv, []byte(token)) || !bytes.HasSuffix(argv, []byte("\x00ralph\x00run\x00fg\x00")) {
		t.Errorf("the running foreground loop's command line is %q", bytes.ReplaceAll(argv, []byte{0}, []byte{' '}))
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "spawned fg") {
			t.Errorf("foreground loop: %v\nstdout:\n%s\nstderr:\n%s", err, out, errb)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the foreground loop did not end\nstdout:\n%s\nstderr:\n%s", out, errb)
	}
	if posts.Load() != 1 {
		t.Errorf("the webhook got %d posts, want 1\nstdout:\n%s", posts.Load(), out)
	}
}
