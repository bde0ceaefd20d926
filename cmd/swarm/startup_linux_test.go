//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swarmtools/swarm/internal/testenv"
)

// noQueryWait bounds swarm --version on a terminal: well under the 5 s a
// terminal query waits for an answer that never comes.
const noQueryWait = 3 * time.Second

// openPTY returns a new pseudo-terminal's master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	return master, slave
}

// A command run on a terminal that answers no query (a plain pty, as
// script(1), expect or a CI runner give) asks it nothing at start-up: it
// prints its version and exits. Bubble Tea v1's init asked every
// command's terminal for its background colour, which wrote
// "\x1b]11;?\x1b\\\x1b[6n" before the output and waited 5 s for an answer.
func TestStartupQueriesNoTerminal(t *testing.T) {
	t.Parallel()
	swarm, _ := testenv.Binaries(t)
	master, slave := openPTY(t)
	cmd := exec.Command(swarm, "--version")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv) // CI or a tmux TERM would skip the query
		}
	}
	cmd.Env = append(env, "TERM=xterm-256color")
	// Its own session with the pty as its controlling terminal, in the
	// foreground: as in a terminal window.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close()
	output := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once the command has exited
		output <- b
	}()
	var out []byte
	select {
	case out = <-output:
	case <-time.After(noQueryWait):
		_ = cmd.Process.Kill()
		t.Fatalf("swarm --version on a terminal still running after %s: waiting for a terminal's answer?", noQueryWait)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("swarm --version: %v\n%q", err, out)
	}
	if !bytes.HasPrefix(out, []byte("swarm ")) || bytes.ContainsRune(out, '\x1b') {
		t.Errorf("swarm --version wrote %q to its terminal, want its version alone", out)
	}
}
