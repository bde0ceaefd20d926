package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/swarmtools/swarm/internal/exitcode"
)

// Exit codes of a command that could not be run, as a shell reports
// them.
const (
	ExitNotExecutable = exitcode.NotExecutable
	ExitNotFound      = exitcode.CommandNotFound
)

// ExecError is a command Exec could not run, with the exit code a shell
// would give for it.
type ExecError struct {
	Code int
	Err  error
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// Exec replaces this process with argv, its environment this one's with
// env's KEY=VAL entries added (an entry replaces a variable of the same
// name). The command is found on env's PATH when env sets one. It
// returns only when the command cannot be run. The process keeps its pid
// and start time, so an identity taken of it before (a pane's process)
// stays true.
func Exec(argv []string, env []string) error {
	if len(argv) == 0 {
		return &ExecError{Code: ExitNotFound, Err: errors.New("no command")}
	}
	merged := mergeEnv(os.Environ(), env)
	path, err := lookPath(argv[0], merged)
	if err != nil {
		return &ExecError{Code: ExitNotFound, Err: fmt.Errorf("command not found: %s", argv[0])}
	}
	err = syscall.Exec(path, argv, merged)
	code := ExitNotExecutable
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return &ExecError{Code: code, Err: fmt.Errorf("cannot run %s: %w", argv[0], err)}
}

// mergeEnv returns base with entries added, each replacing a variable of
// the same name in base.
func mergeEnv(base, entries []string) []string {
	set := map[string]bool{}
	for _, e := range entries {
		k, _, _ := strings.Cut(e, "=")
		set[k] = true
	}
	out := make([]string, 0, len(base)+len(entries))
	for _, e := range base {
		if k, _, _ := strings.Cut(e, "="); !set[k] {
			out = append(out, e)
		}
	}
	return append(out, entries...)
}

// lookPath is exec.LookPath on the PATH of env, finding what a shell
// finds: a relative PATH entry (".") counts, as it does for sh.
func lookPath(name string, env []string) (string, error) {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			_ = os.Setenv("PATH", v) // this process is about to become the command; "PATH" and an env value are always valid
		}
	}
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		err = nil
	}
	return path, err
}
