package worker

import (
	"fmt"
	"sort"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// Live is a worker record with its status refreshed from tmux or the
// process table, and where it runs now.
type Live struct {
	state.Worker
	// WindowID is the tmux window (@N) when the window exists.
	WindowID string
	// PanePID is the pid of the window's first pane process; Panes is
	// how many panes the window has.
	PanePID int
	Panes   int
	// PaneDead: the window is kept (remain-on-exit) but its command has
	// exited.
	PaneDead bool
	// ExitCode is how a stopped worker's command ended, when that is
	// known (HasExit): from tmux for a dead pane, from its supervisor's
	// record for a process worker.
	ExitCode int
	HasExit  bool
	// Ended is when a stopped worker stopped, when that is known: its
	// process's recorded end, or the kill that stopped it. Zero otherwise.
	Ended time.Time
	// Crashed: the record is "starting" but the process spawning it is
	// gone (killed mid-spawn).
	Crashed bool
	// Lost: a tmux worker whose record says running while its window is
	// gone, and whose command did not end by itself (a tmux server
	// killed, a reboot): swarm restore brings it back.
	Lost bool
	// NotStarted: a ralph worker whose loop was made with --no-run and
	// never run (set by internal/restore's Mark, as Lost is for loops).
	NotStarted bool
}

// Running reports the refreshed status.
func (l *Live) Running() bool { return l.Status == state.StatusRunning }

// Refresh computes the live status of workers with one tmux process per
// server in use, however many workers there are.
func (m *Manager) Refresh(workers []state.Worker) ([]Live, error) {
	return m.refresh(workers, nil)
}

// refresh is Refresh, taking the listing of early's server from early.
func (m *Manager) refresh(workers []state.Worker, early *listing) ([]Live, error) {
	byServer, err := m.listServers(workers, early)
	if err != nil {
		return nil, err
	}
	index := map[tmux.Server]*windowIndex{}
	for s, windows := range byServer {
		index[s] = newWindowIndex(windows)
	}
	out := make([]Live, len(workers))
	for i, w := range workers {
		l := Live{Worker: w}
		l.Status = state.StatusStopped
		if w.Status == state.StatusStarting {
			// Being spawned: its window or process may not exist yet.
			// A spawn whose process died crashed: it shows stopped, and
			// List rolls it back.
			l.Status, l.Crashed = state.StatusStarting, !spawnerAlive(&l.Worker)
			if l.Crashed {
				l.Status = state.StatusStopped
			}
			out[i] = l
			continue
		}
		switch {
		case w.Tmux != nil:
			// Only the worker's own server's windows: window ids are
			// per server, and another server may have one of the same.
			if win, ok := index[Server(&w)].find(&l.Worker); ok {
				l.WindowID, l.PanePID, l.PaneDead, l.Panes = win.WindowID, win.PID, win.AllDead, win.Panes
				if win.AllDead && win.ExitKnown() {
					l.ExitCode, l.HasExit = win.ExitCode(), true
				}
				if win.AllDead {
					m.windowEnd(&l, win)
				}
				// A ralph window keeps its dead pane between iterations;
				// the loop removes the window when it ends.
				if !win.AllDead || w.IsRalph() {
					l.Status = state.StatusRunning
				}
			} else if _, reachable := byServer[Server(&w)]; reachable {
				l.Lost = m.lost(&l, w.Status)
			}
		case w.PID != nil:
			if t, ok := processTarget(&l.Worker); ok && t.Alive() {
				l.Status = state.StatusRunning
			} else {
				m.processEnd(&l)
			}
		}
		if !l.Running() && l.Ended.IsZero() {
			l.Ended = stoppedAt(&l.Worker)
		}
		out[i] = l
	}
	return out, nil
}

// listServers lists the windows of every tmux server the workers live
// in, one tmux process per server: early's (started before, as the
// registry was read) or a new one. A server only one of the workers
// lives in, whose window id is recorded, is asked for that window alone
// (status NAME asks for one window, however many the server has). A
// worker whose record names a server no client may connect to (Server,
// tmux.Server.Check), or a socket another user may listen on
// (tmux.Server.CheckOwner: the worker's own server is gone), is left
// out, with a warning: it shows stopped, and the others are listed.
func (m *Manager) listServers(workers []state.Worker, early *listing) (map[tmux.Server][]tmux.Window, error) {
	var servers []tmux.Server
	alone := map[tmux.Server]*state.Worker{} // the one worker of a server
	refused := map[tmux.Server]error{}       // why a server's socket may not be connected to
	for i := range workers {
		w := &workers[i]
		if w.Tmux == nil {
			continue
		}
		s := Server(w)
		err, seen := refused[s]
		if !seen {
			if err = s.Check(); err == nil {
				err = s.CheckOwner()
			}
			refused[s] = err
		}
		if err != nil {
			m.warn(fmt.Sprintf("worker '%s' cannot be reached: %v; it is listed as stopped", w.Name, err))
			continue
		}
		if _, seen := alone[s]; seen {
			alone[s] = nil
			continue
		}
		alone[s] = w
		servers = append(servers, s)
	}
	byServer := map[tmux.Server][]tmux.Window{}
	for _, s := range servers {
		var panes []tmux.Pane
		var err error
		id, one := windowTarget(alone[s])
		switch {
		case early != nil && early.server == s:
			panes, err = early.result()
		case one:
			panes, err = m.TmuxFor(s).WindowPanes(id)
		default:
			panes, err = m.TmuxFor(s).ListPanes()
		}
		if err != nil {
			return nil, err
		}
		byServer[s] = tmux.Windows(panes)
	}
	return byServer, nil
}

// windowTarget is the recorded window id of w (nil: none) when it is one
// tmux can be asked for alone: @ and digits.
func windowTarget(w *state.Worker) (string, bool) {
	if w == nil {
		return "", false
	}
	id, _ := w.Metadata[WindowIDKey].(string)
	if len(id) < 2 || id[0] != '@' {
		return "", false
	}
	for i := 1; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return "", false
		}
	}
	return id, true
}

// listing is a tmux server's listing, started ahead of its use.
type listing struct {
	server tmux.Server
	done   chan struct{}
	panes  []tmux.Pane
	err    error
}

// startListing starts listing the server of w, the first record with a
// window (state.Store.LoadEarly), while the registry is being decoded:
// the listing's tmux process and the decoding take about as long at 500
// workers, and run at once. A *tmux.Client's process is started before
// it returns (tmux.Client.StartListPanes), so the decoding does not
// compete with its fork and exec. nil when the server may not be
// connected to.
func (m *Manager) startListing(w *state.Worker) *listing {
	s := Server(w)
	if s.Check() != nil {
		return nil
	}
	l := &listing{server: s, done: make(chan struct{})}
	tc := m.TmuxFor(s)
	list := tc.ListPanes
	if st, ok := tc.(interface{ StartListPanes() *tmux.PaneListing }); ok {
		list = st.StartListPanes().Wait
	}
	go func() {
		defer close(l.done)
		l.panes, l.err = list()
	}()
	return l
}

// result waits for the listing.
func (l *listing) result() ([]tmux.Pane, error) {
	<-l.done
	return l.panes, l.err
}

// wait waits for the listing, if there is one, to end: its tmux process
// does not outlive the call that started it.
func (l *listing) wait() {
	if l != nil {
		<-l.done
	}
}

// List returns every worker with live status, sorted by start time.
// Crashed spawns are rolled back first (rollBackCrashed); one that cannot
// be is listed as it is, stopped.
func (m *Manager) List() ([]Live, error) { return m.list(true) }

// ListAsIs is List without the rollback of crashed spawns: a listing
// that changes nothing (restore --dry-run). A crashed spawn is listed
// "starting", Crashed.
func (m *Manager) ListAsIs() ([]Live, error) { return m.list(false) }

// list is List; it rolls back crashed spawns and lists again once at most
// (rollBack), so a registry that cannot be written is still listed.
func (m *Manager) list(rollBack bool) ([]Live, error) {
	var early *listing
	defer func() { early.wait() }()
	reg, err := m.Store.LoadEarly(func(w *state.Worker) { early = m.startListing(w) })
	if err != nil {
		return nil, err
	}
	live, err := m.refresh(reg.Workers, early)
	if err != nil {
		return nil, err
	}
	if rollBack && m.rollBackCrashed(live) {
		return m.list(false)
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].Started.Before(live[j].Started.Time) })
	return live, nil
}

// Status returns one worker with live status, rolling back a crashed spawn
// of it first, as List does.
func (m *Manager) Status(name string) (*Live, error) { return m.status(name, true) }

// status is Status; like list it looks again once at most.
func (m *Manager) status(name string, rollBack bool) (*Live, error) {
	w, err := m.Get(name)
	if err != nil {
		return nil, err
	}
	live, err := m.Refresh([]state.Worker{*w})
	if err != nil {
		return nil, err
	}
	if rollBack && m.rollBackCrashed(live) {
		return m.status(name, false)
	}
	return &live[0], nil
}

// lost reports whether a tmux worker whose window is gone was lost: its
// record says running (kill marks it stopped), it is no loop's (a loop
// is lost by its monitor: internal/restore), and its command did not end
// by itself: no record of its end (its shell was hung up with the window,
// or killed), or one the shell wrote after it was terminated, or of a
// command that died of SIGHUP or SIGTERM (the tmux server's end, a
// shutdown). An end it recorded is kept.
func (m *Manager) lost(l *Live, recorded string) bool {
	if recorded != state.StatusRunning || l.IsRalph() {
		return false
	}
	token, _ := l.Metadata[WindowTokenKey].(string)
	e, ok := m.Store.WindowExit(l.Name)
	if !ok || token == "" || e.Token != token {
		return true
	}
	if e.Signal != "" || e.ExitCode == sigExit(syscall.SIGHUP) || e.ExitCode == sigExit(syscall.SIGTERM) {
		return true
	}
	l.ExitCode, l.HasExit, l.Ended = e.ExitCode, true, e.Ended
	return false
}

// sigExit is the shell's exit status of a command killed by sig.
func sigExit(sig syscall.Signal) int { return 128 + int(sig) }

// processEnd fills in how a stopped process worker ended, from its
// supervisor's record, if that record is about the worker's own process
// (the pid and start ticks the spawn recorded).
func (m *Manager) processEnd(l *Live) {
	ticks := metaInt(l.Metadata, StartTicksKey)
	if l.PID == nil || ticks == 0 {
		return
	}
	e, ok := m.Store.ProcessExit(l.Name)
	if !ok || e.PID != *l.PID || e.StartTicks != ticks {
		return
	}
	l.ExitCode, l.HasExit, l.Ended = e.ExitCode, true, e.Ended.Time
}

// windowEnd fills in how a dead window's command ended: its shell's
// record (windowCommand), else what tmux knows. When it ended is what
// status says how long it ran from, not an uptime that keeps growing.
func (m *Manager) windowEnd(l *Live, win tmux.Window) {
	token, _ := l.Metadata[WindowTokenKey].(string)
	if e, ok := m.Store.WindowExit(l.Name); ok && token != "" && e.Token == token {
		l.ExitCode, l.HasExit, l.Ended = e.ExitCode, true, e.Ended
		return
	}
	l.Ended = win.DeadAt
}

// stoppedAt is when kill stopped the worker (StoppedAtKey), or zero.
func stoppedAt(w *state.Worker) time.Time {
	s, _ := w.Metadata[StoppedAtKey].(string)
	if s == "" {
		return time.Time{}
	}
	t, err := state.ParseTimestamp(s)
	if err != nil {
		return time.Time{}
	}
	return t.Time
}
