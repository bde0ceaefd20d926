package proc

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A log sink (swarm _logpipe) reads a pipe whose write end a worker holds:
// a process worker's stdout or stderr, or tmux pipe-pane's copy of a pane.
// If the sink dies, the pipe has no reader left and the worker's next
// write kills it with SIGPIPE (tmux only stops piping). So a sink ignores
// the signals that ask it to stop (it ends when its input ends), and keeps
// a standby: a shell that holds the pipe's read end too, so that a write
// never finds no reader, and that, once the sink is gone however it died
// (SIGKILL included), becomes the sink in its place. The new sink starts a
// standby of its own. Only killing both at once leaves the pipe without a
// reader. Output the dead sink had read but not yet written (one chunk,
// at most 32 KiB) is lost; the rest goes on into the same log.

// standbyScript waits until the sink that started it is gone (fd 3, the
// lifeline, reads end of file when the last holder of its write end, the
// sink, exits), then becomes the sink's command ("$@").
const standbyScript = `trap '' HUP INT TERM QUIT; read -r x <&3; exec 3<&-; exec "$@"`

// standbyRetry paces restarts of a standby that keeps dying.
const standbyRetry = 100 * time.Millisecond

// sinkSignals ask a process to stop; a sink ends when its input does.
var sinkSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT}

// GuardSink prepares this process to be the sink reading in: it ignores
// the stop signals and, when in is a pipe (a process worker's output) or
// a socket (tmux pipe-pane's) that still has a writer, starts a standby
// that runs argv (this sink's own command) once this process is gone. It
// reports whether there is anything to sink: false when every writer has
// gone and nothing is left to read (a standby that took over after the
// end, which must not start another). The standby is restarted when it
// dies, until done is closed.
func GuardSink(in *os.File, argv []string, done <-chan struct{}) bool {
	signal.Ignore(sinkSignals...)
	fi, err := in.Stat()
	if err != nil {
		return true
	}
	var gone bool
	switch {
	case fi.Mode()&os.ModeNamedPipe != 0:
		gone = pipeDrained(in)
	case fi.Mode()&os.ModeSocket != 0:
		gone = socketDrained(in)
	default:
		return true // a file or a terminal: no writer to protect
	}
	if gone {
		return false
	}
	go keepStandby(in, argv, done)
	return true
}

// pipeDrained reports a pipe that every writer has closed and that holds
// no more data: it hangs up and has nothing to read.
func pipeDrained(in *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(in.Fd()), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLHUP != 0 && fds[0].Revents&unix.POLLIN == 0
}

// socketDrained reports a socket whose peer has closed it and that holds
// no more data: a peek reads end of file at once.
func socketDrained(in *os.File) bool {
	var b [1]byte
	n, _, err := unix.Recvfrom(int(in.Fd()), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err == nil && n == 0
}

// keepStandby runs a standby and starts a new one whenever it dies, until
// done is closed.
func keepStandby(in *os.File, argv []string, done <-chan struct{}) {
	for {
		p, lifeline, err := startStandby(in, argv)
		if err == nil {
			_, _ = p.Wait()      // a standby's end is only the cue to start another
			_ = lifeline.Close() // held until here: its closing is the signal
		}
		select {
		case <-done:
			return
		case <-time.After(standbyRetry):
		}
	}
}

// startStandby starts a standby shell holding in, and returns the write
// end of its lifeline, which this process must hold while the standby
// lives (it is close-on-exec: nothing else inherits it).
func startStandby(in *os.File, argv []string) (*os.Process, *os.File, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = devnull.Close() }() // read only; the standby has its own copy
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = lifeR.Close() }() // the standby holds its own copy
	p, err := os.StartProcess("/bin/sh", append([]string{"sh", "-c", standbyScript, "swarm-sink-standby"}, argv...),
		&os.ProcAttr{Dir: "/", Files: []*os.File{in, devnull, devnull, lifeR}})
	if err != nil {
		return nil, nil, errors.Join(err, lifeW.Close())
	}
	return p, lifeW, nil
}
