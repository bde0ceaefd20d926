// Package ralph runs ralph loops: it starts an agent with a fresh context in
// the worker's tmux window, delivers the prompt file (re-read every
// iteration), watches the pane, and restarts the agent when it exits or goes
// quiet, until a completion signal, an iteration cap, a time budget or
// repeated failure ends the loop.
//
// The decision after each iteration is pure (Decide) and the signal
// detection is pure (Detector); the Engine does the I/O around them. One
// monitor process per loop, enforced by a lock it holds for its lifetime.
package ralph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
)

// Prompt delivery modes (state.PromptMode).
const (
	ModeType  = state.PromptType  // paste into the agent's input once it looks ready
	ModeStdin = state.PromptStdin // the prompt is the command's standard input
	ModeArg   = state.PromptArg   // the prompt is the command's last argument
)

// Options configure a loop; flags map onto them one to one. They are the
// loop's configuration as its state file keeps it (state.LoopConfig: one
// struct, durations as time.Duration), with the methods that check it and
// fill its defaults (Validate) and make the loop's first state (NewState).
// Spawn fills WorkerName, WorkDir and MaxLogSize.
type Options state.LoopConfig

// DefaultCompletionPromise is the word of <promise>WORD</promise> that
// completes a loop (docs/completion.md).
const DefaultCompletionPromise = "COMPLETE"

// Defaults of the agent-aware options (docs/agents.md).
const (
	// DefaultIdleGrace: long enough for an agent to start its next step
	// after a tool call, short next to an inactivity timeout.
	DefaultIdleGrace = 15 * time.Second
	// DefaultLimitMessage is typed when a usage limit has reset.
	DefaultLimitMessage = "continue"
	// DefaultLimitWait is the wait for a limit that names no reset time;
	// it doubles on repeats up to MaxLimitWait.
	DefaultLimitWait = 30 * time.Minute
	MaxLimitWait     = 4 * time.Hour
)

// shownError is err with another text (the path as the user gave it),
// its cause kept for errors.Is and errors.As.
type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }

// Validate checks options before anything is created, with the messages
// swarm prints. It returns the absolute prompt path.
func (o *Options) Validate() error {
	if err := o.validatePrompt(); err != nil {
		return err
	}
	if o.MaxIterations <= 0 {
		return errors.New("--max-iterations must be at least 1")
	}
	if o.DonePattern != "" {
		if _, err := regexp.Compile(string(o.DonePattern)); err != nil {
			return fmt.Errorf("invalid --done-pattern: %w", err)
		}
	}
	switch o.PromptMode {
	case "":
		o.PromptMode = ModeType
	case ModeType, ModeStdin, ModeArg:
	default:
		return fmt.Errorf("invalid --prompt-mode '%s' (use type, stdin or arg)", o.PromptMode)
	}
	if o.PromptMode == ModeArg {
		// A prompt file already too long for one argument fails the
		// first iteration: refuse it now (the loop re-checks every
		// iteration, as the file may grow).
		if prompt, err := readPrompt(o.PromptFile); err == nil {
			if err := argPromptError(o.PromptMode, prompt); err != nil {
				return err
			}
		}
	}
	if o.InactivityTimeout.Duration < time.Second {
		return errors.New("--inactivity-timeout must be at least 1 second")
	}
	if o.MaxContext < 0 || o.MaxContext > 100 {
		return errors.New("--max-context must be a percentage from 1 to 100")
	}
	if o.CompletionPromise == "" {
		o.CompletionPromise = DefaultCompletionPromise
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_.-]+$`).MatchString(o.CompletionPromise) {
		return fmt.Errorf("invalid --completion-promise '%s' (use letters, digits, '.', '_', '-')", o.CompletionPromise)
	}
	if o.CheckTimeout.Duration <= 0 {
		o.CheckTimeout.Duration = DefaultCheckTimeout
	}
	if o.ReadyTimeout.Duration <= 0 {
		o.ReadyTimeout.Duration = DefaultReadyTimeout
	}
	if err := o.validateAgent(); err != nil {
		return err
	}
	if o.DoneFile != "" && filepath.IsAbs(string(o.DoneFile)) {
		// Allowed, but say nothing: relative is the documented form.
		o.DoneFile = state.NullString(filepath.Clean(string(o.DoneFile)))
	}
	return nil
}

// CheckAgentFlags checks --agent, --limit-pattern and --ready-pattern,
// each error naming its flag, and returns the --ready-pattern patterns
// compiled (spawn --ready-wait uses them too).
func CheckAgentFlags(name string, limitPatterns, readyPatterns []string) ([]*regexp.Regexp, error) {
	if name != "" {
		if _, ok := agent.Lookup(name); !ok {
			return nil, fmt.Errorf("invalid --agent '%s' (use %s)", name, strings.Join(agent.Names(), ", "))
		}
	}
	for _, p := range limitPatterns {
		if _, err := regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("invalid --limit-pattern: %w", err)
		}
	}
	var ready []*regexp.Regexp
	for _, p := range readyPatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("invalid --ready-pattern: %w", err)
		}
		ready = append(ready, re)
	}
	return ready, nil
}

// validateAgent checks --agent and the patterns, and fills defaults.
func (o *Options) validateAgent() error {
	if _, err := CheckAgentFlags(o.Agent, o.LimitPatterns, o.ReadyPatterns); err != nil {
		return err
	}
	if o.IdleGrace.Duration <= 0 {
		o.IdleGrace.Duration = DefaultIdleGrace
	}
	if o.LimitMessage == "" {
		o.LimitMessage = DefaultLimitMessage
	}
	if o.LimitWait.Duration <= 0 {
		o.LimitWait.Duration = DefaultLimitWait
	}
	return nil
}

// validatePrompt checks that the prompt file can be read and makes its
// path absolute.
func (o *Options) validatePrompt() error {
	if o.PromptFile == "" {
		return errors.New("--ralph requires --prompt-file")
	}
	abs, err := filepath.Abs(o.PromptFile)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		// readPrompt says "not found" of a directory (one that replaced
		// the file mid-loop is as good as gone); given at spawn, it is a
		// mistake to name.
		return fmt.Errorf("prompt file is not a regular file: %s", o.PromptFile)
	}
	if _, err := readPrompt(abs); err != nil {
		// The messages name the path as the user gave it.
		return &shownError{strings.Replace(err.Error(), abs, o.PromptFile, 1), err}
	}
	o.PromptFile = abs
	return nil
}

// compilePattern compiles a --done-pattern. ^ and $ match at line breaks,
// because users write patterns for a line of output.
func compilePattern(p string) (*regexp.Regexp, error) {
	return regexp.Compile("(?m)" + p)
}

// NewState returns the initial state.json of a loop: its configuration
// as given, running, started now.
func (o *Options) NewState(name, workDir string) *state.Ralph {
	cfg := state.LoopConfig(*o)
	cfg.WorkerName, cfg.WorkDir = name, workDir
	return &state.Ralph{LoopConfig: cfg, LoopProgress: state.LoopProgress{Status: state.RalphRunning, Started: state.Now()}}
}
