package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/worker"
)

// Source is what the board reads and acts on. ManagerSource is the real
// one; the model's tests use a fake.
type Source interface {
	// Snapshot reads every worker and loop.
	Snapshot() (Snapshot, error)
	// Peek returns the last lines of a worker's screen.
	Peek(name string, lines int) (string, error)
	// Events returns the last lines of a loop's event log.
	Events(name string, lines int) (string, error)
	// Output returns the last lines of the last iteration output kept
	// of an ended loop, as plain text, and which iteration's it is.
	Output(name string, lines int) (iter int, text string, err error)
	// Pause, Resume and Kill act on a worker or its loop and return the
	// line to show; an error is shown as one.
	Pause(name string) (string, error)
	Resume(name string) (string, error)
	Kill(name string) (string, error)
	// AttachCommand is the command that attaches the terminal to a
	// worker's window.
	AttachCommand(name string) *exec.Cmd
	// Diff returns a worktree worker's changes against its base: the
	// diffstat, then the patch.
	Diff(name string) (string, error)
}

// ManagerSource reads and acts through a worker manager.
type ManagerSource struct {
	M *worker.Manager
	// Self is the swarm binary (for swarm attach); Env its environment.
	Self string
	Env  []string
}

var _ Source = (*ManagerSource)(nil)

// Snapshot lists the workers and loops with one tmux listing per socket.
func (s *ManagerSource) Snapshot() (Snapshot, error) {
	live, err := s.M.List()
	if err != nil {
		return Snapshot{}, err
	}
	restore.Mark(s.M, live) // lost loops' workers, as ls marks them
	loops, err := ralph.DescribeLoops(s.M, live)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Live: live, Loops: loops, At: time.Now()}, nil
}

// Peek returns the last lines of a worker's screen.
func (s *ManagerSource) Peek(name string, lines int) (string, error) {
	return s.M.Peek(name, lines)
}

// Events returns the last lines of a loop's iterations.log.
func (s *ManagerSource) Events(name string, lines int) (string, error) {
	rs := s.M.Store.Ralph(name)
	if err := rs.Err(); err != nil {
		return "", err
	}
	if !rs.Exists() {
		return "", fmt.Errorf("no ralph state found for worker '%s'", name)
	}
	var b bytes.Buffer
	err := ralph.Events(context.Background(), rs, lines, false, &b)
	return b.String(), err
}

// Output returns the last lines of a loop's last iteration output.
func (s *ManagerSource) Output(name string, lines int) (int, string, error) {
	rs := s.M.Store.Ralph(name)
	if err := rs.Err(); err != nil {
		return 0, "", err
	}
	return ralph.OutputTail(rs, lines)
}

// Diff returns the worker's diffstat and patch against its base.
func (s *ManagerSource) Diff(name string) (string, error) {
	stat, err := s.M.Diff(name, true)
	if errors.Is(err, worker.ErrNotFound) {
		// A loop's row outlives its worker's record (swarm clean): say
		// what went, and where the work is.
		return "", hint.Errorf(fmt.Sprintf("l shows the loop's events; a branch the worker had is kept in its repository (git log %s)", name),
			"no diff: worker '%s' was cleaned, and its worktree went with its record", name)
	}
	if err != nil {
		return "", err
	}
	patch, err := s.M.Diff(name, false)
	if stat == "" && patch == "" {
		return "(no changes)\n", err
	}
	return stat + "\n" + patch, err
}

// Pause pauses a loop (the running agent finishes its iteration).
func (s *ManagerSource) Pause(name string) (string, error) {
	return done(ralph.PauseLoop(s.M, name), "paused ralph loop for "+name)
}

// Resume resumes a loop, starting a monitor when none runs.
func (s *ManagerSource) Resume(name string) (string, error) {
	return done(ralph.ResumeLoop(s.M, name), "resumed ralph loop for "+name)
}

// Kill stops a worker and its loop, for good, as swarm kill does.
func (s *ManagerSource) Kill(name string) (string, error) {
	return done(s.M.Kill(name, worker.KillOptions{}), "killed "+name)
}

// done turns an action's error into the status line: ralph's no-op
// warnings ("already paused") are not failures.
func done(err error, ok string) (string, error) {
	var w *ralph.ErrWarning
	if errors.As(err, &w) {
		return "warning: " + w.Msg, nil
	}
	if err != nil {
		return "", err
	}
	return ok, nil
}

// AttachCommand runs swarm attach NAME on the same state root.
func (s *ManagerSource) AttachCommand(name string) *exec.Cmd {
	cmd := exec.Command(s.Self, "attach", name)
	cmd.Env = append(append([]string(nil), s.Env...), "SWARM_HOME="+s.M.Store.Root)
	return cmd
}

// Hosts is the board's reach to other hosts (swarm top --all-hosts).
type Hosts interface {
	// Rows asks every host for its rows, in parallel; a host that
	// cannot be asked has Err set.
	Rows() []HostRows
	// Run runs a swarm command on host and returns what it printed; an
	// error is one line saying why it failed.
	Run(host string, args ...string) (string, error)
	// AttachCommand attaches the terminal to a worker on host.
	AttachCommand(host, name string) *exec.Cmd
}

// HostsSource shows this machine (Local, nil when it is not asked for)
// and other hosts on one board. A worker on a host is named HOST:NAME
// (Row.Key). A host that does not answer keeps its last rows, stale.
type HostsSource struct {
	Local Source
	Hosts Hosts

	mu   sync.Mutex
	last map[string][]Row
}

var _ Source = (*HostsSource)(nil)

// Snapshot reads this machine and asks every host, at once.
func (s *HostsSource) Snapshot() (Snapshot, error) {
	var snap Snapshot
	var err error
	var hosts []HostRows
	var wg sync.WaitGroup
	wg.Go(func() { hosts = s.Hosts.Rows() })
	if s.Local != nil {
		snap, err = s.Local.Snapshot()
	}
	wg.Wait()
	if err != nil {
		return Snapshot{}, err
	}
	if snap.At.IsZero() {
		snap.At = time.Now()
	}
	snap.Hosts = s.keep(hosts)
	return snap, nil
}

// keep remembers each host's rows and gives a host that did not answer
// its last ones.
func (s *HostsSource) keep(hosts []HostRows) []HostRows {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string][]Row{}
	}
	for i, h := range hosts {
		if h.Err == "" {
			s.last[h.Host] = h.Rows
		} else {
			hosts[i].Rows = s.last[h.Host]
		}
	}
	return hosts
}

// split tells a worker on a host (HOST:NAME) from one here.
func split(key string) (host, name string, remote bool) {
	return strings.Cut(key, ":")
}

// Peek returns the last lines of a worker's screen.
func (s *HostsSource) Peek(key string, lines int) (string, error) {
	if h, n, ok := split(key); ok {
		return s.Hosts.Run(h, "peek", n, "--lines", strconv.Itoa(lines))
	}
	return s.local().Peek(key, lines)
}

// Events returns the last lines of a loop's events.
func (s *HostsSource) Events(key string, lines int) (string, error) {
	if h, n, ok := split(key); ok {
		return s.Hosts.Run(h, "ralph", "logs", n, "--lines", strconv.Itoa(lines))
	}
	return s.local().Events(key, lines)
}

// Diff returns a worker's diff against its base: on a host, swarm diff
// there (its output is shown as plain text, like every remote text).
func (s *HostsSource) Diff(key string) (string, error) {
	h, n, ok := split(key)
	if !ok {
		return s.local().Diff(key)
	}
	stat, err := s.Hosts.Run(h, "diff", n, "--stat")
	if err != nil {
		return "", err
	}
	patch, err := s.Hosts.Run(h, "diff", n)
	if err != nil {
		return "", err
	}
	return stat + "\n" + patch, nil
}

// Output returns the last lines of an ended loop's last iteration
// output: on a host, its iteration from ralph status, then that
// iteration's output.
func (s *HostsSource) Output(key string, lines int) (int, string, error) {
	h, n, ok := split(key)
	if !ok {
		return s.local().Output(key, lines)
	}
	out, err := s.Hosts.Run(h, "ralph", "status", n, "--format", "json")
	if err != nil {
		return 0, "", err
	}
	var st struct {
		Iteration int `json:"current_iteration"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Iteration < 1 {
		return 0, "", fmt.Errorf("no iteration output of %s on %s", n, h)
	}
	text, err := s.Hosts.Run(h, "ralph", "logs", n, "--iteration", strconv.Itoa(st.Iteration))
	if err != nil {
		return 0, "", err
	}
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return st.Iteration, strings.Join(all[max(0, len(all)-lines):], "\n"), nil
}

// Pause pauses a loop.
func (s *HostsSource) Pause(key string) (string, error) { return s.act(key, "pause", s.local().Pause) }

// Resume resumes a loop.
func (s *HostsSource) Resume(key string) (string, error) {
	return s.act(key, "resume", s.local().Resume)
}

// Kill stops a worker and its loop.
func (s *HostsSource) Kill(key string) (string, error) { return s.act(key, "kill", s.local().Kill) }

// act runs an action here, or on the host as swarm [ralph] VERB NAME,
// whose first line is the status.
func (s *HostsSource) act(key, verb string, here func(string) (string, error)) (string, error) {
	h, n, ok := split(key)
	if !ok {
		return here(key)
	}
	args := []string{"ralph", verb, n}
	if verb == "kill" {
		args = []string{verb, n}
	}
	out, err := s.Hosts.Run(h, args...)
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return h + ": " + first, nil
}

// AttachCommand attaches to a worker here or on its host.
func (s *HostsSource) AttachCommand(key string) *exec.Cmd {
	if h, n, ok := split(key); ok {
		return s.Hosts.AttachCommand(h, n)
	}
	return s.local().AttachCommand(key)
}

// local is this machine's source; without one, a source that says so.
func (s *HostsSource) local() Source {
	if s.Local == nil {
		return noLocal{}
	}
	return s.Local
}

// noLocal is this machine when the board does not show it.
type noLocal struct{}

var errNoLocal = errors.New("this machine is not on the board")

func (noLocal) Snapshot() (Snapshot, error)             { return Snapshot{}, nil }
func (noLocal) Peek(string, int) (string, error)        { return "", errNoLocal }
func (noLocal) Events(string, int) (string, error)      { return "", errNoLocal }
func (noLocal) Output(string, int) (int, string, error) { return 0, "", errNoLocal }

func (noLocal) Diff(string) (string, error)    { return "", errNoLocal }
func (noLocal) Pause(string) (string, error)   { return "", errNoLocal }
func (noLocal) Resume(string) (string, error)  { return "", errNoLocal }
func (noLocal) Kill(string) (string, error)    { return "", errNoLocal }
func (noLocal) AttachCommand(string) *exec.Cmd { return exec.Command("false") }
