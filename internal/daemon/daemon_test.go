package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/testenv"
	"golang.org/x/sys/unix"
)

// The helper process: the test binary re-executed with
// -test.run=^TestHelperProcess$ and DAEMON_HELPER set to a mode.
const helperEnv = "DAEMON_HELPER"

// helperLife bounds a helper that a failed test forgot: it exits by itself.
const helperLife = 60 * time.Second

// TestHelperProcess is not a test: it is the daemon the other tests start.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	dir := os.Getenv("DAEMON_DIR")
	lock := filepath.Join(dir, "d.lock")
	switch mode {
	case "exit":
		fmt.Println("helper exiting at once")
		os.Exit(3)
	case "nolock":
		clock.Real.Sleep(context.Background(), helperLife)
		os.Exit(0)
	case "hold":
		wd, _ := os.Getwd()
		sid, _ := unix.Getsid(0)
		fmt.Printf("helper pid=%d\n", os.Getpid())
		report := fmt.Sprintf("cwd=%s\nsetsid=%v\nmarker=%s\n", wd, sid == os.Getpid(), os.Getenv("DAEMON_MARK"))
		h, err := Lock(lock)
		if err != nil {
			fmt.Println("lock:", err)
			os.Exit(1)
		}
		// Written then renamed: the test polls for the file.
		final := filepath.Join(dir, fmt.Sprintf("report.%d", os.Getpid()))
		os.WriteFile(final+".tmp", []byte(report), 0o600)
		os.Rename(final+".tmp", final)
		clock.Wait(context.Background(), clock.Real, 10*time.Millisecond, helperLife, func() bool {
			_, err := os.Stat(filepath.Join(dir, "stop"))
			return err == nil
		})
		h.Release()
		os.Exit(0)
	}
	os.Exit(2)
}

func spec(t *testing.T, dir, mode string) Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		What:     "test daemon",
		Exe:      exe,
		Args:     []string{"-test.run=^TestHelperProcess$"},
		Env:      []string{helperEnv + "=" + mode, "DAEMON_DIR=" + dir},
		Marker:   "DAEMON_MARK",
		LockPath: filepath.Join(dir, "d.lock"),
		LogPath:  filepath.Join(dir, "d.log"),
	}
}

// startHold starts a helper that holds the lock until the stop file exists,
// and makes sure it is gone when the test ends.
func startHold(t *testing.T, dir string) int {
	t.Helper()
	s := spec(t, dir, "hold")
	pid, err := Start(s)
	if err != nil {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("Start: %v\nlog:\n%s", err, log)
	}
	started, _ := proc.StartTime(pid)
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
		if !WaitExit(s.LockPath, 5*time.Second) && proc.Same(pid, started) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid
}

func TestStartDetachedAndHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pid := startHold(t, dir)
	lock := filepath.Join(dir, "d.lock")
	if !Alive(lock) {
		t.Fatal("Alive = false after Start returned")
	}
	if got := Holder(lock); got != pid {
		t.Fatalf("Holder = %d, want %d", got, pid)
	}
	var report []byte
	eventually(t, "the helper's report", func() bool {
		var err error
		report, err = os.ReadFile(filepath.Join(dir, fmt.Sprintf("report.%d", pid)))
		return err == nil
	})
	for _, want := range []string{"cwd=/\n", "setsid=true\n", "marker=1\n"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report %q lacks %q", report, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
	if !WaitExit(lock, 5*time.Second) {
		t.Fatal("lock still held after the daemon was told to stop")
	}
	if Alive(lock) || Holder(lock) != 0 {
		t.Fatal("Alive/Holder report a daemon after it exited")
	}
	if data, _ := os.ReadFile(lock); len(data) != 0 {
		t.Errorf("lock file still names a pid after release: %q", data)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "d.log"))
	if !strings.Contains(string(log), fmt.Sprintf("helper pid=%d", pid)) {
		t.Errorf("log lacks the daemon's output:\n%s", log)
	}
}

func TestStartChildExits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Start(spec(t, dir, "exit"))
	var ee *ExitedError
	if !errors.As(err, &ee) {
		t.Fatalf("Start = %v, want ExitedError", err)
	}
	if !strings.Contains(err.Error(), "test daemon exited at start (see "+filepath.Join(dir, "d.log")+")") {
		t.Errorf("message %q", err)
	}
}

func TestStartTimeoutKillsChild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := spec(t, dir, "nolock")
	s.Timeout = 300 * time.Millisecond
	_, err := Start(s)
	if err == nil || !strings.Contains(err.Error(), "did not start within 300ms") {
		t.Fatalf("Start = %v", err)
	}
	// A failed start leaves nothing running.
	if pids := helpersIn(dir); len(pids) != 0 {
		t.Fatalf("Start returned with its child still running: %v", pids)
	}
}

// helpersIn lists the live helper processes started with DAEMON_DIR=dir.
func helpersIn(dir string) []int {
	var out []int
	for _, t := range proc.WithEnv("DAEMON_DIR", dir) {
		out = append(out, t.PID)
	}
	return out
}

// HolderTarget names the holder exactly (pid and start time), and nothing
// once the lock is free.
func TestHolderTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pid := startHold(t, dir)
	lock := filepath.Join(dir, "d.lock")
	want, ok := proc.Identify(pid)
	if !ok {
		t.Skip("cannot read the daemon's identity")
	}
	if got, ok := HolderTarget(lock); !ok || got != want {
		t.Fatalf("HolderTarget = %+v %v, want %+v", got, ok, want)
	}
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
	if !WaitExit(lock, 5*time.Second) {
		t.Fatal("lock still held after the daemon was told to stop")
	}
	if got, ok := HolderTarget(lock); ok {
		t.Fatalf("HolderTarget = %+v after the lock was released", got)
	}
}

// A second daemon for a held lock cannot start: exactly one process.
func TestSecondDaemonRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pid := startHold(t, dir)
	_, err := Start(spec(t, dir, "hold"))
	var ee *ExitedError
	if !errors.As(err, &ee) {
		t.Fatalf("second Start = %v, want ExitedError", err)
	}
	if got := Holder(filepath.Join(dir, "d.lock")); got != pid {
		t.Fatalf("Holder = %d, want the first daemon %d", got, pid)
	}
}

// The kernel releases the lock however the daemon dies.
func TestLockReleasedOnKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pid := startHold(t, dir)
	started, ok := proc.StartTime(pid)
	if !ok || !proc.Same(pid, started) {
		t.Skip("cannot confirm the daemon's start time")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if !WaitExit(filepath.Join(dir, "d.lock"), 5*time.Second) {
		t.Fatal("lock still held after SIGKILL")
	}
}

func TestLockInProcess(t *testing.T) {
	t.Parallel()
	lock := filepath.Join(t.TempDir(), "sub", "x.lock")
	if Alive(lock) {
		t.Fatal("Alive before the lock file exists")
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("Alive created the lock file")
	}
	h, err := Lock(lock)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(lock) || Holder(lock) != os.Getpid() {
		t.Fatalf("Alive=%v Holder=%d, want true %d", Alive(lock), Holder(lock), os.Getpid())
	}
	if fi, err := os.Stat(lock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode: %v %v", fi.Mode(), err)
	}
	if _, err := Lock(lock); !errors.Is(err, ErrHeld) {
		t.Fatalf("second Lock = %v, want ErrHeld", err)
	}
	if WaitExit(lock, 50*time.Millisecond) {
		t.Fatal("WaitExit true while held")
	}
	h.Release()
	if !WaitExit(lock, time.Second) {
		t.Fatal("WaitExit false after Release")
	}
}

// Liveness probes take the lock for an instant; Lock must get through them.
func TestLockThroughProbes(t *testing.T) {
	t.Parallel()
	lock := filepath.Join(t.TempDir(), "x.lock")
	os.WriteFile(lock, nil, 0o600)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				Alive(lock)
			}
		}
	}()
	defer close(done)
	for i := 0; i < 20; i++ {
		h, err := Lock(lock)
		if err != nil {
			t.Fatalf("Lock %d under probes: %v", i, err)
		}
		h.Release()
	}
}

func TestChildEnv(t *testing.T) {
	t.Setenv("DAEMON_TEST_DROP", "x")
	t.Setenv("DAEMON_TEST_OVER", "old")
	env := childEnv(Spec{Env: []string{"DAEMON_TEST_OVER=new"}, Unset: []string{"DAEMON_TEST_DROP"}, Marker: "M"})
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, want := range []string{"\nDAEMON_TEST_OVER=new\n", "\nM=1\n"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %q", want)
		}
	}
	for _, bad := range []string{"DAEMON_TEST_DROP=", "DAEMON_TEST_OVER=old"} {
		if strings.Contains(joined, "\n"+bad) {
			t.Errorf("env still has %q", bad)
		}
	}
	t.Setenv("M", "1")
	if !IsDaemon("M") || IsDaemon("") {
		t.Error("IsDaemon")
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.EventuallyEvery(t, what, 10*time.Millisecond, 10*time.Second, cond)
}

func TestStartWaitsForReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := spec(t, dir, "hold")
	calls := 0
	s.Ready = func(pid int) bool {
		calls++
		if Holder(s.LockPath) != pid {
			t.Errorf("Ready(%d) called before the child holds the lock", pid)
		}
		return calls >= 3
	}
	pid, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	started, _ := proc.StartTime(pid)
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
		if !WaitExit(s.LockPath, 5*time.Second) && proc.Same(pid, started) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if calls != 3 {
		t.Fatalf("Ready called %d times, want Start to wait for it (3)", calls)
	}
}

// Start runs what its caller says and nothing else: a spec without a
// program is refused, and nothing is started in its place (this binary
// was, before the command line became the caller's to give).
func TestStartRefusesASpecWithoutAProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := spec(t, dir, "exit")
	s.Exe = ""
	s.Args = []string{"-test.run=^$"}
	if pid, err := Start(s); err == nil || pid != 0 || !strings.Contains(err.Error(), "cannot start the test daemon: no program to run") {
		t.Fatalf("Start without a program = %d, %v", pid, err)
	}
	if _, err := os.Stat(s.LogPath); err == nil {
		t.Error("a log was opened for a daemon that cannot start")
	}
}

// With takes the program, its arguments and the environment entries from
// a Command's answer, after the spec's own entries.
func TestSpecWith(t *testing.T) {
	t.Parallel()
	base := Spec{Env: []string{"SWARM_HOME=/h"}}
	s := base.With([]string{"/bin/swarm", "ralph", "run", "w"}, []string{"MARK=1"})
	if s.Exe != "/bin/swarm" || strings.Join(s.Args, " ") != "ralph run w" || strings.Join(s.Env, " ") != "SWARM_HOME=/h MARK=1" {
		t.Fatalf("With = %q %q %q", s.Exe, s.Args, s.Env)
	}
	if len(base.Env) != 1 {
		t.Fatalf("With changed the spec it was called on: %q", base.Env)
	}
	if s := base.With(nil, nil); s.Exe != "" {
		t.Fatalf("With(nil) gave a program: %q", s.Exe)
	}
}

// A program that cannot be started is an error that keeps its cause: the
// caller can tell a missing program (errors.Is) from other failures.
func TestStartKeepsTheCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := spec(t, dir, "exit")
	s.Exe = filepath.Join(dir, "no-such-program")
	_, err := Start(s)
	if err == nil || !strings.Contains(err.Error(), "cannot start the test daemon: ") {
		t.Fatalf("Start of a missing program = %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Start's error %q lost its cause (errors.Is(err, fs.ErrNotExist) = false)", err)
	}
}
