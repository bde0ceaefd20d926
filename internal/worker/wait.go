package worker

import (
	"context"
	"time"

	"github.com/swarmtools/swarm/internal/proc"
)

func procAlive(pid int) bool { return proc.Alive(pid) }

// Wait blocks until every named worker has stopped, calling onExit as each
// one does, or until timeout (0: none) passes; it returns the names still
// running then.
func (m *Manager) Wait(ctx context.Context, names []string, timeout time.Duration, onExit func(string)) ([]string, error) {
	pending := map[string]bool{}
	for _, n := range names {
		if _, err := m.Get(n); err != nil {
			return nil, err
		}
		pending[n] = true
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	interval := PollInterval(time.Second)
	for {
		live, err := m.List()
		if err != nil {
			return nil, err
		}
		byName := map[string]*Live{}
		for i := range live {
			byName[live[i].Name] = &live[i]
		}
		for _, n := range names {
			if !pending[n] {
				continue
			}
			if l, ok := byName[n]; !ok || !l.Running() {
				delete(pending, n)
				onExit(n)
			}
		}
		if len(pending) == 0 {
			return nil, nil
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			var left []string
			for _, n := range names {
				if pending[n] {
					left = append(left, n)
				}
			}
			return left, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}
