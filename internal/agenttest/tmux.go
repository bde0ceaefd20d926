package agenttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
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
	cols, rows := s.Cfg.Cols, s.Cfg.Rows
	if cols == 0 || rows == 0 {
		cols, rows = 120, 40
	}
	argv := []string{"-L", sess.Socket, "-f", conf, "new-session", "-d", "-s", "agent",
		"-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-c", s.Dir, "--"}
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

// Kill ends the tmux server, removes its socket file (tmux 3.3 leaves it
// behind) and waits for claude to be gone: it writes into its HOME while
// it exits, and the test's temp dir is removed next. A claude still there
// after 10 s is killed with its process group.
func (s *Session) Kill() {
	out, _ := s.tmuxErr("-L", s.Socket, "display-message", "-p", "-t", s.Target, "#{pane_pid} #{socket_path}")
	pidText, socket, _ := strings.Cut(strings.TrimSpace(out), " ")
	pid, _ := strconv.Atoi(pidText)
	_, _ = s.tmuxErr("-L", s.Socket, "kill-server") // the wait below says whether claude is gone
	if strings.HasSuffix(socket, "/"+s.Socket) {
		_ = os.Remove(socket) // absent when tmux removed it
	}
	if pid <= 0 || waitGone(pid, 10*time.Second) {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // one gone already is what is wanted: the wait below tells
	_ = syscall.Kill(pid, syscall.SIGKILL)  // likewise, for a claude that left the group
	waitGone(pid, 5*time.Second)
}

// waitGone polls until pid no longer runs (gone, or a zombie) or timeout.
func waitGone(pid int, timeout time.Duration) bool {
	return clock.Wait(context.Background(), clock.Real, 50*time.Millisecond, timeout, func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return syscall.Kill(pid, 0) == syscall.ESRCH || os.IsNotExist(err)
		}
		i := strings.LastIndexByte(string(b), ')')
		return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
	})
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

// History is the pane's scrollback and visible screen as text.
func (s *Session) History() string {
	s.t.Helper()
	return s.Tmux("capture-pane", "-p", "-S", "-", "-t", s.Target)
}

// Dead reports whether claude has exited, and its exit status (128+N for
// signal N), or -1 while tmux does not know it. tmux marks a pane dead
// when its terminal closes; the status comes when tmux reaps the process.
// With Claude Code that can be much later: its threads outlive the main
// one, and tmux 3.3 was seen to miss the SIGCHLD and leave the zombie
// (and an empty #{pane_dead_status}) for over a minute, until some other
// child of the server exits.
func (s *Session) Dead() (bool, int) {
	s.t.Helper()
	out := strings.Split(strings.TrimSpace(s.Tmux("display-message", "-p", "-t", s.Target,
		"#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}")), ":")
	if len(out) != 3 || out[0] != "1" {
		return false, 0
	}
	if code, err := strconv.Atoi(out[1]); err == nil {
		return true, code
	}
	if sig, err := strconv.Atoi(out[2]); err == nil {
		return true, 128 + sig
	}
	return true, -1
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
	var screen string
	ok := clock.Wait(context.Background(), clock.Real, PollInterval, timeout, func() bool {
		screen = s.Screen()
		return cond(screen)
	})
	return screen, ok
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
