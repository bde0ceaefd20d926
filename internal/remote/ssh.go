package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/exitcode"
	"github.com/swarmtools/swarm/internal/termtext"
)

const (
	// DefaultConnectTimeout bounds connecting to a host (ssh's
	// ConnectTimeout, which covers its greeting too) and each call of a
	// listing over many hosts.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultPersist is how long a shared connection stays open after its
	// last session (ssh's ControlPersist): long enough for the next
	// refresh of swarm top or the next command, short enough not to keep
	// idle connections to every host.
	DefaultPersist = 60 * time.Second
	// serverAliveInterval and serverAliveCount: a connection whose host
	// vanished (a laptop's network gone) is given up after about 45 s of
	// silence, instead of waiting for TCP to notice, which can take hours.
	serverAliveInterval = 15
	serverAliveCount    = 3
	// checkTimeout bounds ssh -O check, which only talks to the local
	// master process: a master that does not answer in this time is
	// stuck, and its socket is removed.
	checkTimeout = 3 * time.Second
	// waitDelay bounds the wait for ssh's output pipes after it exited or
	// was killed: a process it left holding them must not hold the call.
	waitDelay = time.Second
	// ExitSSH is ssh's own exit code for a failure of its own (no
	// connection, authentication refused), as opposed to the remote
	// command's code.
	ExitSSH = exitcode.SSH
	// controlName is how many hex digits of a hash name a control
	// socket: 64 bits, unique enough for one user's hosts.
	controlName = 16
	// maxSocketPath bounds a control socket's path: a Unix socket's path
	// is at most 104 bytes on macOS (108 on Linux), and ssh first binds
	// a temporary name 17 bytes longer than the path.
	maxSocketPath = 104 - 17 - 1
)

// Client runs ssh.
type Client struct {
	// SSH is the ssh program ("" is ssh on the PATH).
	SSH string
	// ConfigFile, when set, is given to ssh as -F FILE instead of
	// ~/.ssh/config.
	ConfigFile string
	// ConnectTimeout is ssh's ConnectTimeout (0: DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ControlDir is where the shared connections' sockets live; "" turns
	// connection sharing off.
	ControlDir string
	// Persist is ControlPersist (0: DefaultPersist).
	Persist time.Duration
}

func (c *Client) ssh() string {
	if c.SSH == "" {
		return "ssh"
	}
	return c.SSH
}

func (c *Client) connectTimeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

func (c *Client) persist() time.Duration {
	if c.Persist <= 0 {
		return DefaultPersist
	}
	return c.Persist
}

// ControlPath is the socket of h's shared connection, "" without
// sharing. It is named by a hash of what decides where ssh connects (the
// target, the host's options, the config file), so hosts with the same
// target share one connection and one socket.
//
// A directory whose path ssh would not take as it is gives no sharing
// (plainPath): ssh expands % tokens (%h: the host) and ${VAR} in a
// ControlPath and splits an -o value at spaces, so a state root holding
// "%h" would move the socket and a space would break every call.
func (c *Client) ControlPath(h Host) string {
	if c.ControlDir == "" || !plainPath(c.ControlDir) {
		return ""
	}
	return filepath.Join(c.ControlDir, connKey(c, h))
}

// plainPath reports an absolute path that ssh reads in a ControlPath
// exactly as written: letters, digits and / . _ - + , : @ = only (no %,
// $, ~, quote, backslash, space or control character).
func plainPath(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("/._-+,:@=", r):
		default:
			return false
		}
	}
	return true
}

// connKey names h's connection: hosts with equal keys share one.
func connKey(c *Client, h Host) string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{h.Target, c.ConfigFile}, h.Options...), "\x00")))
	return hex.EncodeToString(sum[:])[:controlName]
}

// ControlDirFor returns where control sockets go for a state root:
// ROOT/ssh, unless a socket's path there would be too long for a Unix
// socket, or the path holds what ssh would expand or split (plainPath);
// then fallback (a private directory of the user's, such as
// /tmp/swarm-ssh-UID). A fallback that is not plain either gives no
// shared connections (ControlPath).
func ControlDirFor(root, fallback string) string {
	dir := filepath.Join(root, "ssh")
	if len(dir)+1+controlName <= maxSocketPath && plainPath(dir) {
		return dir
	}
	return fallback
}

// options are the -o options of every call: the host's own first (ssh
// takes the first value given for an option, so a host's Port or
// IdentityFile wins), then batch mode (never a password prompt: a call
// must fail, not wait for a human), the connect timeout, the keepalive,
// and the shared connection.
func (c *Client) options(h Host) []string {
	var args []string
	if c.ConfigFile != "" {
		args = append(args, "-F", c.ConfigFile)
	}
	for _, o := range h.Options {
		args = append(args, "-o", o)
	}
	args = append(args,
		"-o", "BatchMode=yes",
		"-o", fmt.Sprintf("ConnectTimeout=%d", max(1, int(c.connectTimeout().Round(time.Second)/time.Second))),
		"-o", fmt.Sprintf("ServerAliveInterval=%d", serverAliveInterval),
		"-o", fmt.Sprintf("ServerAliveCountMax=%d", serverAliveCount),
	)
	if p := c.ControlPath(h); p != "" {
		args = append(args,
			"-o", "ControlMaster=auto",
			"-o", "ControlPath="+p,
			"-o", fmt.Sprintf("ControlPersist=%d", max(1, int(c.persist()/time.Second))))
	}
	return args
}

// Argv is the ssh command line that runs command (a shell command line:
// Command quotes one) on h: with a terminal when tty (swarm attach),
// else without one (output comes back byte for byte).
func (c *Client) Argv(h Host, tty bool, command string) ([]string, error) {
	if err := ValidateTarget(h.Target); err != nil {
		return nil, err
	}
	for _, o := range h.Options {
		if err := ValidateOption(o); err != nil {
			return nil, err
		}
	}
	argv := append([]string{c.ssh()}, c.options(h)...)
	if tty {
		argv = append(argv, "-t")
	} else {
		argv = append(argv, "-T")
	}
	// "--" after the target: ssh reads options again after the host, so
	// without it a command starting with '-' would be an option.
	return append(argv, h.Target, "--", command), nil
}

// Call is one command run on a host.
type Call struct {
	Host Host
	// Command is the remote shell command line (see Command).
	Command string
	// TTY asks for a terminal on the host (ssh -t).
	TTY bool
	// Stdin, Stdout and Stderr are the command's streams (nil: none).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Timeout bounds the whole call (0: none: the call may wait for a
	// loop to end).
	Timeout time.Duration
}

// Result is how a call ended.
type Result struct {
	// Code is the remote command's exit code, or ExitSSH when ssh failed
	// (or the remote command exited 255).
	Code int
	// Elapsed is the call's wall time.
	Elapsed time.Duration
}

// ErrTimeout marks a call stopped at its Timeout.
var ErrTimeout = errors.New("did not answer in time")

// Run runs a call: the remote command's exit code, stdout and stderr
// come back as they are. err is set when ssh could not be started or the
// call was stopped at its deadline (ErrTimeout); a failed connection is
// Code ExitSSH with ssh's message on Stderr.
func (c *Client) Run(ctx context.Context, call Call) (Result, error) {
	if call.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, call.Timeout)
		defer cancel()
	}
	c.CheckMaster(ctx, call.Host)
	return c.run(ctx, call)
}

// run runs a call without checking the shared connection first.
func (c *Client) run(ctx context.Context, call Call) (Result, error) {
	argv, err := c.Argv(call.Host, call.TTY, call.Command)
	if err != nil {
		return Result{Code: ExitSSH}, err
	}
	if err := c.makeControlDir(); err != nil {
		return Result{Code: ExitSSH}, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = call.Stdin, call.Stdout, call.Stderr
	cmd.WaitDelay = waitDelay
	err = cmd.Run()
	res := Result{Elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{Code: ExitSSH, Elapsed: res.Elapsed}, fmt.Errorf("%w (%s)", ErrTimeout, call.Timeout)
	case ctx.Err() != nil:
		return Result{Code: ExitSSH, Elapsed: res.Elapsed}, ctx.Err()
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
		if res.Code < 0 { // killed by a signal
			res.Code = ExitSSH
		}
		return res, nil
	case err != nil:
		return Result{Code: ExitSSH, Elapsed: res.Elapsed}, fmt.Errorf("cannot run %s: %w", argv[0], err)
	}
	return res, nil
}

// makeControlDir makes the control socket directory, private.
func (c *Client) makeControlDir() error {
	if c.ControlDir == "" {
		return nil
	}
	if err := os.MkdirAll(c.ControlDir, 0o700); err != nil {
		return fmt.Errorf("cannot make %s: %w", c.ControlDir, err)
	}
	return nil
}

// CheckMaster makes sure h's shared connection, when its socket exists,
// answers: ssh -O check asks the master process behind it. A socket whose
// master is gone (killed, the machine suspended and resumed) or stuck is
// removed, so the call makes a new connection instead of failing on the
// old one or waiting on it. It reports whether a live master is there.
func (c *Client) CheckMaster(ctx context.Context, h Host) bool {
	path := c.ControlPath(h)
	if path == "" {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	if fi.Mode().Type() != fs.ModeSocket {
		// Not ssh's: a file in the way would make ssh give up sharing
		// for every call.
		_ = os.Remove(path) // best effort: one still there costs sharing, not the call
		return false
	}
	if ValidateTarget(h.Target) != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	argv := append(c.options(h), "-O", "check", h.Target)
	cmd := exec.CommandContext(ctx, c.ssh(), argv...)
	cmd.WaitDelay = waitDelay
	if cmd.Run() == nil {
		return true
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false // the caller gave up: judge nothing
	}
	_ = os.Remove(path) // best effort: a dead socket still there costs sharing, not the call
	return false
}

// Failure says why a call that failed as ssh fails (Code ExitSSH, or a
// timeout) failed: ssh's last line on stderr, made printable, or the
// timeout. "" when the call did not fail that way.
func Failure(res Result, err error, stderr []byte) string {
	if err != nil {
		return termtext.Line(err.Error())
	}
	if res.Code != ExitSSH {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8(stderr, []byte("?")))), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "ssh failed (exit 255)"
	}
	return termtext.Line(last)
}
