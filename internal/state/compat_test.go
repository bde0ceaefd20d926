package state

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests check that swarm.py (the Python tool swarm replaces) can read
// the files this package writes, so users can switch back and forth and
// scripts written for swarm.py keep working.

// pythonZone picks the zone for the Python checks: testZone when Python
// knows it (it needs the system's tzdata, which Go does not), else UTC,
// which still checks the format but not the zone handling.
func pythonZone(t *testing.T, python string) string {
	cmd := exec.Command(python, "-c", "import datetime; print(int(datetime.datetime.now().astimezone().utcoffset().total_seconds()))")
	cmd.Env = append(os.Environ(), "TZ="+testZone)
	out, err := cmd.Output()
	if err == nil && strings.TrimSpace(string(out)) == strconv.Itoa(testZoneOffset) {
		return testZone
	}
	t.Logf("python3 does not know zone %s (no tzdata?): checking in UTC only", testZone)
	return "UTC"
}

func needPython(t *testing.T) string {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH: cannot check that swarm.py reads our files")
	}
	return python
}

// setTime sets a time field whichever of the two timestamp types it has.
func setTime(field any, t time.Time) {
	switch f := field.(type) {
	case *Timestamp:
		*f = Timestamp{t}
	case *UTCTimestamp:
		*f = UTCTimestamp{t}
	}
}

// compatExpect is what the Python checker compares the files against: for
// every timestamp, how many seconds before now the test wrote it.
type compatExpect struct {
	Workers   map[string]map[string]int `json:"workers"`
	Ralph     map[string]map[string]int `json:"ralph"`
	StrictUTC bool                      `json:"strict_utc"`
}

// writeCompatState writes, through the Store, the records swarm.py must be
// able to read: a tmux worker without socket, a worker in a worktree, a
// process worker, and loop states with every timestamp set.
func writeCompatState(t *testing.T, root string) compatExpect {
	t.Helper()
	now := time.Now()
	ago := func(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }
	pid := os.Getpid()
	// A whole second: isoformat() then writes no fraction.
	whole := ago(3 * 86400).Truncate(time.Second)
	wholeAge := int(now.Sub(whole).Seconds())
	s := NewStore(root, nil)
	err := s.Update(func(r *Registry) error {
		r.Workers = append(r.Workers,
			Worker{Name: "tmuxw", Status: StatusRunning, Cmd: []string{"claude"}, Started: Timestamp{ago(90)}, Cwd: root,
				Tmux: &TmuxInfo{Session: "swarm-compat", Window: "tmuxw"}, Metadata: map[string]any{"ralph": true, "ralph_iteration": 3}},
			Worker{Name: "treew", Status: StatusStopped, Cmd: []string{"sh", "-c", "echo hi"}, Started: Timestamp{ago(7200)}, Cwd: root,
				Env: map[string]string{"K": "v"}, Tags: []string{"team-a"},
				Tmux:     &TmuxInfo{Session: "swarm-compat", Window: "treew", Socket: "swarm-compat-sock"},
				Worktree: &WorktreeInfo{Path: filepath.Join(root, "wt"), Branch: "treew", BaseRepo: root}},
			Worker{Name: "procw", Status: StatusRunning, Cmd: []string{"sleep", "1"}, Started: Timestamp{whole}, Cwd: root, PID: &pid},
			Worker{Name: goldenName, Status: StatusStopped, Cmd: []string{"claude"}, Started: Timestamp{ago(600)}, Cwd: root,
				Tmux: &TmuxInfo{Session: "swarm-compat", Window: goldenName}, Metadata: map[string]any{"ralph": true, "ralph_iteration": 7}},
		)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exit := 0
	loops := map[string]RalphStatus{"tmuxw": RalphRunning, "treew": RalphStopped}
	for name, status := range loops {
		st := &Ralph{
			LoopConfig: LoopConfig{WorkerName: name, PromptFile: filepath.Join(root, "PROMPT.md"), MaxIterations: 10,
				DonePattern: "ALL DONE", InactivityTimeout: WholeSeconds{180 * time.Second}},
			LoopProgress: LoopProgress{CurrentIteration: 3, Status: status, IterationDurations: []float64{60.5, 120},
				LastExitCode: &exit, MonitorPID: pid, Started: Timestamp{ago(3600)},
				LastIterationStart: Timestamp{ago(300)}, LastIterationEnd: Timestamp{ago(360)}},
		}
		setTime(&st.LastScreenChange, ago(30))
		if status == RalphStopped {
			st.ExitReason = "max_iterations"
		}
		if err := s.Ralph(name).Create(st); err != nil {
			t.Fatal(err)
		}
	}
	_, strict := any(Ralph{}.LastScreenChange).(UTCTimestamp)
	times := map[string]int{"started": 3600, "last_iteration_started": 300, "last_iteration_ended": 360, "last_screen_change": 30}
	return compatExpect{
		Workers: map[string]map[string]int{"tmuxw": {"started": 90}, "treew": {"started": 7200}, "procw": {"started": wholeAge},
			goldenName: {"started": 600}},
		Ralph:     map[string]map[string]int{"tmuxw": times, "treew": times, goldenName: writeGoldenLoop(t, s)},
		StrictUTC: strict,
	}
}

// writeGoldenLoop puts the golden loop state (every field set) into the
// store, rewritten by a read-modify-write that changes nothing, and returns
// the ages of its timestamps.
func writeGoldenLoop(t *testing.T, s *Store) map[string]int {
	t.Helper()
	installGolden(t, s.Root)
	st, err := s.Ralph(goldenName).Update(func(*Ralph) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	age := func(at time.Time) int { return int(time.Since(at).Seconds()) }
	return map[string]int{"started": age(st.Started.Time), "last_iteration_started": age(st.LastIterationStart.Time),
		"last_iteration_ended": age(st.LastIterationEnd.Time), "last_screen_change": age(st.LastScreenChange.Time)}
}

// TestPythonReadsOurFiles writes state through this package and reads it
// back with a script that repeats swarm.py's loading and date arithmetic
// (testdata/swarmpy_load.py), in a zone that is not UTC.
func TestPythonReadsOurFiles(t *testing.T) {
	python := needPython(t)
	if os.Getenv(zoneChildEnv) == "" {
		if !inZone(t, pythonZone(t, python)) {
			return
		}
	}
	root := t.TempDir()
	expect := writeCompatState(t, root)
	if !expect.StrictUTC {
		t.Log("Ralph.LastScreenChange is not a UTCTimestamp yet: its zone is checked as a warning only")
	}
	expPath := filepath.Join(t.TempDir(), "expect.json")
	data, _ := json.Marshal(expect)
	if err := os.WriteFile(expPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, filepath.Join("testdata", "swarmpy_load.py"), root, expPath).CombinedOutput()
	t.Logf("swarmpy_load.py:\n%s", out)
	if err != nil {
		t.Fatalf("swarm.py's way of reading our files fails: %v", err)
	}
}

// TestRealSwarmPyReadsOurFiles imports swarm.py itself, from the checkout
// named by $SWARMPY_REPO, and runs its readers and its ls, status and ralph
// status commands on our files. CI does not have swarm.py, so this runs only
// when the variable is set.
func TestRealSwarmPyReadsOurFiles(t *testing.T) {
	repo := os.Getenv("SWARMPY_REPO")
	if repo == "" {
		t.Skip("SWARMPY_REPO not set: set it to a swarm.py checkout to run swarm.py's own readers on our files")
	}
	python := needPython(t)
	script := filepath.Join(repo, "swarm.py")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("SWARMPY_REPO=%s: %v", repo, err)
	}
	if os.Getenv(zoneChildEnv) == "" {
		if !inZone(t, pythonZone(t, python)) {
			return
		}
	}
	root := t.TempDir()
	writeCompatState(t, root)
	cmd := exec.Command(python, filepath.Join("testdata", "swarmpy_real.py"), script,
		"tmuxw", "treew", "procw", goldenName, "--", "tmuxw", "treew", goldenName)
	// swarm.py asks tmux whether the workers' windows exist: give it a
	// tmux directory of its own so it never talks to the user's server.
	cmd.Env = append(os.Environ(), "SWARM_DIR="+root, "TMUX_TMPDIR="+t.TempDir(), "TMUX=")
	out, err := cmd.CombinedOutput()
	t.Logf("swarmpy_real.py:\n%s", out)
	if err != nil {
		t.Fatalf("swarm.py fails on our files: %v", err)
	}
}
