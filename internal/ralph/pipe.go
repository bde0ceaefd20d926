package ralph

import (
	"github.com/swarmtools/swarm/internal/tmux"
)

// keepPiping restarts the piping of the agent's output into the
// iteration's log when tmux stopped it: the program it piped to (swarm
// _logpipe and its standby) died, and tmux does not pipe again by itself.
// Without the log, no completion signal would be seen. The output in
// between is lost, so it is said (WARN). A dead pane has nothing more to
// pipe.
func (e *Engine) keepPiping(t *turn, ps tmux.PaneStatus) {
	if ps.Dead || ps.Piped {
		return
	}
	e.log(EventWarn, "iteration %d: the agent's output stopped reaching its log (the log writer died); piping again, output in between is lost", t.iter)
	e.say("iteration %d: output log writer died; restarted (output in between lost)", t.iter)
	if err := t.tc.PipeTo(t.window, t.out, e.logSink(t.st)); err != nil {
		e.say("cannot pipe the agent's output again: %v", err)
	}
}
