package main

import (
	"time"

	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worker"
)

// Defaults of the command-line flags, one place, each with its reason.
// A default the packages below also apply (an option left zero) is
// theirs, and named here from there.
const (
	// defaultReadyTimeout is spawn's and ralph spawn's --ready-timeout.
	defaultReadyTimeout = worker.DefaultReadyTimeout

	// ralphMaxIterations is swarm ralph spawn's --max-iterations (swarm.py).
	// spawn --ralph has none: the flag is required there (docs/ralph.md),
	// so a loop never runs without a cap someone chose.
	ralphMaxIterations = 50
	// highIterations is the count above which spawning a loop warns that
	// it "may consume significant resources" (swarm.py's warning): every
	// iteration is a fresh agent session, paid for in tokens.
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

	// defaultCheckTimeout bounds each --check command.
	defaultCheckTimeout = ralph.DefaultCheckTimeout
	// defaultRestartDelay is the pause between iterations (docs/ralph.md):
	// a crash-looping agent does not spin the CPU.
	defaultRestartDelay = time.Second
	// defaultCompletionPromise is --completion-promise's word.
	defaultCompletionPromise = ralph.DefaultCompletionPromise
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
