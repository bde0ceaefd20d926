package worker

import (
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// supervisor is the supervising command of process worker name, or nil.
func (m *Manager) supervisor(name string) []string {
	if m.Supervisor == nil {
		return nil
	}
	return m.Supervisor(m.Store.ExitPath(name))
}

// Supervise is the body of the supervisor of a process worker (swarm
// _supervise): it starts path with argv (proc.Supervise) and records how
// it ended in exitFile, which status and ls read (the worker's state
// root's ExitPath).
func Supervise(exitFile, path string, argv []string) error {
	end, err := proc.Supervise(path, argv)
	if err != nil {
		return err
	}
	return state.WriteProcessExit(exitFile, state.ProcessExit{
		PID: end.Target.PID, StartTicks: end.Target.Ticks, ExitCode: end.Code, Ended: state.Timestamp{Time: end.Ended},
	})
}
