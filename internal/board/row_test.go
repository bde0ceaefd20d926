package board

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// fixedNow is the time of the fixture board.
var fixedNow = time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)

func ts(d time.Duration) state.Timestamp { return state.Timestamp{Time: fixedNow.Add(-d)} }

func tmuxWorker(name, status string, started time.Duration, tags ...string) worker.Live {
	return worker.Live{Worker: state.Worker{Name: name, Status: status, Started: ts(started), Tags: tags,
		Tmux: &state.TmuxInfo{Session: "swarm-x", Window: name}}}
}

// loop returns a loop's figures as ralph.ListLoops computes them.
func loop(name string, status state.RalphStatus, alive bool, mod func(*state.Ralph, *ralph.Info)) *ralph.Info {
	st := &state.Ralph{LoopConfig: state.LoopConfig{WorkerName: name, MaxIterations: 10, InactivityTimeout: state.WholeSeconds{Duration: 3 * time.Minute}},
		LoopProgress: state.LoopProgress{Status: status, CurrentIteration: 1, Started: ts(time.Hour), MonitorPID: 4242}}
	in := &ralph.Info{State: st, MonitorAlive: alive, Elapsed: 3600}
	if mod != nil {
		mod(st, in)
	}
	return in
}

// fixture is a board with a row of every kind and group.
func fixture() ([]worker.Live, []*ralph.Info) {
	pid := 77
	crash := tmuxWorker("crash", state.StatusStopped, time.Hour)
	crash.PaneDead, crash.HasExit, crash.ExitCode = true, true, 2
	live := []worker.Live{
		tmuxWorker("web", state.StatusRunning, 5*time.Minute, "team-a"),
		{Worker: state.Worker{Name: "batch", Status: state.StatusStopped, PID: &pid, Started: ts(time.Hour)}, HasExit: true, ExitCode: 3},
		tmuxWorker("build", state.StatusRunning, time.Hour, "team-a", "ci"),
		crash,
		tmuxWorker("zombie", state.StatusStopped, time.Hour),
		tmuxWorker("sleepy", state.StatusRunning, time.Hour),
		tmuxWorker("limit", state.StatusRunning, time.Hour),
		tmuxWorker("held", state.StatusRunning, time.Hour, "team-b"),
		tmuxWorker("done", state.StatusStopped, time.Hour),
	}
	loops := []*ralph.Info{
		loop("build", state.RalphRunning, true, func(st *state.Ralph, in *ralph.Info) {
			st.CurrentIteration, st.IterationActive = 3, true
			st.LastScreenChange = state.UTCTimestamp{Time: fixedNow.Add(-12 * time.Second)}
			st.ConsecutiveFailures, st.TotalFailures = 1, 2
			cost := 1.2345
			st.CostUSD = &cost
			in.Elapsed, in.AvgIteration, in.ETA, in.QuietFor = 200, 60, 450, 12
		}),
		loop("broke", state.RalphFailed, false, func(st *state.Ralph, in *ralph.Info) {
			st.CurrentIteration, st.MaxIterations, st.ExitReason = 2, 50, ralph.ReasonFailed
			st.ConsecutiveFailures, st.TotalFailures = 1, 1
			in.Elapsed = 5
		}),
		loop("zombie", state.RalphRunning, false, nil),
		loop("sleepy", state.RalphRunning, true, func(st *state.Ralph, in *ralph.Info) {
			st.IterationActive = true
			st.LastScreenChange = state.UTCTimestamp{Time: fixedNow.Add(-300 * time.Second)}
			in.QuietFor = 300
		}),
		loop("limit", state.RalphWaiting, true, nil),
		loop("held", state.RalphPaused, true, nil),
		loop("done", state.RalphStopped, false, func(st *state.Ralph, in *ralph.Info) {
			st.CurrentIteration, st.ExitReason = 4, ralph.ReasonComplete
		}),
	}
	return live, loops
}

func names(rows []Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Name)
	}
	return out
}

func TestBuildOneRowPerWorkerAndOrphanLoop(t *testing.T) {
	live, loops := fixture()
	rows := Build(live, loops, fixedNow)
	if len(rows) != len(live)+1 {
		t.Fatalf("%d rows, want %d (workers + the loop without a worker): %q", len(rows), len(live)+1, names(rows))
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	cells := map[string]string{
		// the loop whose worker record is gone
		"broke": "broke loop failed 2/50 5s - - - 1/1 - failed -",
		"web":   "web tmux running - 5m 0s - - - - - - team-a",
		// a process worker's exit code, recorded by its supervisor
		"batch": "batch process stopped - - - - - - - exit 3 -",
		"crash": "crash tmux stopped - - - - - - - exit 2 -",
		// what its agents reported spending
		"build": "build loop running 3/10 3m 20s 7m 30s 12s 4242 1/2 $1.2345 - team-a,ci",
		// an active loop without a monitor
		"zombie": "zombie loop running 1/10 1h 0m - - dead 0/0 - - -",
		"done":   "done loop stopped 4/10 1h 0m - - - 0/0 - complete -",
	}
	for name, want := range cells {
		if got := strings.Join(byName[name].Cells(), " "); got != want {
			t.Errorf("cells of %s\n got %q\nwant %q", name, got, want)
		}
	}
	groups := map[string]Group{"broke": GroupFailed, "zombie": GroupDeadMonitor, "sleepy": GroupQuiet,
		"limit": GroupWaiting, "held": GroupPaused, "build": GroupRunning, "web": GroupRunning, "batch": GroupRest, "done": GroupRest}
	for name, want := range groups {
		if got := byName[name].Group; got != want {
			t.Errorf("group of %s: %d, want %d", name, got, want)
		}
	}
	// Whether a loop has ended shows in its status and group above: done
	// (stopped) is in the rest, held (paused, not ended) a problem, zombie
	// (running, not ended, no monitor) a dead monitor.
	if byName["broke"].HasWorker || !byName["web"].HasWorker || !byName["build"].HasWorker {
		t.Errorf("HasWorker wrong: %+v", byName)
	}
	// A loop's row, with or without its worker record, and only a loop's.
	for name, want := range map[string]bool{"broke": true, "build": true, "done": true, "held": true,
		"web": false, "batch": false, "crash": false} {
		if got := byName[name].IsLoop(); got != want {
			t.Errorf("IsLoop of %s: %v, want %v", name, got, want)
		}
	}
}

// A loop made with --no-run has no monitor yet, and that is no problem.
func TestNotStartedLoopIsNoProblem(t *testing.T) {
	in := loop("later", state.RalphRunning, false, func(st *state.Ralph, in *ralph.Info) {
		st.CurrentIteration, in.NotStarted = 0, true
	})
	r := Build(nil, []*ralph.Info{in}, fixedNow)[0]
	if r.Group != GroupRest || r.Status != "not-started" || r.Monitor != "-" {
		t.Errorf("not started loop: group %d, status %q, monitor %q", r.Group, r.Status, r.Monitor)
	}
}

func TestSortProblemsFirstThenRunningThenRest(t *testing.T) {
	live, loops := fixture()
	rows := Build(live, loops, fixedNow)
	Sort(rows)
	want := []string{"broke", "zombie", "sleepy", "limit", "held", "build", "web", "batch", "crash", "done"}
	if got := names(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
	var problems []string
	for _, r := range rows {
		if r.Group.Problem() {
			problems = append(problems, r.Name)
		}
	}
	if want := []string{"broke", "zombie", "sleepy", "limit", "held"}; !reflect.DeepEqual(problems, want) {
		t.Errorf("problems\n got %q\nwant %q", problems, want)
	}
	problem := map[Group]bool{GroupFailed: true, GroupDeadMonitor: true, GroupQuiet: true, GroupWaiting: true,
		GroupPaused: true, GroupRunning: false, GroupRest: false}
	for g, want := range problem {
		if g.Problem() != want {
			t.Errorf("group %d: Problem() %v, want %v", g, g.Problem(), want)
		}
	}
}

func TestQuietNeedsAnActiveIterationOverTheTimeout(t *testing.T) {
	cases := []struct {
		quiet, timeout float64
		active         bool
		want           Group
	}{
		{300, 180, true, GroupQuiet},
		{180, 180, true, GroupRunning}, // at the timeout the monitor acts now
		{300, 180, false, GroupRunning},
		{300, 0, true, GroupRunning},
	}
	for _, c := range cases {
		in := loop("q", state.RalphRunning, true, func(st *state.Ralph, in *ralph.Info) {
			st.IterationActive, st.InactivityTimeout = c.active, state.WholeSeconds{Duration: time.Duration(c.timeout) * time.Second}
			st.LastScreenChange = state.UTCTimestamp{Time: fixedNow}
			in.QuietFor = c.quiet
		})
		rows := Build(nil, []*ralph.Info{in}, fixedNow)
		if rows[0].Group != c.want {
			t.Errorf("quiet %vs, timeout %vs, iteration active %v: group %d, want %d", c.quiet, c.timeout, c.active, rows[0].Group, c.want)
		}
	}
}

func TestFilterByNameOrTagIgnoringCase(t *testing.T) {
	live, loops := fixture()
	rows := Build(live, loops, fixedNow)
	Sort(rows)
	cases := map[string][]string{
		"":       names(rows),
		"TEAM-A": {"build", "web"},
		"ui":     {"build"},                                            // "bUIld"
		"b":      {"broke", "zombie", "held", "build", "web", "batch"}, // held by its tag team-b
		"nope":   nil,
	}
	for q, want := range cases {
		if got := names(Filter(rows, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("filter %q: %q, want %q", q, got, want)
		}
	}
}

func TestWritePlainIsAnAlignedTableWithoutEscapes(t *testing.T) {
	live, loops := fixture()
	var b bytes.Buffer
	if err := WritePlain(&b, Prepare(Snapshot{Live: live, Loops: loops, At: fixedNow})); err != nil {
		t.Fatal(err)
	}
	want := `NAME    KIND     STATUS   ITER  ELAPSED  ETA     QUIET  MONITOR  FAILS  COST     REASON    TAG
broke   loop     failed   2/50  5s       -       -      -        1/1    -        failed    -
zombie  loop     running  1/10  1h 0m    -       -      dead     0/0    -        -         -
sleepy  loop     running  1/10  1h 0m    -       5m 0s  4242     0/0    -        -         -
limit   loop     waiting  1/10  1h 0m    -       -      4242     0/0    -        -         -
held    loop     paused   1/10  1h 0m    -       -      4242     0/0    -        -         team-b
build   loop     running  3/10  3m 20s   7m 30s  12s    4242     1/2    $1.2345  -         team-a,ci
web     tmux     running  -     5m 0s    -       -      -        -      -        -         team-a
batch   process  stopped  -     -        -       -      -        -      -        exit 3    -
crash   tmux     stopped  -     -        -       -      -        -      -        exit 2    -
done    loop     stopped  4/10  1h 0m    -       -      -        0/0    -        complete  -
`
	if got := b.String(); got != want {
		t.Errorf("plain board\n got:\n%s\nwant:\n%s", got, want)
	}
	if strings.ContainsRune(b.String(), '\x1b') {
		t.Error("plain board has escape sequences")
	}
}

func TestWritePlainEmptyBoardPrintsTheHeader(t *testing.T) {
	var b bytes.Buffer
	WritePlain(&b, nil)
	if got := b.String(); got != strings.Join(Columns, "  ")+"\n" {
		t.Errorf("empty board: %q", got)
	}
}

// asking returns the fixture with a BLOCKED and a DECIDE loop added (their
// workers gone), whose texts carry what an agent may print.
func asking() ([]worker.Live, []*ralph.Info) {
	live, loops := fixture()
	ended := func(name string, reason state.ExitReason, detail string) *ralph.Info {
		return loop(name, state.RalphStopped, false, func(st *state.Ralph, in *ralph.Info) {
			st.CurrentIteration, st.ExitReason, st.ExitDetail = 3, reason, state.NullString(detail)
		})
	}
	return live, append(loops,
		ended("stuck", ralph.ReasonBlocked, "need the \x1b[1mAPI key\x1b[0m\nfor staging"),
		ended("choose", ralph.ReasonDecide, "Postgres or SQLite?"))
}

// BLOCKED and DECIDE loops have ended, but wait for a human: they are
// problems, right after the failed ones, with their reason or question.
func TestBlockedAndDecideLoopsAreProblems(t *testing.T) {
	live, loops := asking()
	rows := Prepare(Snapshot{Live: live, Loops: loops, At: fixedNow})
	want := []string{"broke", "choose", "stuck", "zombie", "sleepy", "limit", "held", "build", "web", "batch", "crash", "done"}
	if got := names(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
	details := map[string]string{
		"stuck":  "blocked: need the API key for staging",
		"choose": "question: Postgres or SQLite?",
		"done":   "", "broke": "", "build": "",
	}
	for _, r := range rows {
		want, ok := details[r.Name]
		if !ok {
			continue
		}
		if r.Detail != want {
			t.Errorf("detail of %s: %q, want %q", r.Name, r.Detail, want)
		}
		if r.Name == "stuck" || r.Name == "choose" {
			if !r.Group.Problem() || r.Group != GroupAsks || !r.Ended {
				t.Errorf("%s: group %d (problem %v), ended %v", r.Name, r.Group, r.Group.Problem(), r.Ended)
			}
		}
	}
}

// The live board cuts long cells to fit the screen, with an ellipsis;
// --once cuts nothing.
func TestTableCutsLongColumnsToTheScreen(t *testing.T) {
	long := Row{Name: "a-worker-with-a-rather-long-name", Kind: KindTmux, Status: "running", Monitor: "-",
		Tags: []string{"frontend", "nightly", "experiment-42"}, HasWorker: true}
	short := Row{Name: "w", Kind: KindProcess, Status: "stopped", Monitor: "-", HasWorker: true}
	rows := []Row{long, short}
	full := table(rows, 0)
	if !strings.Contains(full[1], long.Name) || !strings.Contains(full[1], "experiment-42") || strings.Contains(strings.Join(full, ""), ellipsis) {
		t.Errorf("uncut table:\n%s", strings.Join(full, "\n"))
	}
	const width = 90
	cut := table(rows, width)
	for _, l := range cut {
		if w := lipgloss.Width(l); w > width {
			t.Errorf("line of %d cells, wider than %d: %q", w, width, l)
		}
	}
	if f := strings.Fields(cut[1]); !strings.HasSuffix(f[0], ellipsis) || !strings.HasPrefix(long.Name, strings.TrimSuffix(f[0], ellipsis)) {
		t.Errorf("long name not cut with an ellipsis: %q", cut[1])
	}
	// The columns stay aligned: KIND starts at the same place on every line.
	at := strings.Index(cut[0], "KIND")
	for _, l := range cut[1:] {
		if !strings.HasPrefix(string([]rune(l)[at:]), "tmux") && !strings.HasPrefix(string([]rune(l)[at:]), "process") {
			t.Errorf("KIND not at column %d: %q", at, l)
		}
	}
}
