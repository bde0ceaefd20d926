package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var socketSeq atomic.Int64

// Session is one agent running in a window of its own tmux server.
type Session struct {
	t      testing.TB
	Socket string // tmux -L name
	Target string // the agent's pane
	Setup  *Setup
	// Started is when the window was created; ready-time measurements
	// count from it.
	Started time.Time
}

// Size is the terminal the agent runs in.
var Size = [2]int{120, 40}

// Start runs claude with args in a new tmux server (its own -L socket,
// killed at cleanup) in s.Dir. The pane stays after claude exits, so a
// test can read the last screen and the exit status.
func Start(t testing.TB, s *Setup, args ...string) *Session {
	t.Helper()
	sess := &Session{
		t:      t,
		Socket: fmt.Sprintf("swarm-agents-%d-%d", os.Getpid(), socketSeq.Add(1)),
		Target: "=agent:0.0",
		Setup:  s,
	}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	// remain-on-exit comes from the config file so that it is on before the
	// command starts: claude may exit at once (refused flags, "No, exit").
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Kill)
	argv := []string{"-L", sess.Socket, "-f", conf, "new-session", "-d", "-s", "agent",
		"-x", strconv.Itoa(Size[0]), "-y", strconv.Itoa(Size[1]), "-c", s.Dir, "--"}
	argv = append(argv, s.Command(args...)...)
	sess.Started = time.Now()
	if out, err := sess.tmuxErr(argv...); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	return sess
}

// tmuxErr runs tmux with args as given (the caller adds -L), with the
// test's environment less TMUX, so a developer inside tmux is not touched.
func (s *Session) tmuxErr(args ...string) (string, error) {
	cmd := exec.Command("tmux", args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Tmux runs a tmux command on the session's server and fails t on error.
func (s *Session) Tmux(args ...string) string {
	s.t.Helper()
	out, err := s.tmuxErr(append([]string{"-L", s.Socket}, args...)...)
	if err != nil {
		s.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// Kill ends the tmux server, and with it claude.
func (s *Session) Kill() {
	_, _ = s.tmuxErr("-L", s.Socket, "kill-server")
}

// Screen is the visible pane as text (capture-pane -p), trailing blank
// lines removed.
func (s *Session) Screen() string {
	s.t.Helper()
	out, err := s.tmuxErr("-L", s.Socket, "capture-pane", "-p", "-t", s.Target)
	if err != nil {
		s.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return strings.TrimRight(out, "\n") + "\n"
}

// Dead reports whether claude has exited, and its exit status.
func (s *Session) Dead() (bool, int) {
	s.t.Helper()
	out := strings.Fields(s.Tmux("display-message", "-p", "-t", s.Target, "#{pane_dead} #{pane_dead_status}"))
	if len(out) == 0 || out[0] != "1" {
		return false, 0
	}
	code := -1
	if len(out) > 1 {
		code, _ = strconv.Atoi(out[1])
	}
	return true, code
}

// PollInterval is how often WaitScreen captures the pane.
var PollInterval = 100 * time.Millisecond

// WaitScreen polls the pane until cond holds for it or timeout passes, and
// returns the last screen; on timeout it fails t, showing the screen.
func (s *Session) WaitScreen(timeout time.Duration, what string, cond func(string) bool) string {
	s.t.Helper()
	screen, ok := s.PollScreen(timeout, cond)
	if !ok {
		s.t.Fatalf("no %s within %v; screen:\n%s", what, timeout, screen)
	}
	return screen
}

// PollScreen is WaitScreen without failing: it reports whether cond held.
func (s *Session) PollScreen(timeout time.Duration, cond func(string) bool) (string, bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.Screen()
		if cond(screen) {
			return screen, true
		}
		if time.Now().After(deadline) {
			return screen, false
		}
		time.Sleep(PollInterval)
	}
}

// Contains is a WaitScreen condition: the screen contains every string.
func Contains(subs ...string) func(string) bool {
	return func(screen string) bool {
		for _, sub := range subs {
			if !strings.Contains(screen, sub) {
				return false
			}
		}
		return true
	}
}

// Matches is a WaitScreen condition: the screen matches the regexp.
func Matches(re string) func(string) bool {
	rx := regexp.MustCompile(re)
	return rx.MatchString
}

// Paste types text as one bracketed paste (load-buffer, paste-buffer -p),
// as swarm delivers prompts, without pressing Enter.
func (s *Session) Paste(text string) {
	s.t.Helper()
	buf := "agenttest-" + strconv.FormatInt(socketSeq.Add(1), 10)
	cmd := exec.Command("tmux", "-L", s.Socket, "load-buffer", "-b", buf, "-")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("tmux load-buffer: %v: %s", err, out)
	}
	s.Tmux("paste-buffer", "-p", "-d", "-b", buf, "-t", s.Target)
}

// Keys sends tmux key names (Enter, Escape, Down, C-c, ...).
func (s *Session) Keys(keys ...string) {
	s.t.Helper()
	s.Tmux(append([]string{"send-keys", "-t", s.Target}, keys...)...)
}
