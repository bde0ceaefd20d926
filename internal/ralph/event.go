package ralph

import (
	"fmt"

	"github.com/swarmtools/swarm/internal/state"
)

// Event names a line of a loop's iterations.log, "TIME [EVENT] text"
// (docs/ralph.md): swarm.py's names, which scripts and swarm.py's own
// readers match.
type Event string

// The events of iterations.log.
const (
	EventStart   Event = "START"   // an iteration starts
	EventEnd     Event = "END"     // an iteration ends: exit, reason, duration
	EventFail    Event = "FAIL"    // a failed iteration, its attempt and backoff
	EventWarn    Event = "WARN"    // something the user should know; the loop goes on
	EventFatal   Event = "FATAL"   // the agent is restarted (compaction, context)
	EventTimeout Event = "TIMEOUT" // the screen was still for the inactivity timeout
	EventLimit   Event = "LIMIT"   // a usage limit is waited out
	EventReject  Event = "REJECT"  // a completion the gates rejected
	EventPause   Event = "PAUSE"   // the loop paused
	EventResume  Event = "RESUME"  // the loop, or its agent after a limit, goes on
	EventSet     Event = "SET"     // ralph set changed the loop
	EventDone    Event = "DONE"    // the loop ended
)

// logEvent appends an event to the loop's iterations.log.
func logEvent(rs *state.RalphStore, ev Event, format string, args ...any) error {
	return rs.Log(string(ev), fmt.Sprintf(format, args...))
}
