package ralph

import (
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/notify"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

// What the loop does for the work's life around it (issue 19): merging a
// finished worker's branch (--on-complete) and telling a person what
// happened (--notify, notify in config.json). The engine calls in at two
// places only: afterEnd at the top of onExit (verify.go), and noteEvent
// from log (engine.go) for the events that need a person.

// notifications delivers this process's notifications in the background
// (the monitor runs one loop; ralph run and --foreground wait for them
// before exiting: WaitNotifications).
var notifications = &notify.Dispatcher{}

// WaitNotifications gives the notifications still being delivered up to
// timeout to finish, and reports whether they all did. A monitor calls it
// once its loop is done, so a loop's last notification is not lost with
// the process; one killed outright loses what was not yet delivered.
func WaitNotifications(timeout time.Duration) bool { return notifications.Wait(timeout) }

// Notifier is the program a desktop notification runs.
const Notifier = notify.DesktopCommand

// afterEnd runs when the loop has ended, before its on-exit hooks: the
// on-complete merge, then the end's notifications (with what the merge
// did). The desktop notification of --notify stays onExit's own.
func (e *Engine) afterEnd(st *state.Ralph, code int) {
	merged := e.completeMerge(st)
	ev := notify.Event{
		Event: "end", Worker: e.Name, ExitReason: string(st.ExitReason), ExitCode: &code,
		ExitDetail: string(st.ExitDetail), Iterations: st.CurrentIteration, Merge: merged,
	}
	e.sendNotifications(st, ev, st.Notify)
}

// noteEvent notifies the events of the loop's log that need a person: a
// pause (a dialog, the agent's WAIT file, a stop of the monitor) and a
// usage limit being waited out.
func (e *Engine) noteEvent(event state.Event, text string) {
	kinds := map[state.Event]string{state.EventPause: "pause", state.EventLimit: "limit"}
	kind, ok := kinds[event]
	if !ok {
		return
	}
	st, err := e.RS.Load()
	if err != nil {
		return
	}
	e.sendNotifications(st, notify.Event{Event: kind, Worker: e.Name, ExitDetail: text, Iterations: st.CurrentIteration}, false)
}

// sendNotifications sends ev to the loop's targets and config.json's,
// without the desktop when skipDesktop (onExit shows that one). A target
// that cannot be used is said in the loop's output, and skipped.
func (e *Engine) sendNotifications(st *state.Ralph, ev notify.Event, skipDesktop bool) {
	specs := append([]string(nil), st.NotifyTo...)
	if st.Notify {
		specs = append(specs, notify.Desktop)
	}
	cfg, err := e.M.Store.Config()
	switch {
	case errors.Is(err, state.ErrUnsafe):
		// Another user's targets would get this user's events.
		e.say("notify of %s not used: %v", e.M.Store.ConfigPath(), err)
	case err == nil:
		specs = append(specs, cfg.Notify...)
	}
	var targets []notify.Target
	for _, s := range specs {
		t, err := notify.Parse(s)
		switch {
		case err != nil:
			e.say("not notified: %v", err)
		case skipDesktop && t.Kind == notify.Desktop:
		case !containsTarget(targets, t):
			targets = append(targets, t)
		}
	}
	if len(targets) > 0 {
		notifications.Send(targets, ev, func(msg string) { e.say("%s", msg) })
	}
}

func containsTarget(ts []notify.Target, t notify.Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// completeMerge merges the worker's branch into its base when the loop
// was spawned with --on-complete and ended complete (a completion its
// checks accepted). It says what it did, in the loop's output and log,
// and returns that ("" when it did nothing).
func (e *Engine) completeMerge(st *state.Ralph) string {
	if st.OnComplete == "" || !accepted(st.ExitReason) {
		return ""
	}
	res, err := e.M.Merge(e.Name, worker.MergeOptions{Strategy: st.OnComplete})
	var msg string
	switch {
	case errors.Is(err, worktree.ErrNothingToMerge):
		msg = "on-complete merge: " + err.Error()
	case err != nil:
		msg = "on-complete merge not done: " + err.Error()
		if h := hint.Of(err); h != "" {
			msg += " (" + h + ")"
		}
	default:
		msg = fmt.Sprintf("on-complete merge: merged %s into %s (%s, %d commit(s)): %.12s -> %.12s",
			res.Branch, res.Into, st.OnComplete, len(res.Commits), res.IntoCommit, res.NewCommit)
	}
	e.log(EventMerge, "%s", msg)
	e.say("%s", msg)
	return msg
}
