package main

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/notify"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worktree"
)

// loopFlags registers the ralph loop flags shared by spawn --ralph and
// ralph spawn, parsing them straight into o (a bad duration, number or
// mode is a usage error while the command line is parsed).
type loopFlags struct {
	o                 *ralph.SpawnOptions
	noCheckContinuous bool
	noPromise         bool
	// readyPatterns is --ready-pattern compiled by finish.
	readyPatterns []*regexp.Regexp
}

func registerLoopFlags(fs *pflag.FlagSet, o *ralph.SpawnOptions, maxIterations int, inactivity time.Duration) *loopFlags {
	lf := &loopFlags{o: o}
	l := &o.Loop
	l.Promise = true
	fs.StringVar(&l.PromptFile, "prompt-file", "", "prompt file, re-read from disk every iteration")
	intVar(fs, &l.MaxIterations, "max-iterations", maxIterations, 1, noMax, "stop after this many iterations")
	durationVar(fs, &l.InactivityTimeout.Duration, "inactivity-timeout", inactivity, minInactivity, "restart the agent after its screen is unchanged this long (seconds, or 90s, 5m)")
	fs.StringVar((*string)(&l.DonePattern), "done-pattern", "", "stop the loop when the agent prints a match of this regexp (RE2)")
	fs.BoolVar(&l.CheckDoneContinuous, "check-done-continuous", true, "act on completion signals while the agent runs")
	fs.BoolVar(&lf.noCheckContinuous, "no-check-done-continuous", false, "look for completion signals only when an iteration ends")
	enumVar(fs, (*string)(&l.PromptMode), "prompt-mode", string(ralph.ModeType), []string{string(ralph.ModeType), string(ralph.ModeStdin), string(ralph.ModeArg)}, "how the prompt reaches the agent: type, stdin or arg")
	fs.BoolVar(&lf.noPromise, "no-promise", false, "ignore <promise> tags")
	fs.StringVar(&l.CompletionPromise, "completion-promise", defaultCompletionPromise, "the word of <promise>WORD</promise> that completes the loop")
	fs.StringVar((*string)(&l.DoneFile), "done-file", "", "stop the loop when this file exists (relative to the worker's directory)")
	fs.StringArrayVar(&l.Checks, "check", nil, "command that must exit 0 before a completion signal is accepted (repeatable)")
	durationVar(fs, &l.CheckTimeout.Duration, "check-timeout", defaultCheckTimeout, time.Second, "time limit of each --check (seconds, or 2m)")
	fs.BoolVar(&l.RequireChange, "require-change", false, "reject a completion signal from an iteration that changed nothing in git")
	durationVar(fs, &l.MaxTime.Duration, "max-time", 0, 0, "total time budget of the loop (e.g. 4h, 90m; 0: none)")
	costVar(fs, &l.MaxCost, "max-cost", "end the loop once its agent reported spending this many US dollars (e.g. 5 or 0.50; an iteration that crosses it is stopped; 0: none)")
	tokensVar(fs, &l.MaxTokens, "max-tokens", "end the loop once its agent reported using this many tokens, of every kind (e.g. 2000000 or 2M; 0: none)")
	fs.BoolVar(&l.FailOnCap, "fail-on-cap", false, "reaching --max-iterations, --max-time, --max-cost or --max-tokens without completing exits 4, not 0")
	fs.BoolVar(&l.SameSession, "same-session", false, "when the agent goes quiet, type a continuation instead of restarting it")
	durationVar(fs, &l.RestartDelay.Duration, "restart-delay", defaultRestartDelay, 0, "pause between iterations (seconds, or 500ms)")
	fs.StringVar((*string)(&l.OnExit), "on-exit", "", "shell command run once when the loop ends (gets SWARM_EXIT_REASON, SWARM_EXIT_CODE, ...)")
	notifyVar(fs, l, "notify", "notify when the loop ends, pauses or waits out a usage limit: desktop (notify-send; the default), webhook:URL or ntfy:URL (repeatable; give a value with '='); swarm top rings its bell")
	enumVar(fs, &l.OnComplete, "on-complete", "", []string{worktree.StrategyMerge, worktree.StrategyRebase, worktree.StrategySquash},
		"when the loop ends complete, merge its branch into its base with this strategy (merge, rebase or squash; see swarm merge)")
	fs.BoolVar(&l.AutoCommit, "auto-commit", false, "at the end of each iteration, commit what the agent left in the worktree (swarm: NAME iteration N), so nothing is lost and merges take it all")
	intVar(fs, (*int)(&l.MaxContext), "max-context", 0, 0, maxContextPercent, "at this context usage %, ask the agent to commit and exit; at +15% restart it (0: off)")
	fs.StringVar(&l.Agent, "agent", "", "the agent's profile ("+strings.Join(agent.Names(), ", ")+"); default: chosen from the command")
	durationVar(fs, &l.IdleGrace.Duration, "idle-grace", ralph.DefaultIdleGrace, 0, "end an iteration when the agent finished its turn and sat idle this long (agents with a profile)")
	fs.StringVar(&l.LimitMessage, "limit-message", ralph.DefaultLimitMessage, "typed into the agent when a usage limit has reset")
	durationVar(fs, &l.LimitWait.Duration, "limit-wait", ralph.DefaultLimitWait, time.Second, "wait this long for a usage limit that names no reset time (doubles on repeats, up to 4h)")
	fs.StringArrayVar(&l.LimitPatterns, "limit-pattern", nil, "regexp of a screen line that means a usage or rate limit (repeatable)")
	fs.StringArrayVar(&l.ReadyPatterns, "ready-pattern", nil, "regexp of a screen line that means the agent is ready for its prompt (repeatable)")
	fs.BoolVar(&o.Foreground, "foreground", false, "run the loop in this terminal and exit with its exit code")
	fs.BoolVar(&o.NoRun, "no-run", false, "create the worker and loop state only; start later with swarm ralph run")
	fs.BoolVar(&o.Replace, "replace", false, "stop and replace an existing loop of the same name")
	fs.BoolVar(&o.CleanState, "clean-state", false, "remove old ralph state of this name first")
	fs.BoolVar(&o.ForceDirty, "force-dirty", false, "with --replace, remove the old worktree even with uncommitted changes")
	return lf
}

// notifyValue is --notify: with no value (what the switch it was meant)
// the desktop; with one, a target of internal/notify; repeatable.
type notifyValue struct{ o *ralph.Options }

func (v *notifyValue) Type() string { return "target" }

func (v *notifyValue) String() string {
	var all []string
	if v.o.Notify {
		all = append(all, notify.Desktop)
	}
	return strings.Join(append(all, v.o.NotifyTo...), ",")
}

func (v *notifyValue) Set(s string) error {
	t, err := notify.Parse(s)
	switch {
	case err != nil:
		return err
	case t.Kind == notify.Desktop:
		v.o.Notify = true
	case !slices.Contains(v.o.NotifyTo, t.String()):
		v.o.NotifyTo = append(v.o.NotifyTo, t.String())
	}
	return nil
}

// notifyVar registers --notify: a bare --notify is the desktop, as when
// it was a switch (pflag's NoOptDefVal); a value is given with
// "=" (--notify=ntfy:URL), since a word after it is the command's.
func notifyVar(fs *pflag.FlagSet, o *ralph.Options, name, usage string) {
	fs.Var(&notifyValue{o: o}, name, usage)
	fs.Lookup(name).NoOptDefVal = notify.Desktop
}

// notifySpaced refuses a --notify whose value was given after a space:
// pflag took the bare --notify (desktop) and the value became the first
// word of the command, which would be run.
func notifySpaced(changed bool, args []string) error {
	if !changed || len(args) == 0 {
		return nil
	}
	first := args[0]
	if strings.HasPrefix(first, notify.Webhook+":") || strings.HasPrefix(first, notify.Ntfy+":") ||
		(first == notify.Desktop && len(args) > 1 && args[1] == "--") {
		return usagef("--notify takes its value with '=': --notify=%s (%s was read as the command)", first, first)
	}
	return nil
}

// completionWord reports whether s is what internal/ralph accepts as a
// --completion-promise (it is matched inside <promise>...</promise>):
// ^[A-Za-z0-9_.-]+$, checked without compiling a regexp at start-up.
func completionWord(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-')
	}) < 0
}

// finish applies the negative flags and checks the values that depend on
// each other or need more than a type: all usage errors (exit 2), found
// before anything is created. Whether the prompt file exists is checked
// by internal/ralph (exit 1, as swarm.py).
func (lf *loopFlags) finish() error {
	l := &lf.o.Loop
	l.CheckDoneContinuous = l.CheckDoneContinuous && !lf.noCheckContinuous
	l.Promise = !lf.noPromise
	if l.DonePattern != "" {
		if _, err := regexp.Compile(string(l.DonePattern)); err != nil {
			return usagef("invalid --done-pattern: %w", err)
		}
	}
	if !completionWord(l.CompletionPromise) {
		return usagef("invalid --completion-promise '%s' (use letters, digits, '.', '_', '-')", l.CompletionPromise)
	}
	if l.SameSession && l.PromptMode != ralph.ModeType {
		return usagef("--same-session needs --prompt-mode type (the continuation is typed into the agent)")
	}
	ready, err := ralph.CheckAgentFlags(l.Agent, l.LimitPatterns, l.ReadyPatterns)
	if err != nil {
		return usagef("%w", err)
	}
	lf.readyPatterns = ready
	return nil
}
