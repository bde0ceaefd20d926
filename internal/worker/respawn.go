package worker

import (
	"fmt"
	"maps"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
)

// respawnerKey marks a worker a respawn has claimed: the respawning
// command's identity (pid, start ticks, boot id, as SpawnerKey) and a
// token of its own. The claim is written under the registry lock before
// the respawn stops or starts anything, so a second respawn of the worker
// fails at once instead of starting a second window beside the first; it
// is cleared when the respawn ends, and one whose command is gone (killed
// half way) is void.
const respawnerKey = "swarm_respawner"

// respawnClaim reads a worker's respawn claim: the claimant's pid and
// token, and whether it is still running.
func respawnClaim(w *state.Worker) (pid int, token string, live bool) {
	c, _ := w.Metadata[respawnerKey].(map[string]any)
	if c == nil {
		return 0, "", false
	}
	token, _ = c["token"].(string)
	p := metaInt(c, "pid")
	if p <= 0 {
		return 0, token, false
	}
	return int(p), token, metaTarget(p, metaInt(c, "start_ticks"), c["boot_id"]).Alive()
}

// errBeingRespawned refuses a respawn of a worker another command is
// respawning.
func errBeingRespawned(name string, pid int) error {
	return hint.Errorf(fmt.Sprintf("wait for it to finish, then look: swarm status %s", name),
		"worker '%s' is being respawned by another command (pid %d)", name, pid)
}

// errRespawnLoop refuses a respawn of a loop's worker: its monitor starts
// its agent.
func errRespawnLoop(name string) error {
	return fmt.Errorf("worker '%s' runs a ralph loop (use: swarm ralph resume %s, or swarm ralph spawn --replace)", name, name)
}

// claimRespawn claims worker name for a respawn by this command and
// returns its record as claimed (the claim in its metadata, which the
// spawn's reservation checks) and the release of the claim, to be called
// when the respawn ends, however it ends. A worker another live command
// is respawning is refused at once; one a plain spawn is starting is
// waited for first, as kill and clean do.
func (m *Manager) claimRespawn(name string) (*state.Worker, func(), error) {
	w, err := m.Get(name)
	if err != nil {
		return nil, nil, err
	}
	if w.IsRalph() {
		return nil, nil, errRespawnLoop(name)
	}
	if pid, _, live := respawnClaim(w); live {
		return nil, nil, errBeingRespawned(name, pid)
	}
	if _, err := m.settled(name); err != nil {
		return nil, nil, err
	}
	token := uuid.NewString()
	var claimed state.Worker
	err = m.Store.Update(func(r *state.Registry) error {
		cur := r.Find(name)
		switch {
		case cur == nil:
			return notFound(name)
		case cur.IsRalph():
			return errRespawnLoop(name)
		}
		if pid, _, live := respawnClaim(cur); live {
			return errBeingRespawned(name, pid)
		}
		if cur.Status == state.StatusStarting {
			return hint.Errorf("try again in a moment", "worker '%s' is being spawned by another command", name)
		}
		claim := spawner()
		claim["token"] = token
		if cur.Metadata == nil {
			cur.Metadata = map[string]any{}
		}
		cur.Metadata[respawnerKey] = claim
		claimed = *cur
		claimed.Metadata = maps.Clone(cur.Metadata)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		err := m.Store.Update(func(r *state.Registry) error {
			if cur := r.Find(name); cur != nil {
				if _, t, _ := respawnClaim(cur); t == token {
					delete(cur.Metadata, respawnerKey)
				}
			}
			return nil
		})
		if err != nil {
			m.warn(fmt.Sprintf("cannot clear the respawn's claim on '%s' (it is void once this command ends): %v", name, err))
		}
	}
	return &claimed, release, nil
}

// checkClaim is the reservation's check of a respawn (rec, with the
// claim it made) against the record it replaces (old; nil when it is
// gone): the claim must still be rec's, or another command has removed or
// taken over the worker since, and the respawn must not start anything.
func checkClaim(old, rec *state.Worker) error {
	_, mine, _ := respawnClaim(rec)
	if mine == "" {
		return nil
	}
	if old == nil {
		return fmt.Errorf("worker '%s' was removed while it was being respawned", rec.Name)
	}
	if _, theirs, _ := respawnClaim(old); theirs != mine {
		return fmt.Errorf("worker '%s' was changed by another command while it was being respawned", rec.Name)
	}
	return nil
}
