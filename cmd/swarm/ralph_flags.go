package main

import (
	"time"

	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/ralph"
)

// loopFlags are the ralph loop flags shared by spawn --ralph and ralph spawn.
type loopFlags struct {
	promptFile          string
	maxIterations       int
	inactivityTimeout   string
	donePattern         string
	noCheckContinuous   bool
	checkDoneContinuous bool
	promptMode          string
	noPromise           bool
	completionPromise   string
	doneFile            string
	checks              []string
	checkTimeout        string
	requireChange       bool
	maxTime             string
	sameSession         bool
	restartDelay        string
	onExit              string
	maxContext          int
	foreground          bool
	noRun               bool
	replace             bool
	cleanState          bool
	forceDirty          bool
}

func (f *loopFlags) register(fs *pflag.FlagSet, maxIterations int, inactivity string) {
	fs.StringVar(&f.promptFile, "prompt-file", "", "prompt file, re-read from disk every iteration")
	fs.IntVar(&f.maxIterations, "max-iterations", maxIterations, "stop after this many iterations")
	fs.StringVar(&f.inactivityTimeout, "inactivity-timeout", inactivity, "restart the agent after its screen is unchanged this long (seconds, or 90s, 5m)")
	fs.StringVar(&f.donePattern, "done-pattern", "", "stop the loop when the agent prints a match of this regexp (RE2)")
	fs.BoolVar(&f.checkDoneContinuous, "check-done-continuous", true, "act on completion signals while the agent runs")
	fs.BoolVar(&f.noCheckContinuous, "no-check-done-continuous", false, "look for completion signals only when an iteration ends")
	fs.StringVar(&f.promptMode, "prompt-mode", "type", "how the prompt reaches the agent: type, stdin or arg")
	fs.BoolVar(&f.noPromise, "no-promise", false, "ignore <promise> tags")
	fs.StringVar(&f.completionPromise, "completion-promise", "COMPLETE", "the word of <promise>WORD</promise> that completes the loop")
	fs.StringVar(&f.doneFile, "done-file", "", "stop the loop when this file exists (relative to the worker's directory)")
	fs.StringArrayVar(&f.checks, "check", nil, "command that must exit 0 before a completion signal is accepted (repeatable)")
	fs.StringVar(&f.checkTimeout, "check-timeout", "120", "time limit of each --check (seconds, or 2m)")
	fs.BoolVar(&f.requireChange, "require-change", false, "reject a completion signal from an iteration that changed nothing in git")
	fs.StringVar(&f.maxTime, "max-time", "", "total time budget of the loop (e.g. 4h, 90m)")
	fs.BoolVar(&f.sameSession, "same-session", false, "when the agent goes quiet, type a continuation instead of restarting it")
	fs.StringVar(&f.restartDelay, "restart-delay", "1", "pause between iterations (seconds, or 500ms)")
	fs.StringVar(&f.onExit, "on-exit", "", "shell command run once when the loop ends (gets SWARM_EXIT_REASON, SWARM_EXIT_CODE, ...)")
	fs.IntVar(&f.maxContext, "max-context", 0, "at this context usage %, ask the agent to commit and exit; at +15% restart it")
	fs.BoolVar(&f.foreground, "foreground", false, "run the loop in this terminal and exit with its exit code")
	fs.BoolVar(&f.noRun, "no-run", false, "create the worker and loop state only; start later with swarm ralph run")
	fs.BoolVar(&f.replace, "replace", false, "stop and replace an existing loop of the same name")
	fs.BoolVar(&f.cleanState, "clean-state", false, "remove old ralph state of this name first")
	fs.BoolVar(&f.forceDirty, "force-dirty", false, "with --replace, remove the old worktree even with uncommitted changes")
}

// options turns the flags into loop options, parsing durations.
func (f *loopFlags) options() (ralph.Options, error) {
	o := ralph.Options{
		PromptFile:          f.promptFile,
		MaxIterations:       f.maxIterations,
		DonePattern:         f.donePattern,
		CheckDoneContinuous: f.checkDoneContinuous && !f.noCheckContinuous,
		PromptMode:          f.promptMode,
		Promise:             !f.noPromise,
		CompletionPromise:   f.completionPromise,
		DoneFile:            f.doneFile,
		Checks:              f.checks,
		RequireChange:       f.requireChange,
		SameSession:         f.sameSession,
		OnExit:              f.onExit,
		MaxContext:          f.maxContext,
	}
	var err error
	parse := func(flag, v string, dst *time.Duration) {
		if err != nil || v == "" {
			return
		}
		d, perr := duration.Parse(v)
		if perr != nil {
			err = perr
		}
		*dst = d
	}
	parse("--inactivity-timeout", f.inactivityTimeout, &o.InactivityTimeout)
	parse("--check-timeout", f.checkTimeout, &o.CheckTimeout)
	parse("--max-time", f.maxTime, &o.MaxTime)
	parse("--restart-delay", f.restartDelay, &o.RestartDelay)
	return o, err
}
