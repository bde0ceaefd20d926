package board

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
)

// fakeSource serves fixed snapshots and records the actions asked of it.
type fakeSource struct {
	mu      sync.Mutex
	snap    Snapshot
	calls   []string
	peekErr error
}

func (f *fakeSource) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeSource) Snapshot() (Snapshot, error) { return f.snap, nil }
func (f *fakeSource) Peek(name string, lines int) (string, error) {
	f.record("peek " + name)
	return "screen of " + name + "\n> ", f.peekErr
}
func (f *fakeSource) Events(name string, lines int) (string, error) {
	f.record("events " + name)
	return "2026-03-04T10:00:00Z [START] iteration 1/10\n", nil
}
func (f *fakeSource) Output(name string, lines int) (int, string, error) {
	f.record("output " + name)
	return 4, "last words of " + name, nil
}
func (f *fakeSource) Pause(name string) (string, error) {
	f.record("pause " + name)
	return "paused ralph loop for " + name, nil
}
func (f *fakeSource) Resume(name string) (string, error) {
	f.record("resume " + name)
	return "", errors.New("boom")
}
func (f *fakeSource) Kill(name string) (string, error) {
	f.record("kill " + name)
	return "killed " + name, nil
}
func (f *fakeSource) Diff(name string) (string, error) {
	f.record("diff " + name)
	var b strings.Builder
	b.WriteString(" a.txt | 40 +++\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "+diff line %d\n", i)
	}
	return b.String(), nil
}
func (f *fakeSource) AttachCommand(name string) *exec.Cmd {
	return exec.Command("true", name)
}

// harness drives a model as Bubble Tea would, running commands inline.
type harness struct {
	t     *testing.T
	m     *Model
	src   *fakeSource
	bells int
	quit  bool
	// ticks counts the clocks started: the model's tea.Tick is replaced
	// by a command that returns clockMsg at once, which the harness
	// does not deliver (the real clock would, an interval later).
	ticks int
	// expiries are the status messages' clocks, to fire with expire.
	expiries []func(time.Time) tea.Msg
}

// clockMsg stands for a started clock (tea.Tick) in the harness.
type clockMsg struct {
	d    time.Duration
	fire func(time.Time) tea.Msg
}

func newHarness(t *testing.T) *harness {
	live, loops := fixture()
	h := &harness{t: t, src: &fakeSource{snap: Snapshot{Live: live, Loops: loops, At: fixedNow}}}
	h.m = New(Options{Source: h.src, Interval: time.Second, Bell: func() { h.bells++ }})
	h.m.after = func(d time.Duration, fire func(time.Time) tea.Msg) tea.Cmd {
		return func() tea.Msg { return clockMsg{d, fire} }
	}
	h.send(tea.WindowSizeMsg{Width: 140, Height: 20})
	h.send(snapshotMsg{snap: h.src.snap})
	return h
}

// send delivers msg and runs the commands it returns, except the clock
// and process execution, which need the real program.
func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case clockMsg:
		switch msg.d {
		case h.m.opts.Interval:
			h.ticks++
		case statusTTL:
			h.expiries = append(h.expiries, msg.fire)
		default:
			h.t.Errorf("clock of %s, want the interval %s or the status's %s", msg.d, h.m.opts.Interval, statusTTL)
		}
	case tickMsg:
		h.t.Error("a command returned tickMsg: only the clock may")
	case tea.QuitMsg:
		h.quit = true
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	default:
		if typeName(msg) == "tea.execMsg" {
			return // needs the real program
		}
		h.send(msg)
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// expire delivers the oldest status message's expiry, as its clock would
// statusTTL after it was shown.
func (h *harness) expire() {
	h.t.Helper()
	if len(h.expiries) == 0 {
		h.t.Fatal("no status message is waiting to expire")
	}
	fire := h.expiries[0]
	h.expiries = h.expiries[1:]
	h.send(fire(time.Now()))
}

func (h *harness) keys(keys ...string) {
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case " ":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	r, _ := utf8.DecodeRuneInString(k)
	return tea.KeyPressMsg{Code: r, Text: k}
}

func (h *harness) calls() string {
	h.src.mu.Lock()
	defer h.src.mu.Unlock()
	return strings.Join(h.src.calls, ",")
}

// screen is the board's frame as text: its styles (which Bubble Tea's
// renderer fits to the terminal) stripped.
func (h *harness) screen() string {
	v := h.m.View()
	if !v.AltScreen {
		h.t.Error("the board is not drawn full screen")
	}
	return ansi.Strip(v.Content)
}

func (h *harness) viewHas(wants ...string) {
	h.t.Helper()
	v := h.screen()
	for _, w := range wants {
		if !strings.Contains(v, w) {
			h.t.Errorf("view lacks %q:\n%s", w, v)
		}
	}
}

func TestBoardSelectsWithArrowsAndKeepsTheSelection(t *testing.T) {
	h := newHarness(t)
	if h.m.selected != "broke" {
		t.Fatalf("first selection %q, want the first problem", h.m.selected)
	}
	h.keys("down", "down", "up", "down")
	if h.m.selected != "sleepy" {
		t.Fatalf("after down,down,up,down: %q", h.m.selected)
	}
	h.keys("up", "up", "up", "up") // stops at the top
	if h.m.selected != "broke" {
		t.Errorf("up past the top: %q", h.m.selected)
	}
	// The selection follows its worker when a refresh reorders rows.
	h.keys("down", "down")
	h.src.snap.Loops[3].State.IterationActive = false // sleepy is no longer quiet
	h.send(snapshotMsg{snap: h.src.snap})
	if h.m.selected != "sleepy" || h.m.shown[h.m.cursor].Name != "sleepy" {
		t.Errorf("selection after a reorder: %q at %d", h.m.selected, h.m.cursor)
	}
	h.viewHas("swarm top  9 workers  7 loops  4 problems", "NAME", "MONITOR", "team-a,ci", "q quit")
}

func TestKillAsksFirst(t *testing.T) {
	h := newHarness(t)
	h.keys("down", "k")
	h.viewHas("kill zombie? (y/n)")
	if h.calls() != "" {
		t.Fatalf("killed before the answer: %s", h.calls())
	}
	h.keys("n")
	h.viewHas("not killed: zombie")
	h.keys("k", "y")
	if h.calls() != "kill zombie" {
		t.Errorf("calls %q, want one kill of zombie", h.calls())
	}
	h.viewHas("killed zombie")
}

func TestPauseResumeShowResultOrError(t *testing.T) {
	h := newHarness(t)
	h.keys("p")
	h.viewHas("paused ralph loop for broke")
	h.keys("r")
	h.viewHas("error: boom")
	if h.calls() != "pause broke,resume broke" {
		t.Errorf("calls %q", h.calls())
	}
}

func TestFilterTypesAppliesAndClears(t *testing.T) {
	h := newHarness(t)
	h.keys("/", "t", "e", "a", "m", "-", "a")
	if got := names(h.m.shown); strings.Join(got, ",") != "build,web" {
		t.Errorf("filter team-a: %q", got)
	}
	h.viewHas("/team-a_")
	// q is typed while filtering, not quit.
	h.keys("q")
	if h.quit || len(h.m.shown) != 0 {
		t.Errorf("q while filtering: quit %v, rows %q", h.quit, names(h.m.shown))
	}
	h.viewHas(`no worker or loop matches "team-aq"`)
	h.keys("backspace", "enter")
	if h.m.editing || h.m.filter != "team-a" || h.m.selected != "build" {
		t.Errorf("after enter: editing %v, filter %q, selected %q", h.m.editing, h.m.filter, h.m.selected)
	}
	h.keys("esc")
	if h.m.filter != "" || len(h.m.shown) != 10 {
		t.Errorf("esc: filter %q, %d rows", h.m.filter, len(h.m.shown))
	}
}

func TestPeekAndLogViews(t *testing.T) {
	h := newHarness(t)
	h.keys("down", "enter")
	h.viewHas("screen of zombie", "esc back")
	// Every tick reads the screen again, and starts the clock again.
	h.send(tickMsg{})
	if h.calls() != "peek zombie,peek zombie" {
		t.Errorf("calls %q", h.calls())
	}
	if h.ticks != 1 {
		t.Errorf("%d clocks started by one tick", h.ticks)
	}
	h.keys("l")
	h.viewHas("events of zombie", "[START] iteration 1/10")
	h.keys("esc")
	h.viewHas("NAME", "KIND")
	h.src.peekErr = errors.New("worker 'x' is not running")
	h.keys("enter")
	h.viewHas("error: worker 'x' is not running")
	h.keys("enter")
	if h.m.view != viewList {
		t.Error("enter did not go back")
	}
}

// TestDiffView (issue 19, item 2): d opens the selected worker's diff
// against its base, from the list and from another view; it shows the
// top (the diffstat first), is read again every tick, and esc goes back.
func TestDiffView(t *testing.T) {
	h := newHarness(t)
	h.keys("down", "d")
	h.viewHas("diff of zombie against its base", " a.txt | 40 +++", "+diff line 1")
	if strings.Contains(h.screen(), "+diff line 40") {
		t.Errorf("the diff view shows the end of the diff, not its top:\n%s", h.screen())
	}
	h.send(tickMsg{})
	if h.calls() != "diff zombie,diff zombie" {
		t.Errorf("calls %q", h.calls())
	}
	h.keys("esc", "enter", "d")
	h.viewHas("diff of zombie")
	h.keys("esc")
	if h.m.view != viewList {
		t.Error("esc did not leave the diff view")
	}
}

// A tick while a read of the screen is under way starts no other (a slow
// tmux server must not pile them up); opening another view reads at once.
func TestTickDoesNotPileUpDetailReads(t *testing.T) {
	h := newHarness(t)
	h.keys("down", "enter")
	// The tick's read (and snapshot) stay under way: its commands are
	// not run yet.
	_, pending := h.m.Update(tickMsg{})
	h.send(tickMsg{})
	if h.calls() != "peek zombie" {
		t.Fatalf("calls %q: a tick read the screen while a read was under way", h.calls())
	}
	if h.ticks != 1 {
		t.Errorf("%d clocks started, want 1: the clock runs on", h.ticks)
	}
	h.run(pending)
	if h.calls() != "peek zombie,peek zombie" || h.ticks != 2 {
		t.Fatalf("calls %q, %d clocks", h.calls(), h.ticks)
	}
	h.viewHas("screen of zombie")
	// Done: the next tick reads again.
	h.send(tickMsg{})
	if h.calls() != "peek zombie,peek zombie,peek zombie" {
		t.Fatalf("calls %q after the read ended", h.calls())
	}
	// A read of the view left does not hold up the one opened, and its
	// text is not shown in it.
	_, pending = h.m.Update(tickMsg{})
	h.keys("l")
	if h.calls() != "peek zombie,peek zombie,peek zombie,events zombie" {
		t.Fatalf("calls %q: l did not read the events at once", h.calls())
	}
	h.run(pending)
	h.viewHas("events of zombie", "[START] iteration 1/10")
	if strings.Contains(h.screen(), "screen of zombie") {
		t.Errorf("the screen read for the peek view shows in the log view:\n%s", h.screen())
	}
	h.send(tickMsg{})
	if h.calls() != "peek zombie,peek zombie,peek zombie,events zombie,peek zombie,events zombie" {
		t.Errorf("calls %q: the tick after the reads ended did not read the events", h.calls())
	}
}

// Keys typed faster than the board reads them arrive as one message.
func TestRunesArrivingTogetherAreSeparateKeys(t *testing.T) {
	h := newHarness(t)
	h.send(keyMsg("/team-b"))
	if !h.m.editing || h.m.filter != "team-b" || strings.Join(names(h.m.shown), ",") != "held" {
		t.Errorf("editing %v, filter %q, rows %q", h.m.editing, h.m.filter, names(h.m.shown))
	}
	h.keys("enter")
	h.send(keyMsg("ky"))
	if h.calls() != "kill held" {
		t.Errorf("calls %q", h.calls())
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		h := newHarness(t)
		h.keys(k)
		if !h.quit {
			t.Errorf("%s does not quit", k)
		}
	}
}

func TestBellRingsOnceWhenNotifyingLoopsEnd(t *testing.T) {
	h := newHarness(t)
	loops := h.src.snap.Loops
	for _, i := range []int{0, 4, 5} { // build, limit, held
		loops[i].State.Notify = true
	}
	end := func(i int, reason state.ExitReason) {
		loops[i].State.Status, loops[i].State.ExitReason = state.RalphStopped, reason
	}
	end(0, ralph.ReasonComplete) // build
	end(5, ralph.ReasonBlocked)  // held
	h.send(snapshotMsg{snap: h.src.snap})
	if h.bells != 1 {
		t.Errorf("%d bells for two loops ending, want 1", h.bells)
	}
	h.send(snapshotMsg{snap: h.src.snap})
	if h.bells != 1 {
		t.Errorf("%d bells after a refresh with nothing new", h.bells)
	}
	// Not for a loop spawned without --notify, nor for a kill.
	end(3, ralph.ReasonComplete) // sleepy
	end(4, ralph.ReasonKilled)   // limit
	h.send(snapshotMsg{snap: h.src.snap})
	if h.bells != 1 {
		t.Errorf("%d bells, want still 1", h.bells)
	}
}

func TestEndedLoopsSeesOnlyTransitions(t *testing.T) {
	before := map[string]bool{}
	running := loop("a", state.RalphRunning, true, nil)
	failed := loop("b", state.RalphFailed, false, nil)
	if got := endedLoops(before, []*ralph.Info{running, failed}); got != nil {
		t.Errorf("first look: %d ended (a loop that had ended before the board opened is no news)", len(got))
	}
	running.State.Status = state.RalphFailed
	if got := endedLoops(before, []*ralph.Info{running, failed}); len(got) != 1 || got[0] != running {
		t.Errorf("second look: %d ended, want a", len(got))
	}
}

func TestViewFitsTheScreenAndScrolls(t *testing.T) {
	h := newHarness(t)
	h.send(tea.WindowSizeMsg{Width: 40, Height: 8})
	lines := strings.Split(h.screen(), "\n")
	if len(lines) != 8 {
		t.Errorf("%d lines on an 8-line screen:\n%s", len(lines), h.screen())
	}
	for _, l := range lines {
		if w := len([]rune(l)); w > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
	h.keys("down", "down", "down", "down", "down")
	if !strings.Contains(h.screen(), "build") || strings.Contains(h.screen(), "broke") {
		t.Errorf("no scroll to the selection:\n%s", h.screen())
	}
}

func TestAttachSuspendsTheBoard(t *testing.T) {
	h := newHarness(t)
	_, cmd := h.m.Update(keyMsg("a"))
	if cmd == nil {
		t.Fatal("a: no command")
	}
	if name := typeName(cmd()); !strings.Contains(name, "execMsg") {
		t.Errorf("a returned %s, want an exec", name)
	}
}

// A failed refresh keeps the rows it had and says so; warnings of the
// manager show on the status line.
func TestRefreshErrorAndWarnings(t *testing.T) {
	h := newHarness(t)
	warnings := []string{"corrupt state file, resetting"}
	h.m.opts.Warnings = func() []string { w := warnings; warnings = nil; return w }
	h.send(snapshotMsg{err: errors.New("tmux: server exited")})
	h.viewHas("error: cannot refresh: tmux: server exited", "broke", "zombie")
	h.send(snapshotMsg{snap: h.src.snap})
	h.viewHas("warning: corrupt state file, resetting")
	if strings.Contains(h.screen(), "cannot refresh") {
		t.Errorf("the error outlived a good refresh:\n%s", h.screen())
	}
}

// A kill confirmed just before q is waited for: it is counted when y is
// handled, not when its goroutine gets to run.
func TestWaitCoversActionsNotYetStarted(t *testing.T) {
	h := newHarness(t)
	h.keys("k")
	_, kill := h.m.Update(keyMsg("y"))
	waited := make(chan struct{})
	go func() { h.m.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned before the kill ran")
	case <-time.After(100 * time.Millisecond):
	}
	kill()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the kill")
	}
}

// Until the user moves the selection it stays on the top row, whatever
// comes to the top.
func TestSelectionStaysOnTopUntilMoved(t *testing.T) {
	h := newHarness(t)
	h.src.snap.Loops[1].State.Status = state.RalphRunning // broke runs again
	h.src.snap.Loops[1].MonitorAlive = true
	h.send(snapshotMsg{snap: h.src.snap})
	if h.m.selected != "zombie" || h.m.cursor != 0 {
		t.Errorf("selected %q at %d, want the new top row zombie", h.m.selected, h.m.cursor)
	}
	// The board shows the refreshed row, not the table laid out before.
	seen := false
	for _, l := range strings.Split(h.screen(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "broke" {
			seen = true
			if f[2] != "running" {
				t.Errorf("broke's row after the refresh: %q", l)
			}
		}
	}
	if !seen {
		t.Errorf("no row of broke:\n%s", h.screen())
	}
}

// What swarm attach said on stderr becomes the status, without its hint.
func TestAttachDone(t *testing.T) {
	msg := attachDone("w", "swarm: error: worker 'w' is not running\nhint: swarm respawn w\n", errors.New("exit status 1"))
	if a, ok := msg.(actionMsg); !ok || a.err == nil || a.err.Error() != "worker 'w' is not running" {
		t.Errorf("failed attach: %#v", msg)
	}
	if a := attachDone("w", "", errors.New("exec: not found")).(actionMsg); a.err.Error() != "exec: not found" {
		t.Errorf("attach that could not run: %v", a.err)
	}
	if a := attachDone("w", "", nil).(actionMsg); a.err != nil || a.text != "detached from w" {
		t.Errorf("detach: %+v", a)
	}
}

// On the board, BLOCKED and DECIDE loops count as problems and show their
// reason or question on a line under their row.
func TestBoardShowsWhatBlockedAndDecideLoopsAsk(t *testing.T) {
	h := newHarness(t)
	live, loops := asking()
	h.src.snap = Snapshot{Live: live, Loops: loops, At: fixedNow}
	h.send(snapshotMsg{snap: h.src.snap})
	h.viewHas("9 loops  7 problems")
	lines := strings.Split(h.screen(), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || (f[0] != "stuck" && f[0] != "choose") {
			continue
		}
		want := map[string]string{"stuck": "  blocked: need the API key for staging", "choose": "  question: Postgres or SQLite?"}[f[0]]
		if i+1 >= len(lines) || lines[i+1] != want {
			t.Errorf("line under %s's row: %q, want %q\n%s", f[0], lines[min(i+1, len(lines)-1)], want, h.screen())
		}
	}
	// A screen too short for every line scrolls by lines: the selection
	// and its detail line stay on screen.
	h.send(tea.WindowSizeMsg{Width: 140, Height: 7})
	h.keys("down", "down")
	if v := h.screen(); !strings.Contains(v, "stuck") || !strings.Contains(v, "blocked: need the API key") ||
		len(strings.Split(v, "\n")) != 7 {
		t.Errorf("selection stuck with its detail line not on a 7-line screen:\n%s", v)
	}
}

// Enter on a loop that has ended shows its last iteration's output (its
// agent has no screen any more); on a running one, the screen.
func TestEnterOnAnEndedLoopShowsItsLastOutput(t *testing.T) {
	h := newHarness(t)
	h.viewHas("enter last output") // broke, failed, is selected
	h.keys("enter")
	h.viewHas("last output of broke (iteration 4, ended)", "last words of broke")
	h.send(tickMsg{})
	if h.calls() != "output broke,output broke" {
		t.Errorf("calls %q: the output is not read again at a tick", h.calls())
	}
	h.keys("esc", "down", "enter")
	h.viewHas("screen of zombie")
	if !strings.HasSuffix(h.calls(), ",peek zombie") {
		t.Errorf("calls %q: a running loop's enter is not its screen", h.calls())
	}
	h.keys("esc", "end", "enter") // done: complete
	h.viewHas("last words of done")
}

// Results on the status line clear after statusTTL; an older message's
// expiry leaves a newer message alone; an action under way stays until
// its result.
func TestStatusMessagesClear(t *testing.T) {
	h := newHarness(t)
	h.keys("p")
	h.viewHas("paused ralph loop for broke")
	h.keys("r")
	h.viewHas("error: boom")
	if len(h.expiries) != 2 {
		t.Fatalf("%d expiries for two results, want 2", len(h.expiries))
	}
	h.expire()
	h.viewHas("error: boom")
	h.expire()
	if strings.Contains(h.screen(), "boom") || h.m.status != "" {
		t.Errorf("the status line did not clear:\n%s", h.screen())
	}
	// The kill question is no message: it waits for the answer.
	h.keys("k")
	if len(h.expiries) != 0 {
		t.Errorf("the kill question expires")
	}
	h.keys("n")
	h.viewHas("not killed: broke")
	h.expire()
	if h.m.status != "" {
		t.Errorf("status %q after its expiry", h.m.status)
	}
}

// ? shows every key (bubbles' full help) and hides it again; the board
// still fits the screen.
func TestQuestionMarkShowsEveryKey(t *testing.T) {
	h := newHarness(t)
	h.send(tea.WindowSizeMsg{Width: 140, Height: 16})
	if strings.Contains(h.screen(), "page up") {
		t.Fatalf("full help before ?:\n%s", h.screen())
	}
	h.viewHas("? more keys")
	h.keys("?")
	h.viewHas("pgup", "page up", "home", "clear filter", "pause", "kill", "quit")
	if n := len(strings.Split(h.screen(), "\n")); n != 16 {
		t.Errorf("%d lines with the full help on a 16-line screen:\n%s", n, h.screen())
	}
	h.keys("down", "enter", "?")
	if strings.Contains(h.screen(), "page up") || !strings.Contains(h.screen(), "esc back") {
		t.Errorf("? in the screen view:\n%s", h.screen())
	}
	// While typing a filter, ? is typed.
	h.keys("esc", "/", "?")
	if h.m.filter != "?" {
		t.Errorf("filter %q, want ?", h.m.filter)
	}
}

// A line wider than the screen ends with an ellipsis where it is cut.
func TestNarrowScreenCutsWithAnEllipsis(t *testing.T) {
	h := newHarness(t)
	h.send(tea.WindowSizeMsg{Width: 50, Height: 20})
	for _, l := range strings.Split(h.screen(), "\n") {
		if lipgloss.Width(l) > 50 {
			t.Errorf("line wider than 50: %q", l)
		}
	}
	h.viewHas("NAME    KIND     STATUS   ITER  ELAPSED  ETA     …", "broke   loop     failed   2/50  5s       -       …")
}
