package heartbeat

import (
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/state"
)

// Resume continues a paused heartbeat ("heartbeat resume W"): the next beat
// comes a full interval from now, and expiry moves on by the time spent
// paused. It also restarts the process of an active heartbeat whose
// process died (a crash, a reboot), as ralph resume does for a loop; and
// when a paused heartbeat's process is gone, it starts one.
func Resume(root, name string, o StartOptions) error {
	if err := state.ValidateName(name); err != nil {
		return err
	}
	s := NewStore(root, o.Warn)
	return s.WithControlLock(name, func() error {
		alive := daemon.Alive(s.LockPath(name))
		now := time.Now()
		st, err := s.Update(name, func(cur *State) (*State, error) {
			return resumeState(cur, name, alive, now)
		})
		if err != nil {
			return err
		}
		if st.Status == StatusExpired {
			return notPaused(name, StatusExpired)
		}
		if alive {
			return nil
		}
		if _, err := daemon.Start(o.spec(s, name)); err != nil {
			return fmt.Errorf("%w; the heartbeat is %s without a process (retry: swarm heartbeat resume %s)", err, st.Status, name)
		}
		return nil
	})
}

func notPaused(name, status string) error {
	return &Error{KindNotPaused, fmt.Sprintf("Heartbeat for %s is not paused (status: %s)", name, status)}
}

// resumeState is the state change of Resume. An active heartbeat past its
// expiry, found without a process, is marked expired (what its process
// would have done), and Resume then refuses it.
func resumeState(cur *State, name string, alive bool, now time.Time) (*State, error) {
	switch {
	case cur == nil:
		return nil, noHeartbeat(name)
	case cur.Status == StatusPaused:
		cur.ExpireAt = Resumed(cur.ExpireAt, cur.PausedAt, now)
		cur.PausedAt = ""
	case cur.Status == StatusActive && !alive:
		// Recovery of a dead process; nothing to move.
	default:
		return nil, notPaused(name, cur.Status)
	}
	cur.Status = StatusActive
	if Expired(cur, now) {
		cur.Status = StatusExpired
		cur.NextBeatAt = ""
		return cur, nil
	}
	cur.NextBeatAt = StampOf(now.Add(cur.Interval()))
	return cur, nil
}

// Recover restarts the process of every active heartbeat whose process is
// not running (after a reboot, or a crash), as swarm.py does when any
// command starts. It is cheap when there is nothing to do (a directory
// read and one lock probe per active heartbeat), and with lock-based
// liveness it never starts a duplicate. It returns how many it started.
func Recover(root string, o StartOptions) (int, error) {
	s := NewStore(root, o.Warn)
	states, err := s.List()
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, st := range states {
		if st.Status != StatusActive || daemon.Alive(s.LockPath(st.WorkerName)) {
			continue
		}
		err := Resume(root, st.WorkerName, o)
		var he *Error
		switch {
		case errors.As(err, &he):
			// Expired meanwhile, or no longer active: nothing to recover.
		case err != nil:
			errs = append(errs, err)
		default:
			n++
		}
	}
	return n, errors.Join(errs...)
}
