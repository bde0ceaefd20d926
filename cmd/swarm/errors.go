package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/exitcode"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

// Exit codes (docs/commands.md, "Exit codes of errors"): usage errors
// exit 2, other failures 1, status and peek of an unknown worker 2, the
// waits their own; the values are internal/exitcode's, the one list.
const (
	exitOK          = exitcode.OK
	exitFail        = exitcode.Failure
	exitUsage       = exitcode.Usage
	exitNotFound    = exitcode.NotFound
	exitTimeout     = exitcode.Timeout     // ralph wait --timeout passed
	exitInterrupted = exitcode.Interrupted // Ctrl-C during a wait
)

// exitError ends a command with a code. err, when set, is printed as
// "swarm: error: <err>"; it stays in the chain so hint.Of still finds the
// fix that internal packages attached.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// fail ends a command with code and a message; use %w to wrap an error.
func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// exitCode ends a command with a code and no message.
func exitCode(code int) error { return &exitError{code: code} }

// usageError is a bad command line (exit 2). It prints as
// "swarm: error: <err> (see: swarm CMD --help)", then detail (cobra's
// "Did you mean this?") on the lines after.
type usageError struct {
	err    error
	detail string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef makes a usage error; use %w to wrap an error.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// bareError is an error whose message is printed as it is, without
// "swarm: error: ": swarm.py prints some messages bare ("No heartbeat found
// for W", heartbeat.Error) and scripts match them whole.
type bareError interface {
	error
	Bare() bool
}

// workerError maps a worker error to its exit code: not found is
// notFoundCode (2 for status and peek, 1 elsewhere), anything else 1.
func workerError(err error, notFoundCode int) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, worker.ErrNotFound) {
		return &exitError{code: notFoundCode, err: err}
	}
	return &exitError{code: exitFail, err: err}
}

// unknownCommand is cobra's "unknown command" error for a command group,
// with its suggestions.
func unknownCommand(group *cobra.Command, name string) error {
	e := &usageError{err: fmt.Errorf("unknown command %q for %q", name, group.CommandPath())}
	if group.SuggestionsMinimumDistance <= 0 {
		group.SuggestionsMinimumDistance = 2 // cobra's default, set lazily by cobra itself
	}
	if s := group.SuggestionsFor(name); len(s) > 0 {
		e.detail = "\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return e
}

// cobraUsage recognises the usage errors cobra makes itself, as text: an
// unknown command at the top level (its suggestions after a blank line),
// and flags that cannot be given together.
func cobraUsage(err error) *usageError {
	msg, detail, _ := strings.Cut(err.Error(), "\n\n")
	if strings.HasPrefix(msg, "if any flags in the group ") {
		// MarkFlagsMutuallyExclusive: flags that do not go together.
		return &usageError{err: errors.New(msg)}
	}
	if !strings.HasPrefix(msg, "unknown command ") {
		return nil
	}
	if detail != "" {
		detail = "\n" + detail
	}
	return &usageError{err: errors.New(msg), detail: detail}
}

// report prints err the way swarm does and returns the exit code:
// "swarm: error: <what>", and "hint: <fix>" when the error carries one;
// a bareError's message alone. cmd is the command that failed (for the
// "see: ... --help" of usage errors). Errors quote names, paths, a
// repository's file names and what other programs said: each is printed
// as printable text (plainText), here, once for every command.
func report(w io.Writer, cmd *cobra.Command, err error) int {
	var ue *usageError
	if !errors.As(err, &ue) {
		ue = cobraUsage(err)
	}
	if ue != nil {
		path := "swarm"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(w, "swarm: error: %s (see: %s --help)\n%s", plainText(ue.err.Error()), path, ue.detail)
		return exitUsage
	}
	code := exitFail
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	var bare bareError
	if errors.As(err, &bare) && bare.Bare() {
		fmt.Fprintln(w, plainText(bare.Error()))
		return code
	}
	fmt.Fprintf(w, "swarm: error: %s\n", plainText(err.Error()))
	if h := hint.Of(err); h != "" {
		fmt.Fprintf(w, "hint: %s\n", plainText(h))
	}
	return code
}

// plainText is a message as printed: each line printable text
// (termtext.Line: escape sequences parsed and dropped, control characters
// dropped), so an escape sequence in a path reaches no terminal. A
// message's own lines stay (a set-up's last lines, errors.Join's parts),
// but a line after the first that would read as one of swarm's own
// ("hint: ...", "swarm: error: ...", from a newline in a path or a file
// name) is indented: it cannot pass for the fix swarm gives.
func plainText(s string) string {
	if !strings.Contains(s, "\n") {
		return termtext.Line(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = termtext.Line(l)
		if i > 0 && (strings.HasPrefix(l, "hint:") || strings.HasPrefix(l, "swarm:")) {
			l = "  " + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
