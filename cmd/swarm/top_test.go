package main

// swarm top: --once in-process on state files written with the state
// package, and the live board inside a real tmux.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// topSeed writes a state root with three workers and two loops: broken
// (failed), builder (running, its monitor gone) and alpha (a plain tmux
// worker). Their tmux socket has no server, so every worker reads stopped.
func topSeed(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	st := state.NewStore(home, func(w string) { t.Errorf("warning: %s", w) })
	started := state.Timestamp{Time: time.Now().Add(-time.Hour)}
	socket := state.NullString(fmt.Sprintf("swarm-top-none-%d", os.Getpid()))
	tmuxAt := func(n string) *state.TmuxInfo { return &state.TmuxInfo{Session: "s", Window: n, Socket: socket} }
	err := st.Update(func(r *state.Registry) error {
		r.Workers = append(r.Workers,
			state.Worker{Name: "alpha", Status: "running", Cmd: []string{"sh"}, Started: started, Tmux: tmuxAt("alpha"), Tags: []string{"team-a"}},
			state.Worker{Name: "builder", Status: "running", Cmd: []string{"agent"}, Started: started, Tmux: tmuxAt("builder"),
				Metadata: map[string]any{"ralph": true}},
			state.Worker{Name: "broken", Status: "running", Cmd: []string{"agent"}, Started: started, Tmux: tmuxAt("broken"),
				Metadata: map[string]any{"ralph": true}, Tags: []string{"team-b"}},
		)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	loops := []*state.Ralph{
		{LoopConfig: state.LoopConfig{WorkerName: "builder", MaxIterations: 10, InactivityTimeout: state.WholeSeconds{Duration: 3 * time.Minute}},
			LoopProgress: state.LoopProgress{Status: state.RalphRunning, CurrentIteration: 2,
				Started: started, IterationDurations: []float64{60}}},
		{LoopConfig: state.LoopConfig{WorkerName: "broken", MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: 3 * time.Minute}},
			LoopProgress: state.LoopProgress{Status: state.RalphFailed, CurrentIteration: 3,
				Started: started, LastIterationEnd: state.Timestamp{Time: started.Add(10 * time.Minute)},
				ConsecutiveFailures: 2, TotalFailures: 4, ExitReason: "failed"}},
	}
	for _, l := range loops {
		if err := st.Ralph(l.WorkerName).Create(l); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestTopOncePrintsProblemsFirst(t *testing.T) {
	t.Parallel()
	testenv.RequireTmux(t)
	home := topSeed(t)
	var out, errb bytes.Buffer
	code := execute(newFactory(&IO{In: strings.NewReader(""), Out: &out, Err: &errb}, home), []string{"top", "--once"})
	if code != 0 || errb.String() != "" {
		t.Fatalf("swarm top --once: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if strings.ContainsRune(out.String(), '\x1b') {
		t.Errorf("escape sequences in --once output: %q", out.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^NAME +KIND +STATUS +ITER +ELAPSED +ETA +QUIET +MONITOR +FAILS +COST +REASON +TAG$`),
		regexp.MustCompile(`^broken +loop +failed +3/5 +10m 0s +- +- +- +2/4 +- +failed +team-b$`),
		// running, but no monitor drives it: a problem, lost (as ls
		// says), with no ETA
		regexp.MustCompile(`^builder +loop +running\(lost\) +2/10 +1h 0m +- +- +dead +0/0 +- +- +-$`),
		// its window gone with its tmux server: lost, as ls says
		regexp.MustCompile(`^alpha +tmux +stopped\(lost\) +- +- +- +- +- +- +- +- +team-a$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
}

func TestTopNeedsATerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var out, errb bytes.Buffer
	code := execute(newFactory(&IO{In: strings.NewReader(""), Out: &out, Err: &errb}, home), []string{"top"})
	if want := "swarm: error: swarm top needs a terminal (use --once for plain text)\n"; code != 1 || errb.String() != want || out.String() != "" {
		t.Errorf("swarm top without a terminal: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestTopOptions(t *testing.T) {
	t.Parallel()
	o := ipParse(t, newCmdTop)
	if o.Interval != 2*time.Second || o.Once || o.Root == nil {
		t.Errorf("defaults: %+v", o)
	}
	o = ipParse(t, newCmdTop, "--interval", "500ms", "--once")
	if o.Interval != 500*time.Millisecond || !o.Once {
		t.Errorf("--interval 500ms --once: %+v", o)
	}
}

// topBoard is swarm top running in a session of the env's tmux server.
type topBoard struct {
	t *testing.T
	e *testenv.Env
}

const (
	// topSession is the board's own session on the env's server.
	topSession = "board"
	// topWidth and topHeight fit every column and row of the test.
	topWidth  = "160"
	topHeight = "30"
)

func topStart(t *testing.T, e *testenv.Env) *topBoard {
	t.Helper()
	// The shell reports how top exited and keeps the pane for reading it.
	script := fmt.Sprintf("env SWARM_HOME=%s SWARM_TMUX_SOCKET=%s %s top --interval 200ms; echo top-exit=$?; sleep 600",
		wkShellQuote(e.Home), wkShellQuote(e.Socket), wkShellQuote(e.Swarm))
	if out, err := e.Tmux("new-session", "-d", "-s", topSession, "-x", topWidth, "-y", topHeight, "-c", e.Dir, script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return &topBoard{t: t, e: e}
}

func (b *topBoard) screen() string {
	out, _ := b.e.Tmux("capture-pane", "-p", "-t", topSession+":0")
	return out
}

// lines returns the board's non-empty lines.
func (b *topBoard) lines() []string {
	var out []string
	for _, l := range strings.Split(b.screen(), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// rows returns the names in the board's table, in order.
func (b *topBoard) rows() []string {
	lines := b.lines()
	var names []string
	for i, l := range lines {
		if !strings.HasPrefix(l, "NAME ") {
			continue
		}
		for _, r := range lines[i+1:] {
			if strings.HasPrefix(r, " ") {
				continue // a row's detail line
			}
			f := topCells(r)
			if len(f) != len(topColumns) {
				break
			}
			names = append(names, f[0])
		}
	}
	return names
}

// topColumns is the number of columns of a board row.
var topColumns = strings.Fields("NAME KIND STATUS ITER ELAPSED ETA QUIET MONITOR FAILS COST REASON TAG")

// topCells splits a board row into its cells: columns are two spaces
// apart or more, a cell ("3m 42s") has single spaces.
func topCells(line string) []string {
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
}

// row returns the fields of name's row.
func (b *topBoard) row(name string) []string {
	for _, l := range b.lines() {
		if f := topCells(l); len(f) == len(topColumns) && f[0] == name {
			return f
		}
	}
	return nil
}

// keys sends tmux key names to the board.
func (b *topBoard) keys(keys ...string) {
	b.t.Helper()
	if out, err := b.e.Tmux(append([]string{"send-keys", "-t", topSession + ":0"}, keys...)...); err != nil {
		b.t.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

// until polls the screen until cond holds.
func (b *topBoard) until(what string, cond func() bool) {
	b.t.Helper()
	if !clock.Wait(context.Background(), clock.Real, 50*time.Millisecond, wkTimeout, cond) {
		b.t.Fatalf("timed out waiting for %s; screen:\n%s", what, b.screen())
	}
}

func (b *topBoard) shows(what string) {
	b.t.Helper()
	b.until(fmt.Sprintf("%q on the board", what), func() bool { return strings.Contains(b.screen(), what) })
}

func (b *topBoard) bell() bool {
	out, _ := b.e.Tmux("display-message", "-p", "-t", topSession+":0", "#{window_bell_flag}")
	return strings.TrimSpace(out) == "1"
}

// The board in a real terminal: three workers and two loops, the failed
// loop first; the filter; k then y kills the selected worker; the bell
// rings when a --notify loop ends while the board is open; q quits with 0.
func TestTopLiveInTmux(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.WriteFile("PROMPT.md", "work")
	e.MustRun("spawn", "--name", "w1", "--tmux", "--tag", "team-a", "--", e.Agent, "--input", "none", "--script", "print hello;quiet")
	e.MustRun("spawn", "--name", "w2", "--tmux", "--tag", "team-b", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "w3", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "good", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "50", "--restart-delay", "100ms",
		"--", e.Agent, "--script", "print working;sleep 2s;exit 0")
	// Exit 127 (command not found) ends a loop at once: failed.
	e.MustRun("spawn", "--name", "bad", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "5",
		"--", e.Agent, "--script", "exit 127")
	e.Eventually("bad to fail", wkTimeout, func() bool { return e.RalphState("bad")["status"] == "failed" })

	// --once: the same rows in the same order, plain text.
	r := e.MustRun("top", "--once")
	var once []string
	for _, l := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")[1:] {
		once = append(once, strings.Fields(l)[0])
	}
	want := "bad,good,w1,w2,w3"
	if got := strings.Join(once, ","); got != want || r.Stderr != "" || strings.ContainsRune(r.Stdout, '\x1b') {
		t.Errorf("top --once: rows %s, want %s\n%s", got, want, r)
	}

	b := topStart(t, e)
	b.until("the five rows, the failed loop first", func() bool { return strings.Join(b.rows(), ",") == want })
	if r := b.row("bad"); r[1] != "loop" || r[2] != "failed" || r[10] != "failed" {
		t.Errorf("row of bad: %q", r)
	}
	if r := b.row("good"); r[1] != "loop" || r[2] != "running" || !regexp.MustCompile(`^[0-9]+$`).MatchString(r[7]) {
		t.Errorf("row of good (its monitor's pid): %q", r)
	}
	if b.bell() {
		t.Error("bell rang for a loop that had ended before the board opened")
	}

	// Filter by tag, then clear it.
	b.keys("/")
	b.keys("-l", "team-b")
	b.until("only w2", func() bool { return strings.Join(b.rows(), ",") == "w2" })
	b.keys("Escape")
	b.until("every row again", func() bool { return strings.Join(b.rows(), ",") == want })

	// Down to w3, k asks, y kills.
	b.keys("Down", "Down", "Down", "Down")
	b.keys("k")
	b.shows("kill w3? (y/n)")
	b.keys("y")
	b.shows("killed w3")
	b.until("w3 stopped on the board", func() bool { r := b.row("w3"); return r != nil && r[2] == "stopped" })
	if code := wkStatusCode(e, "w3"); code != 1 {
		t.Errorf("swarm status w3: exit %d, want 1 (stopped)", code)
	}

	// A loop spawned with --notify that ends while the board is open
	// rings the bell; one without --notify does not.
	late := func(name string, flags ...string) {
		args := append([]string{"spawn", "--name", name, "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "5"}, flags...)
		e.MustRun(append(args, "--", e.Agent, "--script", "print starting;sleep 2s;exit 127")...)
		b.until(name+" failed on the board", func() bool { r := b.row(name); return r != nil && r[2] == "failed" })
	}
	late("silent")
	if b.bell() {
		t.Error("bell rang for a loop spawned without --notify")
	}
	late("late", "--notify")
	b.until("the bell", b.bell)

	// Enter on an ended loop shows what its agent printed last.
	b.until("late second", func() bool { r := b.rows(); return len(r) > 1 && r[1] == "late" })
	b.keys("Home", "Down", "Enter")
	b.shows("last output of late (iteration ")
	b.shows("starting")
	b.keys("Escape")
	b.shows("NAME ")

	b.keys("q")
	b.shows("top-exit=0")
}

// The same loop's durations read the same in swarm top, ralph ls and
// ralph status: broken ran for 10 minutes, builder has 8 to go (its
// monitor, here this test holding its lock, drives it: a loop without
// one has no ETA).
func TestDurationsReadTheSameEverywhere(t *testing.T) {
	t.Parallel()
	testenv.RequireTmux(t)
	home := topSeed(t)
	monitor := state.NewLock(state.NewStore(home, nil).Ralph("builder").MonitorLockPath(), true)
	if ok, err := monitor.TryLock(); !ok || err != nil {
		t.Fatalf("the monitor's lock: %v %v", ok, err)
	}
	defer func() { _ = monitor.Unlock() }() // the test's own lock
	outputs := map[string][]string{
		"top":           {"top", "--once"},
		"ralph ls":      {"ralph", "ls"},
		"ralph status":  {"ralph", "status", "broken"},
		"ralph status2": {"ralph", "status", "builder"},
	}
	wants := map[string][]*regexp.Regexp{
		"top":           {regexp.MustCompile(`(?m)^broken .*  10m 0s  `), regexp.MustCompile(`(?m)^builder .*  1h 0m  +8m 0s  `)},
		"ralph ls":      {regexp.MustCompile(`(?m)^broken .*  10m 0s  `), regexp.MustCompile(`(?m)^builder .*  1h 0m  +8m 0s  `)},
		"ralph status":  {regexp.MustCompile(`(?m)^Elapsed: 10m 0s$`)},
		"ralph status2": {regexp.MustCompile(`(?m)^Iteration: 2/10 \(avg 1m 0s/iter, ~8m 0s remaining\)$`), regexp.MustCompile(`(?m)^Elapsed: 1h 0m$`)},
	}
	for what, args := range outputs {
		r := hbRun(home, args...)
		if r.code != 0 {
			t.Errorf("swarm %q: exit %d, stderr %q", args, r.code, r.stderr)
		}
		for _, re := range wants[what] {
			if !re.MatchString(r.stdout) {
				t.Errorf("%s does not match %s:\n%s", what, re, r.stdout)
			}
		}
	}
}

// A loop waiting out a usage limit says when it resets in ralph ls and
// swarm top, not only in ralph status; its JSON gives the instant with
// its zone.
func TestWaitingLoopShowsItsResetTime(t *testing.T) {
	t.Parallel()
	testenv.RequireTmux(t)
	home := filepath.Join(t.TempDir(), "home")
	st := state.NewStore(home, func(w string) { t.Errorf("warning: %s", w) })
	until := time.Now().Add(2 * time.Minute).Truncate(time.Second)
	if err := st.Ralph("limited").Create(&state.Ralph{LoopConfig: state.LoopConfig{WorkerName: "limited", MaxIterations: 5},
		LoopProgress: state.LoopProgress{Status: state.RalphWaiting, CurrentIteration: 1, Started: state.Timestamp{Time: time.Now()},
			WaitingUntil: state.ZonedTimestamp{Time: until}}}); err != nil {
		t.Fatal(err)
	}
	clock := until.Local().Format("15:04")
	if until.Local().YearDay() != time.Now().YearDay() {
		clock = until.Local().Format("Jan 2 15:04") // the test runs at midnight
	}
	for _, args := range [][]string{{"ralph", "ls"}, {"top", "--once"}} {
		r := hbRun(home, args...)
		if !regexp.MustCompile(`(?m)^limited +(loop +)?waiting until ` + clock + `  `).MatchString(r.stdout) {
			t.Errorf("swarm %q does not say when the limit resets (%s):\n%s%s", args, clock, r.stdout, r.stderr)
		}
	}
	r := hbRun(home, "ralph", "status", "limited", "--format", "json")
	var js map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatalf("ralph status --format json: %v\n%s", err, r.stdout)
	}
	got, _ := js["waiting_until"].(string)
	if at, err := time.Parse(time.RFC3339, got); err != nil || !at.Equal(until) {
		t.Errorf("waiting_until %q: %v, want %v in RFC 3339", got, err, until)
	}
}
