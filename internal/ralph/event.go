package ralph

import (
	"fmt"

	"github.com/swarmtools/swarm/internal/state"
)

// Event names a line of a loop's iterations.log, "TIME [EVENT] text"
// (docs/ralph.md): swarm.py's names, which scripts and swarm.py's own
// readers match. The names are defined once, beside the log they are
// written to (state.Event); these are the loop's names for them.
type Event = state.Event

// The events of iterations.log.
const (
	EventStart   = state.EventStart   // an iteration starts
	EventEnd     = state.EventEnd     // an iteration ends: exit, reason, duration
	EventFail    = state.EventFail    // a failed iteration, its attempt and backoff
	EventWarn    = state.EventWarn    // something the user should know; the loop goes on
	EventFatal   = state.EventFatal   // the agent is restarted (compaction, context)
	EventTimeout = state.EventTimeout // the screen was still for the inactivity timeout
	EventLimit   = state.EventLimit   // a usage limit is waited out
	EventReject  = state.EventReject  // a completion the gates rejected
	EventPause   = state.EventPause   // the loop paused
	EventResume  = state.EventResume  // the loop, or its agent after a limit, goes on
	EventSet     = state.EventSet     // ralph set changed the loop
	EventDone    = state.EventDone    // the loop ended
	EventMerge   = state.EventMerge   // --on-complete merged the loop's branch, or said why not
	EventCommit  = state.EventCommit  // --auto-commit committed an iteration's work
)

// logEvent appends an event to the loop's iterations.log.
func logEvent(rs *state.RalphStore, ev Event, format string, args ...any) error {
	return rs.Log(ev, fmt.Sprintf(format, args...))
}
