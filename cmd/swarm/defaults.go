package main

import "time"

// Defaults of the command-line flags, one place, each with its reason.
const (
	// defaultReadyTimeout is how long --ready-wait, and a ralph loop before
	// typing its prompt, waits for the agent to look ready (swarm.py's
	// --ready-timeout 120): long enough for a cold start of an agent CLI
	// that loads plugins and checks for updates.
	defaultReadyTimeout = 120 * time.Second

	// ralphMaxIterations is swarm ralph spawn's --max-iterations (swarm.py).
	// spawn --ralph has none: seed 004 makes the flag required there, so a
	// loop never runs without a cap someone chose.
	ralphMaxIterations = 50
	// highIterations is the count above which spawning a loop warns that
	// it "may consume significant resources" (seed 004): every iteration
	// is a fresh agent session, paid for in tokens.
	highIterations = 50

	// ralphInactivity is swarm ralph spawn's --inactivity-timeout
	// (swarm.py): an agent can think for minutes without redrawing.
	ralphInactivity = 180 * time.Second
	// spawnRalphInactivity is spawn --ralph's --inactivity-timeout (seed
	// 004's default): its loops are expected to restart a stalled agent
	// within a minute.
	spawnRalphInactivity = 60 * time.Second
	// minInactivity is the shortest --inactivity-timeout: below a second
	// every poll of the screen would restart the agent.
	minInactivity = time.Second

	// defaultCheckTimeout bounds each --check command (SPEC §4.3), so a
	// hung test suite cannot stall the loop.
	defaultCheckTimeout = 120 * time.Second
	// defaultRestartDelay is the pause between iterations (SPEC §4.2): a
	// crash-looping agent does not spin the CPU.
	defaultRestartDelay = time.Second
	// defaultCompletionPromise is the word of <promise>WORD</promise> that
	// completes a loop (SPEC §4.3).
	defaultCompletionPromise = "COMPLETE"
	// maxContextPercent is the upper bound of --max-context (0 is off).
	maxContextPercent = 100

	// defaultPeekLines is peek's -n (swarm.py): one screen of an agent.
	defaultPeekLines = 30
	// defaultLogsLines is logs --lines (swarm.py): enough scrollback to see
	// what happened, not the whole history.
	defaultLogsLines = 1000
	// defaultRalphLogsLines is ralph logs --lines: the latest events of a
	// loop, about five iterations' worth.
	defaultRalphLogsLines = 50
)
