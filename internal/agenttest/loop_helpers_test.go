package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
	"github.com/swarmtools/swarm/internal/testenv"
)

// loopOpts describes one ralph loop of the real swarm binary driving the
// real claude against its own mock.
type loopOpts struct {
	cfg     Config
	replies []mockapi.Reply
	// prompt is the prompt file's text (default: loopPrompt).
	prompt string
	// agent is --agent (default claude: the command's basename is env).
	agent string
	// poll is SWARM_POLL_INTERVAL for the monitor. Zero: 500ms, a
	// quarter of the product's 2 s, so the scenarios' timings are not
	// dominated by the poll; the measurements that must show what a user
	// gets set 2s.
	poll time.Duration
	// flags are more ralph spawn flags.
	flags []string
	// script, when set, is the mock's Script (answers turns before the
	// queue), e.g. a reply that depends on when it is asked.
	script func(mockapi.Request) (mockapi.Reply, bool)
	// noRescue turns off the lost-Enter rescue (see rescuer).
	noRescue bool
	// askPermissions runs claude without --dangerously-skip-permissions,
	// in manual mode where the release has one (AskFlags): a tool call
	// then waits at its permission prompt.
	askPermissions bool
	// before runs on the claude setup before the loop is spawned (a
	// project's own .claude/settings.json).
	before func(*Setup)
	// args are more arguments to claude (after swarm's usual ones).
	args []string
}

// loopPrompt says what the loop's agents are told; it names the promise
// tag, as real prompts do, so its echo must not end the loop.
const loopPrompt = "Do the next step of the task in this folder.\n" +
	"When the whole task is done, print <promise>COMPLETE</promise>.\n"

// loopRun is a running loop: its swarm env (own SWARM_HOME and tmux
// socket), the mock and the claude setup, and a watch of its state.
type loopRun struct {
	t     *testing.T
	env   *testenv.Env
	name  string
	mock  *mockapi.Server
	setup *Setup
	// began is when ralph spawn was run.
	began time.Time
	watch *stateWatch
	// rescue presses Enter on a prompt left unsubmitted (nil: off).
	rescue *rescuer
	// spawnErr is what ralph spawn printed on stderr (its warnings).
	spawnErr string
}

// startLoop starts a loop in the background with ralph spawn and returns
// once spawn returned. At cleanup it logs the loop's logs if the test
// failed, and waits until no claude of this test runs any more (it writes
// into its HOME while it exits, and the HOME is a temp dir about to be
// removed).
func startLoop(t *testing.T, name string, o loopOpts) *loopRun {
	t.Helper()
	mock := mockapi.New(o.replies...)
	mock.Logf = t.Logf
	mock.Script = o.script
	if _, err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mock.Close)
	setup := Prepare(t, mock, o.cfg)
	if o.before != nil {
		o.before(setup)
	}
	// Registered before testenv's cleanup (which kills the tmux server),
	// so it runs after it.
	t.Cleanup(func() { reapClaudes(t, setup) })
	env := testenv.New(t)
	poll := o.poll
	if poll == 0 {
		poll = 500 * time.Millisecond
	}
	// Later entries win: this overrides testenv's 100ms.
	env.Extra = append(env.Extra, "SWARM_POLL_INTERVAL="+poll.String())
	l := &loopRun{t: t, env: env, name: name, mock: mock, setup: setup}
	t.Cleanup(func() {
		if t.Failed() {
			l.dump()
		}
	})
	prompt := o.prompt
	if prompt == "" {
		prompt = loopPrompt
	}
	promptFile := env.WriteFile("PROMPT.md", prompt)
	agent := o.agent
	if agent == "" {
		agent = "claude"
	}
	args := []string{"ralph", "spawn", "--name", name, "--prompt-file", promptFile,
		"--no-worktree", "--cwd", setup.Dir, "--agent", agent}
	args = append(args, o.flags...)
	cmdFlags := skip
	if o.askPermissions {
		// A release that starts in auto mode asks nothing: its classifier
		// decides (2.1.332 ran the test's touch at once).
		cmdFlags = AskFlags(t, setup.Bin)
	}
	cmdFlags = append(slices.Clone(cmdFlags), o.args...)
	args = append(append(args, "--"), setup.Command(cmdFlags...)...)
	l.watch = watchState(env, name)
	t.Cleanup(l.watch.stop)
	if !o.noRescue {
		l.rescue = startRescuer(l, rescueAfter, true)
		t.Cleanup(func() {
			l.rescue.stop()
			if n := l.rescue.count(); n > 0 {
				t.Errorf("swarm left a typed prompt unsubmitted in claude's input box %d time(s) (pressed Enter for it after %s)", n, rescueAfter)
			}
		})
	}
	l.began = time.Now()
	r := env.Run(args...)
	if r.Code != 0 {
		t.Fatalf("swarm %s: %s", strings.Join(args[:len(args)-len(setup.Command(cmdFlags...))], " "), r)
	}
	l.spawnErr = r.Stderr
	return l
}

// rescues says how often the rescuer had to press Enter, for result
// lines ("" when never).
func (l *loopRun) rescues() string {
	if l.rescue == nil {
		return ""
	}
	if n := l.rescue.count(); n > 0 {
		return fmt.Sprintf(" [lost Enter rescued %dx: see TestLoopPromptSubmittedAtStart]", n)
	}
	return ""
}

// rescuer watches for a prompt left unsubmitted: Claude Code, in its first
// seconds, shows its input box before it handles a paste, and drops an
// Enter pressed before it echoes the paste. swarm waits for the echo and
// presses Enter again while the prompt stays in the box (ralph
// awaitEcho, ensureSubmitted). Should a prompt still sit unsubmitted (no
// working line) for rescueAfter, the rescuer presses Enter so that the
// scenario can finish and measure, and the test fails (a cleanup counts
// the rescues). TestLoopPromptSubmittedAtStart runs without it, and uses
// the same watch in record-only mode (press false) to find the screens
// with a prompt left in the box.
type rescuer struct {
	mu sync.Mutex
	// stuck holds the screens on which a prompt had sat unsubmitted for
	// the rescuer's delay, in order (with press, Enter was pressed on each).
	stuck []string
	done  chan struct{}
	wg    sync.WaitGroup
}

// rescueAfter is how long a prompt may sit in the input box before the
// rescuer presses Enter: past swarm's own Enter and its two retries
// (3 s apart), and Claude's slowest echo of a paste seen (3.9 s).
const rescueAfter = 12 * time.Second

// startRescuer watches l's window for a prompt left unsubmitted for
// after; with press it then presses Enter, without it it only records the
// screen.
func startRescuer(l *loopRun, after time.Duration, press bool) *rescuer {
	r := &rescuer{done: make(chan struct{})}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		var pending string
		var since time.Time
		for {
			select {
			case <-r.done:
				return
			case <-time.After(250 * time.Millisecond):
			}
			screen := l.screen()
			text := PendingInput(screen)
			switch {
			case text == "":
				pending = ""
			case text != pending:
				pending, since = text, time.Now()
			case time.Since(since) >= after:
				if !press {
					r.record(screen)
				} else if id := l.env.WindowID(l.name); id != "" {
					_, _ = l.env.Tmux("send-keys", "-t", id, "Enter")
					r.record(screen)
				}
				pending = ""
			}
		}
	}()
	return r
}

func (r *rescuer) record(screen string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stuck = append(r.stuck, screen)
}

// count is how many times a prompt was found stuck (with press: how many
// times Enter was pressed for one).
func (r *rescuer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stuck)
}

// first is the first screen with a stuck prompt ("" if none).
func (r *rescuer) first() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.stuck) == 0 {
		return ""
	}
	return r.stuck[0]
}

func (r *rescuer) stop() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
}

// wait runs swarm ralph wait and returns its exit code and output.
func (l *loopRun) wait(timeout time.Duration) (int, string) {
	l.t.Helper()
	r := l.env.Run("ralph", "wait", l.name, "--timeout", strconv.Itoa(int(timeout/time.Second)))
	if r.Code == 124 {
		l.t.Fatalf("loop still running after %v:\n%s", timeout, l.status())
	}
	return r.Code, strings.TrimSpace(r.Stdout + r.Stderr)
}

// status is swarm ralph status's text.
func (l *loopRun) status() string {
	l.t.Helper()
	r := l.env.Run("ralph", "status", l.name)
	return r.Stdout + r.Stderr
}

func (l *loopRun) state() map[string]any { return l.env.RalphState(l.name) }

func (l *loopRun) str(key string) string {
	v, _ := l.state()[key].(string)
	return v
}

func (l *loopRun) num(key string) int {
	v, _ := l.state()[key].(float64)
	return int(v)
}

func (l *loopRun) iterLog() string { return l.env.RalphLog(l.name) }

func (l *loopRun) monitorLog() string {
	b, _ := os.ReadFile(filepath.Join(l.env.Home, "ralph", l.name, "monitor.log"))
	return string(b)
}

// screen is the loop's window now ("" when it is gone).
func (l *loopRun) screen() string {
	id := l.env.WindowID(l.name)
	if id == "" {
		return ""
	}
	out, _ := l.env.Tmux("capture-pane", "-p", "-t", id)
	return strings.TrimRight(out, "\n") + "\n"
}

// session is the loop's window as a Session, for SaveFixture.
func (l *loopRun) session() *Session {
	return &Session{t: l.t, Socket: l.env.Socket, Setup: l.setup}
}

// eventually polls cond until it holds, failing the test after timeout.
func (l *loopRun) eventually(what string, timeout time.Duration, cond func() bool) {
	l.t.Helper()
	testenv.Eventually(l.t, what, timeout, cond)
}

// dump logs what a failing test needs: the loop's logs, status, screen
// and the mock's requests.
func (l *loopRun) dump() {
	l.t.Logf("iterations.log:\n%s", l.iterLog())
	l.t.Logf("monitor.log:\n%s", l.monitorLog())
	l.t.Logf("ralph status:\n%s", l.status())
	l.t.Logf("screen:\n%s", l.screen())
	for _, r := range l.mock.Requests() {
		l.t.Logf("request %s %s %s turn=%v status=%d", r.Time.Format("15:04:05.000"), r.Method, r.Path, r.Turn, r.Status)
	}
}

// stateEvent is one change of the loop's state the watch saw, with when.
type stateEvent struct {
	at        time.Time
	iteration int
	active    bool
	status    string
}

// stateWatch polls the loop's state.json every 50 ms and records each
// change of iteration, iteration_active or status, with its time:
// iterations.log has whole seconds only, too coarse for the timings.
type stateWatch struct {
	mu     sync.Mutex
	events []stateEvent
	done   chan struct{}
	wg     sync.WaitGroup
}

func watchState(env *testenv.Env, name string) *stateWatch {
	w := &stateWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var last stateEvent
		for {
			if st := readState(env.Home, name); st != nil {
				ev := stateEvent{at: time.Now(), iteration: st.Iteration, active: st.Active, status: st.Status}
				if ev.iteration != last.iteration || ev.active != last.active || ev.status != last.status {
					w.mu.Lock()
					w.events = append(w.events, ev)
					w.mu.Unlock()
					last = ev
				}
			}
			select {
			case <-w.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

// loopState is the few fields of a loop's state.json the watch follows.
type loopState struct {
	Iteration int    `json:"current_iteration"`
	Active    bool   `json:"iteration_active"`
	Status    string `json:"status"`
}

// readState reads the loop's loopState; nil while the file is missing or
// being replaced.
func readState(home, name string) *loopState {
	b, err := os.ReadFile(filepath.Join(home, "ralph", name, "state.json"))
	if err != nil {
		return nil
	}
	var st loopState
	if json.Unmarshal(b, &st) != nil {
		return nil
	}
	return &st
}

func (w *stateWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
}

func (w *stateWatch) snapshot() []stateEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]stateEvent(nil), w.events...)
}

// started is when iteration i was first seen active (zero if never).
func (w *stateWatch) started(i int) time.Time {
	for _, e := range w.snapshot() {
		if e.iteration == i && e.active {
			return e.at
		}
	}
	return time.Time{}
}

// ended is when iteration i was first seen no longer active.
func (w *stateWatch) ended(i int) time.Time {
	for _, e := range w.snapshot() {
		if e.iteration == i && !e.active {
			return e.at
		}
	}
	return time.Time{}
}

// reapClaudes waits until no claude of this test (its binary, with this
// test's HOME) runs, killing those left after 10 s. Only processes
// carrying the test's own HOME are touched.
func reapClaudes(t *testing.T, s *Setup) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := claudePIDs(s)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("killing %d claude process(es) still running after the test: %v", len(pids), pids)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			for _, pid := range pids {
				waitGone(pid, 5*time.Second)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// claudePIDs lists the live processes running s.Bin with HOME=s.Home.
func claudePIDs(s *Setup) []int {
	target, err := filepath.EvalSymlinks(s.Bin)
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != target {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !strings.Contains("\x00"+string(env), "\x00HOME="+s.Home+"\x00") {
			continue
		}
		if waitGone(pid, 0) { // a zombie is gone for our purpose
			continue
		}
		out = append(out, pid)
	}
	return out
}

// logLines returns iterations.log's lines with the given event.
func logLines(log, event string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "["+event+"]") {
			out = append(out, l)
		}
	}
	return out
}

// capture watches the loop's window in the background and keeps the
// first screen for which cond holds, saved as fixture name (SaveFixture:
// with UPDATE=1); the returned func gives it ("" if none was seen yet).
// It stops when the test ends.
func (l *loopRun) capture(name string, cond func(string) bool) func() string {
	var mu sync.Mutex
	var got string
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if s := l.screen(); s != "" && cond(s) {
				mu.Lock()
				got = s
				mu.Unlock()
				return
			}
		}
	}()
	l.t.Cleanup(func() {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if got != "" {
			l.session().SaveFixture(name, got)
		}
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// effortAlone matches Claude Code's effort gauge ("● high · /effort") on a
// line of its own: the footer wraps it there under ~100 columns.
var effortAlone = regexp.MustCompile(`(?m)^\s{10,}● \w+ · /effort\s*$`)
