package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The stress test: stressGoroutines writers in this process and
// stressProcs processes of stressProcWriters writers each (this test
// binary run again) do locked read-modify-writes of state.json and of one
// loop's state until a common deadline. Every writer increments its own
// counter, in its worker record and in its entry of the loop's tasks_done,
// and counts its successful updates; at the end every counter must equal
// its writer's count (no lost update). A reader in each process meanwhile
// checks that every read sees a whole file, and no temp file may be left.
const (
	stressGoroutines  = 50
	stressProcs       = 3
	stressProcWriters = 4
	stressDuration    = 2500 * time.Millisecond
	stressLoop        = "stress"

	stressRootEnv  = "SWARM_STATE_STRESS_ROOT"
	stressIDEnv    = "SWARM_STATE_STRESS_ID"
	stressUntilEnv = "SWARM_STATE_STRESS_UNTIL"
	stressResult   = "STRESS-RESULT "
)

// stressCounts maps a writer's id to its numbers of successful updates of
// state.json and of the loop state.
type stressCounts map[string][2]int

func TestStressConcurrentReadModifyWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	root := t.TempDir()
	if err := NewStore(root, nil).Ralph(stressLoop).Create(&Ralph{LoopConfig: LoopConfig{WorkerName: stressLoop, PromptFile: "/p"}, LoopProgress: LoopProgress{Status: RalphRunning}}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(stressDuration)
	procs := startStressProcs(t, root, until)
	ids := make([]string, stressGoroutines)
	for i := range ids {
		ids[i] = fmt.Sprintf("g%d", i)
	}
	counts, problems := runStress(root, ids, until)
	for _, p := range problems {
		t.Error(p)
	}
	for _, p := range procs {
		for id, c := range waitStressProc(t, p) {
			counts[id] = c
		}
	}
	checkStressCounts(t, root, counts, stressGoroutines+stressProcs*stressProcWriters)
	noTemps(t, root, NewStore(root, nil).Ralph(stressLoop).Dir)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".corrupted") || strings.Contains(e.Name(), rejectedSuffix) {
			t.Errorf("%s: a writer saw a bad file", e.Name())
		}
	}
}

// TestStressHelperProcess is one of the processes of the stress test. It
// runs only when that test starts it.
func TestStressHelperProcess(t *testing.T) {
	root, id := os.Getenv(stressRootEnv), os.Getenv(stressIDEnv)
	if root == "" {
		t.Skip("a helper process of TestStressConcurrentReadModifyWrite")
	}
	ns, err := strconv.ParseInt(os.Getenv(stressUntilEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, stressProcWriters)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", id, i)
	}
	counts, problems := runStress(root, ids, time.Unix(0, ns))
	for _, p := range problems {
		t.Error(p)
	}
	out, _ := json.Marshal(counts)
	fmt.Printf("\n%s%s\n", stressResult, out)
}

func startStressProcs(t *testing.T, root string, until time.Time) []*exec.Cmd {
	t.Helper()
	var procs []*exec.Cmd
	for i := 0; i < stressProcs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStressHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), stressRootEnv+"="+root, stressIDEnv+"="+fmt.Sprintf("p%d", i),
			stressUntilEnv+"="+strconv.FormatInt(until.UnixNano(), 10))
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	return procs
}

func waitStressProc(t *testing.T, cmd *exec.Cmd) stressCounts {
	t.Helper()
	err := cmd.Wait()
	out := cmd.Stdout.(*bytes.Buffer).String()
	if err != nil {
		t.Fatalf("helper process: %v\n%s%s", err, out, cmd.Stderr.(*bytes.Buffer))
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), stressResult); ok {
			var c stressCounts
			if err := json.Unmarshal([]byte(rest), &c); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("helper process printed no result:\n%s", out)
	return nil
}

// runStress runs one writer per id and one reader until the deadline, and
// returns the writers' counts and every problem seen.
func runStress(root string, ids []string, until time.Time) (stressCounts, []string) {
	var mu sync.Mutex
	counts := stressCounts{}
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := stressWriter(root, id, until, problem)
			mu.Lock()
			counts[id] = c
			mu.Unlock()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		stressReader(root, until, problem)
	}()
	wg.Wait()
	return counts, problems
}

// stressWriter increments its own counters until the deadline. Each update
// goes through a Store of its own, with its own lock descriptor, as
// separate commands do.
func stressWriter(root, id string, until time.Time, problem func(string, ...any)) [2]int {
	warn := func(m string) { problem("writer %s warned: %s", id, m) }
	var n [2]int
	for time.Now().Before(until) {
		s := NewStore(root, warn)
		err := s.Update(func(r *Registry) error {
			w := r.Find(id)
			if w == nil {
				r.Workers = append(r.Workers, Worker{Name: id, Status: StatusRunning, Started: Now()})
				w = &r.Workers[len(r.Workers)-1]
			}
			if w.Metadata == nil {
				w.Metadata = map[string]any{}
			}
			c, _ := w.Metadata["count"].(float64)
			w.Metadata["count"] = c + 1
			return nil
		})
		if err != nil {
			problem("writer %s: %v", id, err)
			return n
		}
		n[0]++
		_, err = s.Ralph(stressLoop).Update(func(st *Ralph) error {
			for i := range st.TasksDone {
				if st.TasksDone[i].ID == id {
					st.TasksDone[i].Iteration++
					return nil
				}
			}
			st.TasksDone = append(st.TasksDone, TaskDone{ID: id, Iteration: 1})
			return nil
		})
		if err != nil {
			problem("writer %s: ralph: %v", id, err)
			return n
		}
		n[1]++
	}
	return n
}

// stressReader reads both files without a lock until the deadline: every
// read must see a whole, valid file.
func stressReader(root string, until time.Time, problem func(string, ...any)) {
	s := NewStore(root, func(m string) { problem("reader warned: %s", m) })
	rs := s.Ralph(stressLoop)
	for time.Now().Before(until) {
		for _, path := range []string{s.statePath(), rs.StatePath()} {
			data, _, err := readIfExists(path)
			if err != nil || (len(data) > 0 && !json.Valid(data)) {
				problem("torn read of %s: %v\n%s", path, err, data)
			}
		}
		if _, err := s.Load(); err != nil {
			problem("Load: %v", err)
		}
		if _, err := rs.Load(); err != nil {
			problem("ralph Load: %v", err)
		}
	}
}

// checkStressCounts compares the files with the writers' counts.
func checkStressCounts(t *testing.T, root string, counts stressCounts, writers int) {
	t.Helper()
	if len(counts) != writers {
		t.Errorf("%d writers reported, want %d", len(counts), writers)
	}
	s := NewStore(root, func(m string) { t.Errorf("warning: %s", m) })
	reg, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Ralph(stressLoop).Load()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for id, c := range counts {
		got := 0.0
		if w := reg.Find(id); w != nil {
			got, _ = w.Metadata["count"].(float64)
		}
		if int(got) != c[0] {
			t.Errorf("%s: state.json count %v, writer made %d updates", id, got, c[0])
		}
		gotRalph := 0
		for _, td := range st.TasksDone {
			if td.ID == id {
				gotRalph = td.Iteration
			}
		}
		if gotRalph != c[1] {
			t.Errorf("%s: ralph count %d, writer made %d updates", id, gotRalph, c[1])
		}
		total += c[0] + c[1]
	}
	if total < writers {
		t.Errorf("only %d updates in all: the test did not stress anything", total)
	}
	t.Logf("%d writers made %d updates", len(counts), total)
}
