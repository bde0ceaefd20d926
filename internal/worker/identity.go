package worker

import (
	"os"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// Metadata keys swarm keeps in a worker record (swarm.py keeps metadata as
// an opaque object, so these travel safely through its files).
const (
	// WindowIDKey is the tmux window id (@N) made for the worker: the
	// window is found by it, so a window of the same name left over by
	// someone else is never taken for the worker's.
	WindowIDKey = "tmux_window_id"
	// WindowTokenKey is a random token made for each window swarm
	// creates, and stored in the window itself (a window option,
	// tmux.WindowSpec.Tag) by the tmux call that creates it. Window ids
	// start again from @0 with every tmux server: a server that exited
	// (its last window closed, kill-server, a reboot) is followed by one
	// whose windows, the user's own among them, have the ids of the old
	// one's. The token tells the worker's window from all of them
	// (WindowOf).
	WindowTokenKey = "tmux_window_token"
	// SocketPathKey is the socket path of the tmux server the worker's
	// window lives in (tmux.Server.Path): every later command reaches
	// that server by it, from inside any tmux server or none. It lives
	// in metadata because swarm.py builds its TmuxInfo from every key of
	// the record's "tmux" object and fails on one it does not know.
	SocketPathKey = "tmux_socket_path"
	// StartTicksKey is a process worker's start time in clock ticks, its
	// exact identity (proc.Target).
	StartTicksKey = "start_ticks"
	// StoppedAtKey is when kill stopped a running worker: with the
	// start time, how long it ran (a process worker's supervisor records
	// its own end, which is preferred).
	StoppedAtKey = "stopped_at"
	// BootIDKey is the boot id of the boot the process worker started in
	// (proc.BootID), beside its start ticks: ticks count from boot, so
	// after a reboot the same pid and ticks may be someone else's.
	BootIDKey = "boot_id"
	// SpawnerKey identifies the process spawning the worker while the
	// record is "starting": if it dies, the spawn crashed.
	SpawnerKey = "swarm_spawner"
	// worktreeMadeKey marks a worktree this spawn created (undone if the
	// spawn crashes), as opposed to an existing one it reuses.
	worktreeMadeKey = "swarm_worktree_created"
	// branchMadeKey is the commit a branch this spawn makes is made at,
	// recorded before git makes it (undone if the spawn crashes, while
	// the branch still points there).
	branchMadeKey = "swarm_branch_created"
	// replacingKey marks a respawn: its crashed spawn keeps the record
	// (stopped) instead of removing it.
	replacingKey = "swarm_replacing"
	// spawnTokenKey is a token the spawn records before it makes
	// anything, and gives what it makes: the tmux window's tag, the
	// process worker's environment (SpawnTokenEnv). A spawn that dies
	// before recording a window id or pid is rolled back by the token.
	spawnTokenKey = "swarm_spawn_token"
	// worktreePlanKey is the worktree a spawn is about to create (path,
	// branch, and whether either existed), recorded before git runs, so
	// a spawn that dies after git made it but before recording it is
	// rolled back too.
	worktreePlanKey = "swarm_worktree_plan"
)

// SpawnTokenEnv carries a process worker's spawn token in its environment.
const SpawnTokenEnv = "SWARM_SPAWN_TOKEN"

// spawnKeys are the metadata keys that live only while a record is
// "starting".
var spawnKeys = []string{SpawnerKey, replacingKey, worktreeMadeKey, branchMadeKey, spawnTokenKey, worktreePlanKey, respawnerKey}

// Lister lists a tmux server's panes.
type Lister interface {
	ListPanes() ([]tmux.Pane, error)
}

// WindowOf finds a worker's window among the windows of its server
// (windowIs says which window is the worker's).
func WindowOf(windows []tmux.Window, w *state.Worker) (tmux.Window, bool) {
	if w.Tmux == nil {
		return tmux.Window{}, false
	}
	for _, win := range windows {
		if windowIs(win, w) {
			return win, true
		}
	}
	return tmux.Window{}, false
}

// windowIndex finds workers' windows among the windows of their server
// as WindowOf does, without looking through all of them for each worker:
// a listing of 500 workers would look at 250,000 windows.
type windowIndex struct {
	windows []tmux.Window
	byTag   map[string][]int // in list order
	byID    map[string]int
	byName  map[[2]string]int // the first window of each session and name
}

func newWindowIndex(windows []tmux.Window) *windowIndex {
	n := len(windows)
	x := &windowIndex{windows: windows, byTag: make(map[string][]int, n), byID: make(map[string]int, n), byName: make(map[[2]string]int, n)}
	for i, win := range windows {
		if win.Tag != "" {
			x.byTag[win.Tag] = append(x.byTag[win.Tag], i)
		}
		if _, ok := x.byID[win.WindowID]; !ok {
			x.byID[win.WindowID] = i
		}
		if _, ok := x.byName[[2]string{win.Session, win.WindowName}]; !ok {
			x.byName[[2]string{win.Session, win.WindowName}] = i
		}
	}
	return x
}

// find returns the first window windowIs takes for the worker's; none
// from a nil index (a server that was not listed).
func (x *windowIndex) find(w *state.Worker) (tmux.Window, bool) {
	if x == nil || w.Tmux == nil {
		return tmux.Window{}, false
	}
	id, _ := w.Metadata[WindowIDKey].(string)
	token, _ := w.Metadata[WindowTokenKey].(string)
	i, ok := -1, false
	switch {
	case token != "":
		for _, j := range x.byTag[token] {
			if id == "" || x.windows[j].WindowID == id {
				i, ok = j, true
				break
			}
		}
	case id != "":
		i, ok = x.byID[id]
	default:
		i, ok = x.byName[[2]string{w.Tmux.Session, w.Tmux.Window}]
	}
	if !ok || !windowIs(x.windows[i], w) {
		return tmux.Window{}, false
	}
	return x.windows[i], true
}

// windowIs reports whether win is the worker's window. A window id alone
// never is: ids are handed out again by the next tmux server.
//
//   - A record with a window token (WindowTokenKey): the window carrying
//     that token, with the recorded id when one is recorded. Any other
//     window, whatever its id or name, is not the worker's, which is then
//     stopped: its window is gone.
//   - A record of an older swarm (an id, no token): the window with that
//     id and the exact session and window name recorded, which swarm
//     gave it; the user's own windows do not have swarm's session name.
//   - A record of swarm.py (neither): the window with the exact session
//     and window name, as swarm.py finds it.
func windowIs(win tmux.Window, w *state.Worker) bool {
	id, _ := w.Metadata[WindowIDKey].(string)
	token, _ := w.Metadata[WindowTokenKey].(string)
	named := win.Session == w.Tmux.Session && win.WindowName == w.Tmux.Window
	switch {
	case token != "":
		return win.Tag == token && (id == "" || win.WindowID == id)
	case id != "":
		return win.WindowID == id && named
	}
	return named
}

// FindWindow looks a worker's window up with one tmux listing.
func FindWindow(tc Lister, w *state.Worker) (tmux.Window, bool, error) {
	panes, err := tc.ListPanes()
	if err != nil {
		return tmux.Window{}, false, err
	}
	win, ok := WindowOf(tmux.Windows(panes), w)
	return win, ok, nil
}

// metaTarget is the identity of a process recorded as a pid, start ticks
// and boot id (any of them absent in older records: a missing boot id
// compares the ticks alone, proc.Target).
func metaTarget(pid, ticks int64, boot any) proc.Target {
	b, _ := boot.(string)
	return proc.Target{PID: int(pid), Ticks: ticks, Boot: b}
}

// metaInt reads a number from metadata (JSON numbers load as float64).
func metaInt(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// spawner is this process's identity, recorded while a spawn is under way.
func spawner() map[string]any {
	t, _ := proc.Identify(os.Getpid())
	return map[string]any{"pid": t.PID, "start_ticks": t.Ticks, "boot_id": t.Boot}
}

// spawnerAlive reports whether the process spawning a "starting" worker
// still runs (a record without one, from an older swarm, counts as dead).
func spawnerAlive(w *state.Worker) bool {
	sp, _ := w.Metadata[SpawnerKey].(map[string]any)
	pid, ticks := metaInt(sp, "pid"), metaInt(sp, "start_ticks")
	if pid <= 0 {
		return false
	}
	return metaTarget(pid, ticks, sp["boot_id"]).Alive()
}

// processTarget is a process worker's identity: exact when its start
// ticks (and boot) were recorded, else (a record written by swarm.py) from
// its start time: from just before `started` to proc.SpawnSlack after.
func processTarget(w *state.Worker) (proc.Target, bool) {
	if w.PID == nil {
		return proc.Target{}, false
	}
	if ticks := metaInt(w.Metadata, StartTicksKey); ticks > 0 {
		t := metaTarget(int64(*w.PID), ticks, w.Metadata[BootIDKey])
		return t, t.Exists()
	}
	return proc.SameAs(*w.PID, w.Started.Time, proc.SpawnSlack)
}
