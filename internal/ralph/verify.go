package ralph

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// feedbackLimit is how much of a failing check's output goes into the next
// prompt: its last 2,000 characters.
const feedbackLimit = 2000

// verify gates a completion signal (COMPLETE, done pattern, done file):
// it is accepted only if the iteration changed something (with
// --require-change) and every --check passes. Checks run now, while the
// agent is stopped, never beside it. A rejection is logged, the failing
// output is kept for the next iteration's prompt, and a rejected done file
// is removed so the next iteration has to earn it again.
func (e *Engine) verify(o *Outcome, st *state.Ralph, iter int) {
	completion := o.Signal.Kind == SignalComplete || o.Signal.Kind == SignalDonePattern || o.DoneFile
	if !completion || (len(st.Checks) == 0 && !st.RequireChange) {
		return
	}
	var reasons, evidence []string
	var feedback strings.Builder
	if st.RequireChange {
		head, tree := worktree.Head(st.WorkDir), worktree.TreeState(st.WorkDir)
		if head == st.StartHead && tree == st.StartTree {
			reasons = append(reasons, "no change (git HEAD and working tree are as the iteration found them)")
			feedback.WriteString("Completion was rejected: this iteration changed nothing (no commit, no diff). Do the work before reporting completion.\n")
		}
	}
	for _, check := range st.Checks {
		res := runCheck(check, st.WorkDir, st.CheckTimeout.Duration)
		if res.ok {
			continue
		}
		reasons = append(reasons, fmt.Sprintf("check failed: %s (%s)", check, res.status))
		if evidence == nil {
			evidence = headLines(res.output, evidenceLines)
		}
		fmt.Fprintf(&feedback, "Completion was rejected: the check `%s` failed (%s). Its output ends with:\n\n%s\n\n", check, res.status, tail(res.output, feedbackLimit))
	}
	if len(reasons) == 0 {
		return
	}
	o.Rejected = strings.Join(reasons, "; ")
	e.log(EventReject, "iteration %d reason=%s", iter, o.Rejected)
	e.say("completion rejected: %s", o.Rejected)
	fb := "---\n" + strings.TrimRight(feedback.String(), "\n") + "\nFix this, verify, and only then report completion again.\n"
	e.record(func(s *state.Ralph) error {
		s.Feedback = state.NullString(fb)
		s.LastRejection = state.NullString(fmt.Sprintf("iteration %d: %s", iter, o.Rejected))
		s.LastCheckOutput = evidence
		return nil
	})
	if o.DoneFile {
		// Left, it would end the next iteration as done at once.
		if err := os.Remove(doneFilePath(st)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			e.say("cannot remove the rejected done file: %v", err)
		}
	}
}

type checkResult struct {
	ok     bool
	status string // "exit 1", "timed out after 120s"
	output string
}

// runCheck runs one check with sh -c in dir. Its output goes through a
// pipe into a capped buffer (logcap.Buffer: head and tail, checkOutputMax
// bytes), so a check printing without end costs neither disk nor memory.
// The loop waits for the check, not for the pipe: once the check has
// ended, or outlived timeout, whatever it started in its process group is
// stopped, and a process that left the group and still holds the pipe is
// given checkDrainWait.
func runCheck(command, dir string, timeout time.Duration) checkResult {
	buf, err := logcap.NewBuffer(checkOutputMax)
	if err != nil {
		return checkResult{status: "could not start: " + err.Error()}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return checkResult{status: "could not start: " + err.Error()}
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = w.Close() // the check has its own copy
	if err != nil {
		_ = r.Close() // read only
		return checkResult{status: "could not start: " + err.Error()}
	}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(buf, r); close(copied) }() // a capped buffer takes all; a read error ends the output, which is all it can mean
	// The check's identity, read before anything can reap it: only its
	// own process group is ever signalled.
	t, _ := proc.Identify(cmd.Process.Pid)
	var waitErr error // cmd.Wait's, once done is closed
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	// Read bounded, and as plain text: the agent can influence what a
	// check prints, and it goes into the next prompt.
	output := func() string {
		select {
		case <-copied:
		case <-time.After(checkDrainWait):
		}
		_ = r.Close() // ends the copy if a stray process still holds the pipe
		<-copied
		return plainText(string(buf.Capped().Bytes(checkOutputMax)))
	}
	select {
	case <-done:
		err := waitErr
		// Leftovers of the check: its group's members, now that the
		// check itself is reaped (its group keeps its number while it
		// has members).
		proc.TerminateTargets(proc.OrphansOf(t.PID), 0)
		if err == nil {
			return checkResult{ok: true, status: "exit 0", output: output()}
		}
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return checkResult{status: fmt.Sprintf("exit %d", code), output: output()}
	case <-time.After(timeout):
		proc.TerminateTarget(t, checkKillGrace)
		<-done // killed: how it ended says no more than the timeout
		return checkResult{status: fmt.Sprintf("timed out after %s", timeout), output: output()}
	}
}

// checkOutputMax bounds how much of a check's output is read (its head
// and tail are kept); only the last feedbackLimit characters go into the
// next prompt.
const checkOutputMax = 64 << 10

// plainText is check output as it goes into a prompt and into ralph
// status: terminal escapes and control characters removed (tmux's paste
// sanitising), lines kept.
func plainText(s string) string {
	return tmux.SanitizePaste(ready.StripANSI(s))
}

// evidenceLines is how much of the failing check's output ralph status
// shows: its first lines, where the error usually is.
const evidenceLines = 20

// headLines returns the first n lines of s.
func headLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	if len(lines) == 1 && lines[0] == "" {
		return []string{}
	}
	return lines
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// onExit tells the world the loop ended, once: the loop's --on-exit
// command, the global hook (SWARM_ON_EXIT, else on_exit in the state
// root's config.json), and with --notify a desktop notification. Each
// gets the outcome in its environment (SWARM_WORKER, SWARM_EXIT_REASON,
// SWARM_EXIT_CODE, SWARM_EXIT_DETAIL, SWARM_ITERATIONS).
func (e *Engine) onExit(st *state.Ralph, code int) {
	e.afterEnd(st, code) // --on-complete merge, notifications (lifecycle.go)
	env := append(os.Environ(),
		"SWARM_WORKER="+e.Name,
		"SWARM_EXIT_REASON="+string(st.ExitReason),
		fmt.Sprintf("SWARM_EXIT_CODE=%d", code),
		"SWARM_EXIT_DETAIL="+string(st.ExitDetail),
		fmt.Sprintf("SWARM_ITERATIONS=%d", st.CurrentIteration),
	)
	if st.OnExit != "" {
		e.runHook("on-exit command", string(st.OnExit), st.WorkDir, env)
	}
	if global := e.globalHook(); global != "" {
		e.runHook("global on-exit hook", global, st.WorkDir, env)
	}
	if st.Notify {
		e.notify(st, code)
	}
}

// globalHook is the hook run for every loop's end: $SWARM_ON_EXIT, else
// on_exit in config.json.
func (e *Engine) globalHook() string {
	if h := os.Getenv("SWARM_ON_EXIT"); h != "" {
		return h
	}
	cfg, err := e.M.Store.Config()
	if errors.Is(err, state.ErrUnsafe) {
		// Another user's hook would run as this one: never.
		e.say("global on-exit hook not run: %v (%s)", err, hint.Of(err))
		return ""
	}
	if err != nil {
		e.say("cannot read %s: %v", e.M.Store.ConfigPath(), err)
		return ""
	}
	return cfg.OnExit
}

// notify shows a desktop notification with notify-send, when it is
// installed (swarm top rings the terminal bell for these loops too).
func (e *Engine) notify(st *state.Ralph, code int) {
	bin, err := exec.LookPath(Notifier)
	if err != nil {
		return
	}
	title := fmt.Sprintf("swarm: %s %s (exit %d)", e.Name, st.ExitReason, code)
	body := fmt.Sprintf("after %d iteration(s)", st.CurrentIteration)
	if st.ExitDetail != "" {
		body += ": " + string(st.ExitDetail)
	}
	e.runHook(Notifier, "", "/", nil, bin, title, body)
}

// hookOutputMax bounds what a hook prints into the loop's output (the
// monitor's log): a hook's output is a line or two of notification, and
// one printing without end must not fill the disk with the monitor log.
const hookOutputMax = 64 << 10

// runHook runs a shell command (or, with argv, a program) in dir with env,
// bounded by onExitTimeout; its output goes to the loop's output, at most
// hookOutputMax bytes of it.
func (e *Engine) runHook(what, command, dir string, env []string, argv ...string) {
	cmd := exec.Command("sh", "-c", command)
	if len(argv) > 0 {
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Dir = dir
	if _, err := os.Stat(cmd.Dir); err != nil {
		cmd.Dir = "/"
	}
	cmd.Env = env
	out := logcap.Limit(e.Out, hookOutputMax, what)
	cmd.Stdout, cmd.Stderr = out, out
	// A hook that starts a background process must not hold the monitor.
	cmd.WaitDelay = onExitWaitDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.say("%s failed to start: %v", what, err)
		return
	}
	t, _ := proc.Identify(cmd.Process.Pid)
	res := make(chan error, 1)
	go func() { res <- cmd.Wait() }()
	select {
	case err := <-res:
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			e.say("%s failed: %v", what, err)
		}
	case <-time.After(onExitTimeout):
		proc.TerminateTarget(t, time.Second)
		e.say("%s killed after %s", what, onExitTimeout)
	}
}
