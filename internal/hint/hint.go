// Package hint attaches a fix to an error: the command line prints the
// error as "swarm: error: <what>" and, on the next line, "hint: <fix>".
//
// Errors are wrapped, not replaced, so errors.Is and errors.As still see
// the cause (a typed tmux error, worker.ErrNotFound).
package hint

import (
	"errors"
	"fmt"
)

// Error is an error with the command that fixes it.
type Error struct {
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err with a hint; nil stays nil.
func Wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Hint: fmt.Sprintf(format, args...)}
}

// Errorf returns a new error with a hint.
func Errorf(hint, format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Hint: hint}
}

// Of returns the outermost hint in err's chain, or "".
func Of(err error) string {
	var h *Error
	if errors.As(err, &h) {
		return h.Hint
	}
	return ""
}
