package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// superviseArg makes the test binary a supervisor (TestMain), as swarm
// _supervise makes swarm one: "BIN superviseArg EXITFILE PATH ARGV...".
// The supervisor writes "CODE PID TICKS" to EXITFILE when the command ends.
const superviseArg = "-proc-test-supervise"

func runSupervisor(exitFile, path string, argv []string) {
	end, err := Supervise(path, argv)
	if err != nil {
		return
	}
	os.WriteFile(exitFile, fmt.Appendf(nil, "%d %d %d", end.Code, end.Target.PID, end.Target.Ticks), 0o600)
}

// A supervised command is the Target Spawn returns (not its supervisor),
// with its own argv; its exit status reaches the supervisor, and so does
// a death by signal when TerminateTarget stops the command's tree, of
// which the supervisor is not part.
func TestSpawnSupervised(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spawn := func(name string, argv ...string) (Target, string) {
		t.Helper()
		exitFile := filepath.Join(dir, name+".exit")
		tg, err := Spawn(StartSpec{
			Command: argv, Dir: dir, Env: os.Environ(),
			Stdout: filepath.Join(dir, name+".out"), Stderr: filepath.Join(dir, name+".err"),
			Supervisor: []string{os.Args[0], superviseArg, exitFile},
		})
		if err != nil {
			t.Fatal(err)
		}
		return tg, exitFile
	}
	ended := func(exitFile string) string {
		t.Helper()
		var got string
		testenv.Eventually(t, "the supervisor to record the end", 10*time.Second, func() bool {
			b, err := os.ReadFile(exitFile)
			got = string(b)
			return err == nil && got != ""
		})
		return got
	}

	tg, exitFile := spawn("three", "sh", "-c", "echo out; exit 3")
	if got, want := ended(exitFile), fmt.Sprintf("3 %d %d", tg.PID, tg.Ticks); got != want {
		t.Errorf("recorded end %q, want %q", got, want)
	}
	testenv.Eventually(t, "the output", 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "three.out"))
		return string(b) == "out\n"
	})

	tg, exitFile = spawn("sleeper", "sleep", "300")
	// The target may still be between its fork and its exec (an empty
	// or the supervisor's argv): wait for sleep's.
	testenv.Eventually(t, "the target's argv to be sleep's", 10*time.Second, func() bool {
		data, _ := os.ReadFile("/proc/" + strconv.Itoa(tg.PID) + "/cmdline")
		return string(data) == "sleep\x00300\x00"
	})
	st, ok := readStat(tg.PID)
	if !ok || st.session != tg.PID || !tg.Alive() {
		t.Fatalf("the command does not lead a session of its own: %+v", st)
	}
	if !TerminateTarget(tg, 5*time.Second) {
		t.Fatal("nothing signalled")
	}
	if got := ended(exitFile); !strings.HasPrefix(got, "143 ") {
		t.Errorf("recorded end of a command stopped by SIGTERM: %q, want 143", got)
	}

	// A command the supervisor cannot start (its interpreter is missing):
	// the supervisor's error is Spawn's.
	bad := filepath.Join(dir, "bad")
	testenv.WriteExecutable(t, bad, "#!/nonexistent/interpreter\n")
	_, err := Spawn(StartSpec{
		Command: []string{bad}, Dir: dir, Env: os.Environ(),
		Stdout: filepath.Join(dir, "bad.out"), Stderr: filepath.Join(dir, "bad.err"),
		Supervisor: []string{os.Args[0], superviseArg, filepath.Join(dir, "bad.exit")},
	})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a command the supervisor cannot start: error %v", err)
	}
}

// A supervisor whose spawner died before it said go starts nothing: the
// rollback of that spawn may not have seen the supervisor, so nothing it
// starts would be found.
func TestSuperviseWaitsForTheGoAhead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	report, reportW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer report.Close()
	goR, goW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], superviseArg, filepath.Join(dir, "exit"), "/bin/sh", "sh", "-c", "touch "+marker)
	cmd.ExtraFiles = []*os.File{reportW, goR} // descriptors 3 and 4
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reportW.Close()
	goR.Close()
	goW.Close() // the spawner is gone: no go-ahead
	if err := cmd.Wait(); err != nil {
		t.Fatalf("supervisor: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the supervisor started the command without the go-ahead")
	}
	if data, _ := io.ReadAll(report); len(data) != 0 {
		t.Errorf("the supervisor reported %q", data)
	}
}
