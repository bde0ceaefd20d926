package proc

// A detached process's exit status is lost: the swarm that starts it exits
// at once, and init, which reaps the orphan, keeps the status to itself.
// So a process worker is started through a supervisor (this binary's
// hidden command, StartSpec.Supervisor) that starts the command, tells the
// spawner the command's identity, waits for it, and records how it ended.
//
// The command is started exactly as without the supervisor: its own argv,
// environment, working directory and standard streams, in a session of its
// own. The Target Spawn returns is the command's, so kill and status
// confirm and signal the command and its tree as before. The supervisor,
// its parent in a session of its own, is not in that tree: it outlives the
// command by the moment it takes to record the end.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The supervisor's descriptors besides stdio: it waits for a go-ahead on
// goFD before starting the command, and reports the identity of the
// command it started ("PID TICKS", or "error: ...") on reportFD.
const (
	reportFD = 3
	goFD     = 4
)

// goAhead is what the spawner writes on goFD once the supervisor runs.
const goAhead = "go\n"

// superviseWait bounds how long Spawn waits for the supervisor's report:
// it starts one process, milliseconds.
const superviseWait = 10 * time.Second

// Exit is how a supervised command ended.
type Exit struct {
	Target Target
	// Code is shell-style: the exit status, or 128+signal.
	Code  int
	Ended time.Time
}

// spawnSupervised starts spec's supervisor with the command's resolved path
// and argv after its own arguments, the worker's stdio as its own, and
// pipes on reportFD and goFD, and returns the identity it reports.
//
// The go-ahead is written once the supervisor runs this binary, which
// carries the spawn's token in its environment: a spawn killed before
// that leaves a supervisor that starts nothing, and one killed after
// leaves a supervisor that the rollback of the crashed spawn finds by its
// token (its command with it, as its descendant).
func spawnSupervised(path string, spec StartSpec, stdio []*os.File) (Target, error) {
	sup, err := exec.LookPath(spec.Supervisor[0])
	if err != nil {
		return Target{}, fmt.Errorf("supervisor: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Target{}, err
	}
	defer func() { _ = r.Close() }() // read only
	goR, goW, err := os.Pipe()
	if err != nil {
		return Target{}, errors.Join(err, w.Close())
	}
	defer func() { _ = goW.Close() }() // a pipe: what was written is with the reader already
	argv := append(append(append([]string{}, spec.Supervisor...), path), spec.Command...)
	st, err := startDetached(sup, argv, spec.Dir, spec.Env, append(stdio, w, goR))
	_ = w.Close()   // the supervisor holds its own copies
	_ = goR.Close() // the supervisor holds its own copies
	if err != nil {
		return Target{}, fmt.Errorf("supervisor: %w", err)
	}
	if err := r.SetReadDeadline(time.Now().Add(superviseWait)); err != nil {
		// Without it the read below could wait for ever.
		TerminateTarget(st, 0)
		return Target{}, fmt.Errorf("supervisor: %w", err)
	}
	line := ""
	if _, err = io.WriteString(goW, goAhead); err == nil {
		line, err = bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	}
	if err != nil && line == "" {
		// Whatever it may still start is stopped with it.
		TerminateTarget(st, 0)
		return Target{}, errors.New("the supervisor did not start the command")
	}
	return parseReport(line)
}

// parseReport reads a supervisor's report.
func parseReport(line string) (Target, error) {
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return Target{}, errors.New(msg)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		return Target{}, fmt.Errorf("bad report from the supervisor: %q", line)
	}
	pid, err1 := strconv.Atoi(f[0])
	ticks, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 1 {
		return Target{}, fmt.Errorf("bad report from the supervisor: %q", line)
	}
	t := Target{PID: pid, Ticks: ticks}
	if ticks != 0 {
		t.Start = ticksTime(ticks)
	}
	return t, nil
}

// Supervise is the supervisor's side, in a process Spawn started with a
// StartSpec.Supervisor. Once the spawner says go, it starts path with argv
// in a session of its own, with this process's environment, working
// directory and standard streams; reports the command's identity to the
// spawner; then waits for the command and returns how it ended. Once the
// command runs, this process's standard output and error point at
// /dev/null, so it holds no copy of the worker's log pipes.
func Supervise(path string, argv []string) (Exit, error) {
	report, err := inherited(reportFD, "report")
	if err != nil {
		return Exit{}, err
	}
	defer func() { _ = report.Close() }() // a pipe: what was written is with the reader already
	goPipe, err := inherited(goFD, "go-ahead")
	if err != nil {
		return Exit{}, err
	}
	said, _ := bufio.NewReader(io.LimitReader(goPipe, int64(len(goAhead)))).ReadString('\n')
	_ = goPipe.Close() // read only
	if said != goAhead {
		return Exit{}, errors.New("the spawn ended before it said go")
	}
	return supervise(path, argv, report)
}

// inherited is descriptor fd as a file, if it is a pipe: the supervisor's
// pipes from Spawn, never whatever else a process started otherwise has
// there.
func inherited(fd int, what string) (*os.File, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil, fmt.Errorf("no %s pipe on descriptor %d (a supervisor is started by spawn)", what, fd)
	}
	return os.NewFile(uintptr(fd), what), nil
}

// supervise starts the command, reports it, and waits for it.
func supervise(path string, argv []string, report io.WriteCloser) (Exit, error) {
	// The supervisor outlives the command: a spawn killed half way is
	// rolled back by stopping what carries its token, the supervisor
	// among them, and a command the supervisor starts meanwhile is found
	// as its descendant only while the supervisor lives (SIGKILL, after
	// the grace, ends both). Caught, not ignored: the command starts
	// with these signals at their defaults.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		fmt.Fprintf(report, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		_ = report.Close() // a pipe: what was written is with the reader already
		return Exit{}, err
	}
	// Read before the Wait below can reap it: the identity is exact.
	t, ok := Identify(p.Pid)
	if !ok {
		t = Target{PID: p.Pid}
	}
	fmt.Fprintf(report, "%d %d\n", t.PID, t.Ticks)
	_ = report.Close() // a pipe: what was written is with the reader already
	quietStdio()
	st, err := p.Wait()
	if err != nil {
		return Exit{Target: t}, err
	}
	return Exit{Target: t, Code: exitCode(st), Ended: time.Now()}, nil
}

// quietStdio points standard output and error at /dev/null.
func quietStdio() {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer func() { _ = devnull.Close() }() // duplicated below; this copy wrote nothing
	// dup2 onto an open descriptor does not fail; were it to, the copy
	// of the log's pipe it keeps closes when this process ends, just
	// after the command.
	_ = unix.Dup2(int(devnull.Fd()), 1) // does not fail on an open descriptor (above)
	_ = unix.Dup2(int(devnull.Fd()), 2) // does not fail on an open descriptor (above)
}

// exitCode is st's shell-style code: the exit status, or 128+signal.
func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
