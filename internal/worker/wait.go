package worker

import (
	"context"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
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
	if timeout <= 0 {
		timeout = clock.Forever
	}
	var listErr error
	done := clock.Wait(ctx, clock.Real, PollInterval(time.Second), timeout, func() bool {
		live, err := m.List()
		if err != nil {
			listErr = err
			return true
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
		return len(pending) == 0
	})
	switch {
	case listErr != nil:
		return nil, listErr
	case done:
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	var left []string
	for _, n := range names {
		if pending[n] {
			left = append(left, n)
		}
	}
	return left, nil
}
