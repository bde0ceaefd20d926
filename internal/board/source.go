package board

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/swarmtools/swarm/internal/ralph"
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
