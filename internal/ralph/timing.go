package ralph

import (
	"time"

	"github.com/swarmtools/swarm/internal/worker"
)

// Timings and thresholds of the loop, each with the reason for its value.
const (
	// DefaultPoll paces the watch of an agent (docs/ralph.md: the pane is
	// captured every 2 s); SWARM_POLL_INTERVAL shortens it for tests.
	DefaultPoll = 2 * time.Second
	// MaxReadyPoll paces ready detection (docs/ralph.md: every 0.5 s).
	MaxReadyPoll = 500 * time.Millisecond
	// DefaultStopGrace is the agent's time between SIGTERM and SIGKILL
	// when an iteration ends (docs/ralph.md: 10 s grace).
	DefaultStopGrace = 10 * time.Second
	// paneDeadWait bounds the wait for tmux to mark a stopped agent's
	// pane dead after the signals: the next respawn must not race it.
	paneDeadWait = 3 * time.Second
	// maxPollErrors consecutive failed polls of a window that tmux still
	// lists (a server restarting, a busy system) count as the window lost.
	maxPollErrors = 5
	// exitStatusWait and exitStatusGap: tmux may mark a pane dead a
	// moment before the wrapper's exit file or tmux's own exit status is
	// readable; look for them this long, this often, before calling the
	// exit unknown.
	exitStatusWait = 500 * time.Millisecond
	exitStatusGap  = 25 * time.Millisecond
	// contextRestartMargin: at --max-context P the agent is asked to wrap
	// up; at P+15 it is restarted (docs/ralph.md).
	contextRestartMargin = 15
	// screenChangePersist: the last screen change is written to state at
	// most this often (ralph status shows it; a write per poll is waste).
	screenChangePersist = time.Second
	// echoContext is how much output before the delivery point primes the
	// detector, so an echo of the prompt is recognised as one.
	echoContext = 2048
	// settleMax, settleTick and settleQuiet: after a paste, the output is
	// watched until it has not grown for settleQuiet (the agent finished
	// echoing), at most settleMax, before Enter is pressed.
	settleMax   = 2 * time.Second
	settleTick  = 25 * time.Millisecond
	settleQuiet = 150 * time.Millisecond
	// echoWait bounds the wait for an agent to show a pasted text in its
	// input box (Claude Code under load took 1-4 s); echoPoll paces it
	// and the check after Enter. submitWait: text still in the box this
	// long after Enter means the key was dropped; it is pressed again at
	// most maxEnterRetries times.
	echoWait        = 15 * time.Second
	echoPoll        = 100 * time.Millisecond
	submitWait      = 3 * time.Second
	maxEnterRetries = 2
	// outputCheck paces the look at the agent's output and events file
	// between polls; outputQuiet is how long output that was flowing
	// must stop for the screen to be polled before the poll is due (a
	// turn that ended). A look is a stat, but the monitor's wakeup for
	// it is what costs (timers, the Go scheduler): at 100 ms a monitor
	// watching a busy Claude Code used 0.30% of a core, 1.7x a loop
	// running one tmux command per poll; at 300 ms, 0.17% (0.9x). Output
	// that stops is seen 300 to 600 ms later, an event within 300 ms.
	outputCheck = 300 * time.Millisecond
	outputQuiet = 300 * time.Millisecond
	// statusCheck paces the wait for the status line to catch up after
	// the agent reported its turn's end (statusSettle at most).
	statusCheck = 100 * time.Millisecond
	// minPollGap: the shortest wait between two polls of the watch.
	minPollGap = 10 * time.Millisecond
	// earlyPollGap: the shortest wait before a poll brought forward by
	// output going quiet; half the default poll, so an agent printing in
	// bursts costs at most two polls per interval, and a finished turn is
	// still seen within a second.
	earlyPollGap = time.Second
	// monitorStartWait bounds the wait for a background monitor to take
	// its lock, and firstIterationWait the wait for its first iteration,
	// so that spawn returns with the loop visibly running.
	monitorStartWait   = 10 * time.Second
	firstIterationWait = 10 * time.Second
	// firstIterationPoll paces spawn's look for the first iteration.
	firstIterationPoll = 20 * time.Millisecond
	// monitorExitAfterUnlock bounds the wait for a monitor's process to
	// end once it gave up its lock (its last act): kill returns with the
	// monitor gone, not merely leaving.
	monitorExitAfterUnlock = 2 * time.Second
	// monitorExitPoll paces kill's wait for a monitor to exit.
	monitorExitPoll = 25 * time.Millisecond
	// replaceWait bounds the wait for an old monitor to exit on --replace.
	replaceWait = 30 * time.Second
	// deadMonitorLooks: ralph wait reports a dead monitor only after this
	// many looks, because a monitor being restarted is briefly absent.
	deadMonitorLooks = 3
	// quietShowsOutput: ralph status prints the last lines of a screen
	// unchanged for longer than this (docs/ralph.md: over 60 s).
	quietShowsOutput = 60 * time.Second
	// lastOutputLines is how many lines ralph status prints then.
	lastOutputLines = 5
	// onExitTimeout bounds an --on-exit hook; onExitWaitDelay is how long
	// its leftover children may hold its output open.
	onExitTimeout   = 60 * time.Second
	onExitWaitDelay = 2 * time.Second
	// checkKillGrace is a timed-out check's time between SIGTERM and
	// SIGKILL.
	checkKillGrace = 2 * time.Second
	// checkDrainWait is how long a check's output pipe may stay open once
	// the check has ended and its process group is stopped: only a
	// process that left the group (setsid) still holds it, and the loop
	// does not wait for that one.
	checkDrainWait = 2 * time.Second
	// DefaultCheckTimeout bounds each --check command, so a hung test
	// suite cannot stall the loop (docs/completion.md).
	DefaultCheckTimeout = 120 * time.Second
	// DefaultReadyTimeout is the wait for the agent to look ready before
	// its prompt is typed: spawn's (docs/ralph.md).
	DefaultReadyTimeout = worker.DefaultReadyTimeout
	// noBudget stands for "no --max-time": a wait is never cut short.
	noBudget = 24 * time.Hour
	// maxBackoff caps the wait after consecutive failures (docs/ralph.md:
	// at most 5 minutes).
	maxBackoff = 300 * time.Second
	// stopHookSettle is how long a Stop held for the user's own Stop
	// hooks (reported.go) is at least held: a hook that blocks the turn's
	// end answers within it and the agent is at work again (a new
	// request, its spinner) before its idle screen can end the turn.
	stopHookSettle = 2 * time.Second
)

// killWait is how long kill waits for a loop's monitor to notice and exit:
// a poll to see the kill, the agent's stop grace, and slack for a slow
// machine.
func killWait(poll time.Duration) time.Duration {
	return 4*poll + DefaultStopGrace + 5*time.Second
}
