package main

import (
	"bytes"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// terminal remembers the original settings of a tty so they can be restored
// on every way out: a test harness that reuses the pane (or a human watching
// it) must not be left with a raw terminal.
type terminal struct {
	fd   int
	orig unix.Termios
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}

// makeRaw puts fd in the raw mode an interactive TUI uses: no echo, no line
// editing by the kernel, no signals from Ctrl-C, no CR to NL translation
// (so Enter arrives as \r, as with a real agent), one byte at a time.
func makeRaw(fd int) (*terminal, error) {
	orig, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	raw := *orig
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Iflag &^= unix.ICRNL | unix.IXON
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
		return nil, err
	}
	return &terminal{fd: fd, orig: *orig}, nil
}

func (t *terminal) restore() {
	_ = unix.IoctlSetTermios(t.fd, ioctlSetTermios, &t.orig) // on the way out: a terminal that is gone needs no restoring
}

// output writes straight to stdout with no buffering, so tmux sees every
// step's output the moment it happens. While the terminal is raw the kernel
// may no longer return the cursor to column 0 on \n, so \n is written as
// \r\n then.
type output struct {
	raw atomic.Bool
}

var crlf = []byte("\r\n")

// write writes step output, translating newlines in raw mode.
func (o *output) write(s string) {
	b := []byte(s)
	if o.raw.Load() {
		b = bytes.ReplaceAll(b, []byte("\n"), crlf)
	}
	_, _ = os.Stdout.Write(b) // the terminal: a test reading the screen sees what is missing
}

// writeRaw writes bytes that are already laid out for the terminal, such as
// the editor's echo, which carries its own \r\n.
func (o *output) writeRaw(b []byte) {
	if len(b) > 0 {
		_, _ = os.Stdout.Write(b) // the terminal: a test reading the screen sees what is missing
	}
}
