package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/testenv"
)

// The test binary doubles as the processes the tests start, so their
// behaviour under signals is exact and needs nothing installed.
const (
	helperEnv  = "PROC_TEST_HELPER"
	pidFileEnv = "PROC_TEST_PIDFILE"
	maxEnv     = "PROC_TEST_MAX"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == superviseArg {
		runSupervisor(os.Args[2], os.Args[3], os.Args[4:])
		os.Exit(0)
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		runHelper(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(mode string) {
	switch mode {
	case "trap":
		trapSignals(nil)
	case "spawner":
		// On SIGTERM, start a child in a session of its own that ignores
		// SIGTERM too: a descendant born during the grace period.
		trapSignals(func() {
			pid := startSelf("trap", true)
			os.WriteFile(os.Getenv(pidFileEnv), []byte(strconv.Itoa(pid)), 0o600)
		})
	case "parent":
		// Start a child that dies on SIGTERM, in our group or (with
		// PROC_TEST_SETSID) a session of its own, and report its pid;
		// then exit (to become a zombie or an orphaned group), or with
		// PROC_TEST_STAY survive SIGTERM.
		fmt.Println(startSelf("sleep", os.Getenv("PROC_TEST_SETSID") != ""))
		if os.Getenv("PROC_TEST_STAY") != "" {
			trapSignals(nil)
		}
	case "sleep":
		time.Sleep(time.Hour) // default dispositions: SIGTERM ends it
	case "logpipe":
		max, _ := strconv.ParseInt(os.Getenv(maxEnv), 10, 64)
		if err := logcap.Pipe(os.Stdin, os.Args[len(os.Args)-1], max); err != nil {
			os.Exit(1)
		}
	case "exec":
		// Become sh printing K and the pid, with K and PATH from the
		// entries after "--" (PATH is where sh is found).
		args := os.Args[len(os.Args)-2:]
		err := Exec([]string{"sh", "-c", `echo "K=$K pid=$$"`}, args)
		var ee *ExecError
		if errors.As(err, &ee) {
			fmt.Println("exec failed:", ee.Code, ee.Err)
		}
		os.Exit(3)
	case "chatty":
		fmt.Print(strings.Repeat("o", 10000) + "END-OUT\n")
		fmt.Fprint(os.Stderr, strings.Repeat("e", 10000)+"END-ERR\n")
	}
}

// trapSignals reports SIGTERM and SIGWINCH on stdout, one name a line, and
// survives SIGTERM: only SIGKILL ends it.
func trapSignals(onTerm func()) {
	c := make(chan os.Signal, 16)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGWINCH)
	fmt.Println("ready")
	for s := range c {
		if s == syscall.SIGTERM && onTerm != nil {
			onTerm()
		}
		fmt.Println(signalName(s))
	}
}

// startSelf starts the test binary as a helper, stdio to /dev/null.
func startSelf(mode string, newSession bool) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: newSession}
	if err := cmd.Start(); err != nil {
		return 0
	}
	return cmd.Process.Pid
}

// helper is a helper process the test started in a process group of its
// own, with its stdout readable line by line.
type helper struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
}

func startHelper(t *testing.T, mode string, env ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: bufio.NewScanner(out)}
	t.Cleanup(func() {
		// Only ever our own helper's group, and only while it is ours.
		if tg, ok := Identify(cmd.Process.Pid); ok {
			TerminateTarget(tg, 0)
		}
		cmd.Wait()
	})
	return h
}

// line returns the helper's next stdout line ("" at EOF).
func (h *helper) line() string {
	if h.lines.Scan() {
		return h.lines.Text()
	}
	return ""
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// waitState polls until pid's state letter satisfies ok.
func waitState(t *testing.T, pid int, what string, ok func(stat, bool) bool) {
	t.Helper()
	testenv.Eventually(t, what, 10*time.Second, func() bool {
		st, found := readStat(pid)
		return ok(st, found)
	})
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testenv.Eventually(t, "pid file "+filepath.Base(path), 10*time.Second, func() bool {
		b, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "TERM"
	}
	return "WINCH"
}
