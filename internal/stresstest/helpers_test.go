// Package stresstest drives the real swarm binary hard, black-box: many
// commands at once against one state root and one tmux server, spawns
// SIGKILLed half way, ralph monitors SIGKILLed, and hostile names, paths,
// arguments and text. After each run it checks that swarm's records, the
// tmux server, the process table, git's worktrees and the state directory
// agree exactly (world.check).
//
// Nothing here signals a process it has not confirmed: processes the tests
// start themselves run in their own process group, and any other process
// (a ralph monitor) is opened as a pidfd, checked to be the very process
// identified earlier, and signalled through that pidfd.
package stresstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/testenv"
)

// world is one swarm installation under test, with the marker argument
// every agent process it starts carries, so that any such process left on
// the machine can be found in /proc and accounted for.
type world struct {
	t       *testing.T
	e       *testenv.Env
	session string // the state root's default tmux session
	marker  string
	repo    string // git repository for --worktree, "" if none
	// decoys are windows the test made itself in swarm's session (a
	// stale window of a worker's name): they belong to no record, and
	// swarm must never touch them.
	mu     sync.Mutex
	decoys map[string]bool
}

func newWorld(t *testing.T) *world {
	t.Helper()
	e := testenv.New(t)
	w := &world{
		t: t, e: e,
		session: state.DefaultSession(e.Home),
		marker:  fmt.Sprintf("swarm-stress-marker-%d-%x", os.Getpid(), rand.Uint64()),
		decoys:  map[string]bool{},
	}
	// testenv's cleanup stops recorded workers and the tmux server; an
	// agent that no record names (what a bug leaves) is stopped here. It
	// carries this world's marker, so it is the test's own.
	t.Cleanup(func() {
		for _, p := range w.markedAgents(processes()) {
			signalConfirmed(p, unix.SIGKILL)
		}
	})
	return w
}

// agent is the fake agent command line for a plain worker: it stays up,
// quiet, until it is stopped, and carries the marker.
func (w *world) agent() []string {
	return []string{w.e.Agent, "--input", "none", "--script", "quiet", w.marker}
}

// seed returns the test's random seed: $SWARM_STRESS_SEED to replay a
// failure, else a fresh one. It is logged, and every failure message of a
// randomised test names it.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("SWARM_STRESS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SWARM_STRESS_SEED=%q: %v", s, err)
		}
		return n
	}
	return rand.Uint64()
}

// result is one finished swarm command.
type result struct {
	args           []string
	stdout, stderr string
	code           int
	start, end     time.Time
}

func (r result) String() string {
	return fmt.Sprintf("swarm %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// run runs swarm to completion through testenv's Start. It is safe to call
// from many goroutines at once (it reports failures to start as exit -1
// rather than failing the test from a goroutine).
func (w *world) run(args ...string) result {
	r := result{args: args, start: time.Now()}
	cmd, out, errb := w.e.Start(args...)
	err := cmd.Wait()
	r.end = time.Now()
	r.stdout, r.stderr = out.String(), errb.String()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else {
			r.code, r.stderr = -1, r.stderr+err.Error()
		}
	}
	return r
}

// must runs swarm and fails the test unless it exits 0.
func (w *world) must(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("%s", r)
	}
	return r
}

var errorLine = regexp.MustCompile(`(?m)^swarm: error: \S`)

// badOutput reports what is wrong with a command's output for its exit
// code: a failure must say why on a "swarm: error:" line, a success must
// not, and nothing may crash.
func badOutput(r result) string {
	switch {
	case r.code < 0:
		return "did not run"
	case strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine "):
		return "crashed"
	case r.code == 1 && len(r.args) > 1 && r.args[0] == "status" &&
		(strings.HasPrefix(r.stdout, r.args[1]+": stopped (") || strings.HasPrefix(r.stdout, r.args[1]+": starting (")):
		// status exits 1, its own code, without an error for a worker
		// that is stopped, or being spawned (not running yet).
		return ""
	case r.code != 0 && !errorLine.MatchString(r.stderr):
		return "failed without a 'swarm: error:' line"
	case r.code == 0 && strings.Contains(r.stderr, "swarm: error:"):
		return "succeeded but printed an error"
	}
	return ""
}

// record is a worker as swarm ls --format json shows it.
type record struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Cmd    []string `json:"cmd"`
	Cwd    string   `json:"cwd"`
	PID    *int     `json:"pid"`
	Tmux   *struct {
		Session string  `json:"session"`
		Window  string  `json:"window"`
		Socket  *string `json:"socket"`
	} `json:"tmux"`
	Worktree *struct {
		Path     string `json:"path"`
		Branch   string `json:"branch"`
		BaseRepo string `json:"base_repo"`
	} `json:"worktree"`
	Metadata map[string]any `json:"metadata"`
}

func (r record) windowID() string {
	id, _ := r.Metadata["tmux_window_id"].(string)
	return id
}

// windowToken is the token the record's window was made with (the
// window's @swarm_spawn option).
func (r record) windowToken() string {
	token, _ := r.Metadata["tmux_window_token"].(string)
	return token
}

func (r record) isRalph() bool {
	b, _ := r.Metadata["ralph"].(bool)
	return b
}

// ls runs swarm ls --format json.
func (w *world) ls() ([]record, result, error) {
	r := w.run("ls", "--format", "json")
	if r.code != 0 {
		return nil, r, fmt.Errorf("ls failed")
	}
	var recs []record
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil {
		return nil, r, fmt.Errorf("ls json: %v", err)
	}
	return recs, r, nil
}

// pane is one line of tmux list-panes -a.
type pane struct {
	session, windowID, windowName string
	// tag is the window's @swarm_spawn option: the token swarm made the
	// window with ("" for others' windows).
	tag  string
	dead bool
	pid  int
}

// panes lists every pane on the env's tmux server (none when no server
// runs).
func (w *world) panes() ([]pane, error) {
	out, err := w.e.Tmux("list-panes", "-a", "-F", "#{session_name}\t#{window_id}\t#{window_name}\t#{pane_dead}\t#{pane_pid}\t#{@swarm_spawn}")
	if err != nil {
		if strings.Contains(out, "no server running") || strings.Contains(out, "error connecting to") {
			return nil, nil
		}
		return nil, fmt.Errorf("list-panes: %v: %s", err, out)
	}
	var ps []pane
	// Only the newlines go: a line ends in a tab when its window has no
	// tag (the test's decoys, the user's windows).
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			continue
		}
		pid, _ := strconv.Atoi(f[4])
		ps = append(ps, pane{session: f[0], windowID: f[1], windowName: f[2], dead: f[3] == "1", pid: pid, tag: f[5]})
	}
	return ps, nil
}

// procInfo is a process as /proc shows it.
type procInfo struct {
	pid, ppid, pgrp int
	state           string
	start           int64
	argv            []string
	exe             string
}

// readProc reads one process; ok is false when it is gone.
func readProc(pid int) (procInfo, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procInfo{}, false
	}
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgrp, _ = strconv.Atoi(f[2])
	p.start, _ = strconv.ParseInt(f[19], 10, 64)
	if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.argv = strings.Split(strings.TrimSuffix(string(cl), "\x00"), "\x00")
	}
	p.exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return p, true
}

// processes returns every process on the machine.
func processes() map[int]procInfo {
	ents, _ := os.ReadDir("/proc")
	out := map[int]procInfo{}
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out[pid] = p
		}
	}
	return out
}

func (p procInfo) zombie() bool { return p.state == "Z" || p.state == "X" }

// carries reports whether the process has arg as one of its arguments.
func (p procInfo) carries(arg string) bool { return slices.Contains(p.argv, arg) }

// markedAgents returns the live processes that carry the marker and are
// agents (not a tmux client or server, nor a swarm spawn, whose command
// lines hold the worker's command while they run).
// swarmShell reports the shell swarm runs a command under (a tmux
// worker's window records how its command ended; a loop's iteration
// records its agent's exit): it carries the command's argv, and is not
// the agent.
func swarmShell(p procInfo) bool {
	return len(p.argv) > 3 && p.argv[0] == "sh" && p.argv[1] == "-c" && (p.argv[3] == "swarm-worker" || p.argv[3] == "swarm-agent")
}

func (w *world) markedAgents(all map[int]procInfo) []procInfo {
	var out []procInfo
	for _, p := range all {
		if p.zombie() || !p.carries(w.marker) {
			continue
		}
		base := filepath.Base(p.exe)
		if base == "tmux" || p.exe == w.e.Swarm || (len(p.argv) > 0 && strings.HasPrefix(p.argv[0], "tmux")) || swarmShell(p) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

// monitors returns the live ralph monitors of loop name in this world:
// the swarm binary running "ralph run name" with this SWARM_HOME. A
// monitor's child between fork and exec (it runs tmux and sh) still shows
// the monitor's executable and arguments; it is not a second monitor.
func (w *world) monitors(name string) []procInfo {
	all := processes()
	isMonitor := func(p procInfo) bool {
		if p.zombie() || p.exe != w.e.Swarm || len(p.argv) < 1 || !slices.Equal(p.argv[1:], []string{"ralph", "run", name}) {
			return false
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		return err == nil && slices.Contains(strings.Split(string(env), "\x00"), "SWARM_HOME="+w.e.Home)
	}
	var out []procInfo
	for _, p := range all {
		if isMonitor(p) && !isMonitor(all[p.ppid]) {
			out = append(out, p)
		}
	}
	return out
}

// signalConfirmed sends sig to the process p names, and only to it: a
// pidfd is opened for the pid and the process behind it checked to be p
// (same start time, same executable) before the signal goes through that
// pidfd. A pid that has meanwhile been reaped and handed to someone else
// is refused.
func signalConfirmed(p procInfo, sig unix.Signal) error {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", p.pid, err)
	}
	defer unix.Close(fd)
	now, ok := readProc(p.pid)
	if !ok || now.start != p.start || now.exe != p.exe {
		return fmt.Errorf("pid %d is no longer the process identified earlier", p.pid)
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}

// checkOptions tune world.check.
type checkOptions struct {
	// allowStarting accepts records still "starting" (a spawn in flight).
	allowStarting bool
	// allowTemps accepts temporary files of atomic writes: a writer
	// SIGKILLed between creating and renaming one leaves it, and the
	// next write sweeps it once it is a minute old.
	allowTemps bool
}

// finding is one disagreement found by check. The ids say what it is
// about, so a test can clear up after it.
type finding struct {
	kind     string // see the kinds below
	msg      string
	windowID string
	pid      int
	path     string
}

// Kinds of findings.
const (
	orphanWindow   = "orphan window"
	orphanProcess  = "orphan process"
	orphanWorktree = "orphan worktree"
	tempLeft       = "temp file"
	mismatch       = "mismatch"
)

func (f finding) String() string { return f.msg }

// check compares what swarm says with what exists and returns every
// disagreement:
//   - swarm ls --format json works, and names are unique;
//   - every running tmux record's window exists, found by its recorded
//     metadata.tmux_window_id, and no two records claim one window;
//   - every window on the server belongs to exactly one record (the
//     test's decoys excepted);
//   - every running process worker's pid is alive and is its agent;
//   - every live process carrying the marker is a recorded worker's
//     process or a descendant of a recorded window's pane;
//   - no temporary file of an atomic write is left in the state root;
//   - git's worktrees (other than the repository itself) and the
//     directories under <repo>-worktrees are exactly the records'.
func (w *world) check(o checkOptions) []finding {
	var bad []finding
	add := func(f finding, format string, args ...any) {
		if f.kind == "" {
			f.kind = mismatch
		}
		f.msg = fmt.Sprintf(format, args...)
		bad = append(bad, f)
	}

	recs, r, err := w.ls()
	if err != nil {
		return []finding{{kind: mismatch, msg: fmt.Sprintf("%v: %s", err, r)}}
	}
	if strings.Contains(r.stderr, "swarm: error:") {
		add(finding{}, "ls printed an error: %s", r.stderr)
	}
	panes, err := w.panes()
	if err != nil {
		return append(bad, finding{kind: mismatch, msg: err.Error()})
	}
	windows := map[string]pane{}
	for _, p := range panes {
		if _, ok := windows[p.windowID]; !ok {
			windows[p.windowID] = p
		}
	}
	all := processes()

	names := map[string]int{}
	owner := map[string][]string{} // window id -> record names
	allowed := map[int]bool{}      // pids whose marked descendants are accounted for
	for _, rec := range recs {
		names[rec.Name]++
		if rec.Status == "starting" && !o.allowStarting {
			add(finding{}, "record %s is still starting", rec.Name)
		}
		if rec.Tmux != nil {
			id := rec.windowID()
			win, ok := windows[id]
			// Window ids start again at @0 with every tmux server (the
			// last window of a run's session killed ends the server): a
			// stopped record's id may be a later window's. The window is
			// the record's only when it carries the record's token, as
			// swarm finds it (worker.WindowOf).
			if ok && win.tag != rec.windowToken() {
				ok = false
			}
			if id != "" && ok {
				owner[id] = append(owner[id], rec.Name)
				allowed[win.pid] = true
				if win.session != rec.Tmux.Session {
					add(finding{}, "record %s: window %s is in session %s, record says %s", rec.Name, id, win.session, rec.Tmux.Session)
				}
			}
			if rec.Status == "running" {
				switch {
				case id == "":
					add(finding{}, "running tmux record %s has no tmux_window_id", rec.Name)
				case !ok:
					add(finding{}, "running tmux record %s: its window %s does not exist", rec.Name, id)
				case win.dead && !rec.isRalph():
					add(finding{}, "running tmux record %s: its window %s has a dead pane", rec.Name, id)
				}
			}
		}
		if rec.PID != nil && rec.Tmux == nil {
			p, alive := all[*rec.PID]
			alive = alive && !p.zombie()
			switch {
			case rec.Status == "running" && !alive:
				add(finding{}, "running process record %s: pid %d is not running", rec.Name, *rec.PID)
			case rec.Status == "running" && !p.carries(w.marker) && slices.Contains(rec.Cmd, w.marker):
				add(finding{}, "running process record %s: pid %d is not its agent (%q)", rec.Name, *rec.PID, p.argv)
			}
			if rec.Status == "running" {
				allowed[*rec.PID] = true
			}
		}
	}
	for n, c := range names {
		if c > 1 {
			add(finding{}, "worker %s is listed %d times", n, c)
		}
	}
	w.mu.Lock()
	for id, p := range windows {
		if w.decoys[id] {
			continue
		}
		switch own := owner[id]; {
		case len(own) == 0:
			add(finding{kind: orphanWindow, windowID: id}, "orphan window %s (%s:%s) belongs to no record", id, p.session, p.windowName)
		case len(own) > 1:
			add(finding{}, "window %s is claimed by %q", id, own)
		}
	}
	for id := range w.decoys {
		if _, ok := windows[id]; !ok {
			add(finding{}, "decoy window %s (not swarm's) is gone", id)
		}
	}
	w.mu.Unlock()

	for _, p := range w.markedAgents(all) {
		accounted := false
		for q, i := p, 0; q.pid > 1 && i < 64; i++ {
			if allowed[q.pid] {
				accounted = true
				break
			}
			parent, ok := all[q.ppid]
			if !ok {
				break
			}
			q = parent
		}
		if !accounted {
			add(finding{kind: orphanProcess, pid: p.pid}, "orphan process %d %q (no record accounts for it)", p.pid, p.argv)
		}
	}

	if !o.allowTemps {
		filepath.WalkDir(w.e.Home, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && tempFile.MatchString(d.Name()) {
				add(finding{kind: tempLeft, path: path}, "leftover temp file %s", path)
			}
			return nil
		})
	}

	if w.repo != "" {
		want := map[string]string{}
		for _, rec := range recs {
			if rec.Worktree != nil {
				want[rec.Worktree.Path] = rec.Name
			}
		}
		registered := w.worktrees()
		for _, p := range registered {
			if _, ok := want[p]; !ok {
				add(finding{kind: orphanWorktree, path: p}, "orphan git worktree %s belongs to no record", p)
			}
			delete(want, p)
		}
		for p, n := range want {
			add(finding{}, "record %s: worktree %s is not a git worktree", n, p)
		}
		dirs, _ := os.ReadDir(w.repo + "-worktrees")
		for _, d := range dirs {
			p := filepath.Join(w.repo+"-worktrees", d.Name())
			if !slices.Contains(registered, p) {
				add(finding{kind: orphanWorktree, path: p}, "orphan directory %s under the worktrees directory", p)
			}
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].msg < bad[j].msg })
	return bad
}

// clearOrphans removes what findings name as orphaned, so that the next
// round of a test starts clean: windows by id, processes (which carry
// this world's marker, so they are the test's own) through a confirmed
// pidfd, worktrees with git.
func (w *world) clearOrphans(fs []finding) {
	all := processes()
	for _, f := range fs {
		switch f.kind {
		case orphanWindow:
			w.e.Tmux("kill-window", "-t", f.windowID)
		case orphanProcess:
			if p, ok := all[f.pid]; ok && p.carries(w.marker) {
				signalConfirmed(p, unix.SIGKILL)
			}
		case orphanWorktree:
			exec.Command("git", "-C", w.repo, "worktree", "remove", "--force", "--force", f.path).Run()
			os.RemoveAll(f.path)
			exec.Command("git", "-C", w.repo, "worktree", "prune").Run()
		}
	}
}

// tempFile matches WriteFileAtomic's temporary files: "." + base + "." +
// random digits + ".tmp".
var tempFile = regexp.MustCompile(`^\..+\.[0-9]+\.tmp$`)

// worktrees lists the repository's linked worktrees (not itself).
func (w *world) worktrees() []string {
	out, err := exec.Command("git", "-C", w.repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		return nil
	}
	var paths []string
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && p != w.repo {
			paths = append(paths, p)
		}
	}
	return paths
}

// initRepo makes the env's directory a git repository for --worktree.
func (w *world) initRepo() {
	w.e.InitRepo()
	w.repo = w.e.Dir
}

// decoy makes a window named name in swarm's session that no swarm command
// made (a stale window of a worker's name, say), running a sleep that
// carries the marker's decoy form. The session must exist.
func (w *world) decoy(name string) (id string, sleeper procInfo) {
	w.t.Helper()
	out, err := w.e.Tmux("new-window", "-d", "-P", "-F", "#{window_id}\t#{pane_pid}", "-t", "="+w.session+":", "-n", name, "--", "sleep", "1000")
	if err != nil {
		w.t.Fatalf("decoy window: %v: %s", err, out)
	}
	idStr, pidStr, _ := strings.Cut(strings.TrimSpace(out), "\t")
	pid, _ := strconv.Atoi(pidStr)
	p, ok := readProc(pid)
	if !ok {
		w.t.Fatalf("decoy pane process %d gone", pid)
	}
	w.mu.Lock()
	w.decoys[idStr] = true
	w.mu.Unlock()
	return idStr, p
}

// editState changes state.json under swarm's own lock, as a hand edit
// would if made carefully.
func (w *world) editState(fn func(workers []map[string]any)) {
	w.t.Helper()
	editJSON(w.t, filepath.Join(w.e.Home, "state.lock"), filepath.Join(w.e.Home, "state.json"), func(m map[string]any) {
		ws, _ := m["workers"].([]any)
		var list []map[string]any
		for _, x := range ws {
			if r, ok := x.(map[string]any); ok {
				list = append(list, r)
			}
		}
		fn(list)
	})
}

// editRalph changes a loop's state.json under its lock.
func (w *world) editRalph(name string, fn func(m map[string]any)) {
	w.t.Helper()
	dir := filepath.Join(w.e.Home, "ralph", name)
	editJSON(w.t, filepath.Join(dir, "state.lock"), filepath.Join(dir, "state.json"), fn)
}

func editJSON(t *testing.T, lock, path string, fn func(m map[string]any)) {
	t.Helper()
	fl := flock.New(lock)
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	defer fl.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := state.WriteFileAtomic(path, out); err != nil {
		t.Fatal(err)
	}
}

// startOwnSleep starts a sleep in its own process group that belongs to
// the test, not to swarm; the test kills it (by its group) at the end.
func startOwnSleep(t *testing.T) (*exec.Cmd, procInfo) {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // pidfd-backed: only this child, never a reused pid
		cmd.Wait()
	})
	p, ok := readProc(cmd.Process.Pid)
	if !ok {
		t.Fatal("sleep vanished at once")
	}
	return cmd, p
}

// stillRuns reports whether the process is the same one and not dead.
func stillRuns(p procInfo) bool {
	now, ok := readProc(p.pid)
	return ok && now.start == p.start && !now.zombie()
}

// tail returns the last n bytes of s, for failure messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// readFile returns a file's content ("" when missing).
func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// startWith starts swarm with extra environment in its own process group,
// so that a signal meant for it (and for its tmux or git children) reaches
// nothing else. Its output is captured; read it only after cmd.Wait.
func (w *world) startWith(extra []string, args ...string) (*exec.Cmd, *strings.Builder, *strings.Builder) {
	w.t.Helper()
	cmd := exec.Command(w.e.Swarm, args...)
	cmd.Dir = w.e.Dir
	cmd.Env = append(w.e.Env(), extra...)
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	return cmd, &out, &errb
}

// killSpawn SIGKILLs a swarm started with startWith and reaps it. It
// reports whether the SIGKILL ended a running process: false when it had
// exited by itself already (os.ErrProcessDone, or an exit it made before
// the signal, which its wait status shows). An error is a failure to
// signal; the process is then not reaped.
func killSpawn(cmd *exec.Cmd) (bool, error) {
	err := cmd.Process.Signal(unix.SIGKILL) // pidfd-backed: only this child
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return false, err
	}
	_ = cmd.Wait() // its exit status is read below
	if cmd.ProcessState == nil {
		return false, nil
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == unix.SIGKILL, nil
}

// tmuxShim writes an executable SWARM_TMUX shim, dir/name: a sh script
// that, when one of the tmux commands named is among its arguments, first
// runs the shell code action (which may run the real tmux as "$real"),
// then execs the real tmux with its arguments.
func tmuxShim(t *testing.T, dir, name, action string, commands ...string) string {
	t.Helper()
	// newWorld (testenv.New) has skipped the test already if tmux is
	// missing.
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, c := range commands {
		cases = append(cases, fmt.Sprintf(`*" %s "*`, c))
	}
	script := fmt.Sprintf(`#!/bin/sh
real='%s'
case " $* " in
%s)
%s
	;;
esac
exec "$real" "$@"
`, real, strings.Join(cases, "|"), action)
	shim := filepath.Join(dir, name)
	testenv.WriteExecutable(t, shim, script)
	return shim
}

// waitLoopEnd waits until ralph loop name has ended (status stopped or
// failed) and returns its state.
func (w *world) waitLoopEnd(name string, timeout time.Duration) map[string]any {
	w.t.Helper()
	var st map[string]any
	w.e.Eventually("loop "+name+" to end", timeout, func() bool {
		st = w.e.RalphState(name)
		return st != nil && (st["status"] == "stopped" || st["status"] == "failed")
	})
	return st
}

// ralphNum and ralphFlag read a number or a boolean of loop name's state
// (0 or false when it or the state is missing).
func (w *world) ralphNum(name, key string) int {
	v, _ := w.e.RalphState(name)[key].(float64)
	return int(v)
}

func (w *world) ralphFlag(name, key string) bool {
	v, _ := w.e.RalphState(name)[key].(bool)
	return v
}
