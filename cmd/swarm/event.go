package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
)

// eventCommand is the hidden command an agent runs to report to its loop
// (docs/agents.md): its hooks, "swarm _event --events FILE --format F
// [PAYLOAD]", append one line per event to the session's events file;
// its status line, "swarm _event --status FILE [--chain CMD]", keeps the
// line's figures in FILE and runs the user's own status line after.
// Either returns within milliseconds and always exits 0: a hook that
// fails must never fail or hold up the agent, so an error is written to
// stderr and, when it can be, as a line of the events file.
const eventCommand = "_event"

// agentHooks are the command lines an agent's reporting runs (given to
// the loop engine): this very binary's _event.
func agentHooks() agent.HookCommands {
	exe, err := os.Executable()
	if err != nil {
		return agent.HookCommands{}
	}
	return agent.HookCommands{
		Event: func(events, format string) []string {
			return []string{exe, eventCommand, "--events", events, "--format", format}
		},
		Status: func(file, chain string) []string {
			argv := []string{exe, eventCommand, "--status", file}
			if chain != "" {
				argv = append(argv, "--chain", chain)
			}
			return argv
		},
	}
}

// Bounds of what _event reads and runs.
const (
	// maxHookInput bounds a hook's input (a tool call's input can be a
	// whole file: the event keeps only a summary).
	maxHookInput = 8 << 20
	// maxStatusInput bounds a status line's input.
	maxStatusInput = 1 << 20
	// chainTimeout bounds the user's own status line command.
	chainTimeout = 5 * time.Second
)

type eventOptions struct {
	IO      *IO
	Events  string
	Format  string
	Status  string
	Chain   string
	Payload []string // Codex's notify hands its event as the last argument
	Now     func() time.Time
}

func newCmdEvent(f *factory, runF func(*eventOptions) error) *cobra.Command {
	opts := &eventOptions{IO: f.IO, Now: time.Now}
	cmd := &cobra.Command{
		Use:    eventCommand + " (--events FILE --format FORMAT [PAYLOAD] | --status FILE [--chain COMMAND])",
		Short:  "Record an agent's event or status line for its loop (internal)",
		Hidden: true,
		Args:   argsRange(0, 1, "at most one payload"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Payload = args
			if runF != nil {
				return runF(opts)
			}
			runEvent(opts)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Events, "events", "", "the events file to append the event to")
	cmd.Flags().StringVar(&opts.Format, "format", agent.FormatClaude, "the agent's payload: claude (stdin) or codex (last argument)")
	cmd.Flags().StringVar(&opts.Status, "status", "", "the file that keeps the status line's figures")
	cmd.Flags().StringVar(&opts.Chain, "chain", "", "the user's own status line command, run after")
	return cmd
}

// runEvent records what the agent handed over; errors are reported, never
// returned (the exit status stays 0).
func runEvent(opts *eventOptions) {
	if opts.Status != "" {
		runStatusLine(opts)
		return
	}
	if opts.Events == "" {
		fmt.Fprintf(opts.IO.Err, "swarm: error: %s needs --events or --status\n", eventCommand)
		return
	}
	err := recordEvent(opts)
	if err == nil || errors.Is(err, agent.ErrUnknownEvent) {
		return
	}
	fmt.Fprintf(opts.IO.Err, "swarm: error: %v\n", err)
	if errors.Is(err, state.ErrEventsFull) {
		return
	}
	line, _ := json.Marshal(agent.Event{Time: opts.Now(), Name: agent.EventHookError, Detail: err.Error()}) // an Event of strings and a time always encodes
	_ = state.AppendEvent(opts.Events, line, false)                                                         // said on stderr above; a hook never fails the agent
}

// recordEvent appends the agent's event to the events file.
func recordEvent(opts *eventOptions) error {
	var payload []byte
	if len(opts.Payload) > 0 {
		payload = []byte(opts.Payload[0])
	} else {
		var err error
		if payload, err = readAtMost(opts.IO.In, maxHookInput); err != nil {
			return fmt.Errorf("hook input: %w", err)
		}
	}
	ev, err := agent.HookEvent(opts.Format, payload, opts.Now())
	if err != nil {
		return err
	}
	line, err := agent.EncodeEvent(ev, state.MaxEventLine-1)
	if err != nil {
		return err
	}
	return state.AppendEvent(opts.Events, line, ev.Urgent())
}

// runStatusLine keeps the status line's figures, then runs the user's own
// status line on the same input: what it prints is the status line.
func runStatusLine(opts *eventOptions) {
	input, err := readAtMost(opts.IO.In, maxStatusInput)
	if err == nil {
		var s agent.Status
		if s, err = agent.StatusFromLine(input, opts.Now()); err == nil {
			var data []byte
			if data, err = json.Marshal(s); err == nil {
				err = state.WriteFileAtomic(opts.Status, data)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(opts.IO.Err, "swarm: error: status line: %v\n", err)
	}
	if opts.Chain != "" {
		chainStatusLine(opts, input)
	}
}

// chainStatusLine runs the user's status line command as Claude Code
// would (sh -c, the JSON on its standard input), within chainTimeout.
func chainStatusLine(opts *eventOptions, input []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), chainTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", opts.Chain)
	c.Stdin, c.Stdout, c.Stderr = bytes.NewReader(input), opts.IO.Out, opts.IO.Err
	c.WaitDelay = time.Second
	if err := c.Run(); err != nil {
		fmt.Fprintf(opts.IO.Err, "swarm: error: status line command: %v\n", err)
	}
}

// readAtMost reads r to its end, refusing more than max bytes.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(data)) > max {
		// Read the rest, unkept: the agent writing it must not get EPIPE.
		_, _ = io.Copy(io.Discard, r) // the input is refused either way
		err = fmt.Errorf("larger than %d bytes", max)
	}
	return data, err
}
