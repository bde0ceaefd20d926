// Package exitcode is the one list of swarm's process exit codes: the
// commands' (docs/commands.md, "Exit codes of errors") and a ralph loop's
// (docs/completion.md), which ralph run, --foreground and ralph wait exit
// with. Both keep swarm.py's values.
package exitcode

const (
	// OK: the command did what was asked; a loop completed or reached
	// its cap.
	OK = 0
	// Failure: any error; a loop failed, was killed or stopped at a
	// pre-flight dialog.
	Failure = 1
	// Usage: a command line that cannot be parsed.
	Usage = 2
	// NotFound: status and peek of an unknown worker (distinct from a
	// stopped one, 1).
	NotFound = 2
	// Blocked: a loop that ended on <promise>BLOCKED:reason</promise>.
	Blocked = 2
	// Decide: a loop that ended on <promise>DECIDE:question</promise>.
	Decide = 3
	// CapIncomplete: a loop that reached its cap (max_iterations,
	// max_time) not complete: its last completion was rejected by the
	// gates (a failing --check, --require-change), or it was spawned with
	// --fail-on-cap. A plain cap is OK.
	CapIncomplete = 4
	// NotExecutable and CommandNotFound: a command that could not be
	// run, as a shell reports it (swarm _exec, an agent's wrapper shell).
	NotExecutable   = 126
	CommandNotFound = 127
	// Timeout: ralph wait --timeout passed, as timeout(1) exits.
	Timeout = 124
	// Interrupted: Ctrl-C, 128 + SIGINT.
	Interrupted = 130
	// SSH: ssh's own code for a failure of its own (no connection,
	// authentication refused), as opposed to the remote command's.
	SSH = 255
)
