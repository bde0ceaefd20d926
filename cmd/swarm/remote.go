package main

// What the commands share to reach other hosts: the ssh client of the
// state root, the hosts of hosts.json, and remote output made safe for a
// terminal.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/remote"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
)

// sshConfigEnv names an ssh configuration file swarm gives ssh (-F)
// instead of ~/.ssh/config.
const sshConfigEnv = "SWARM_SSH_CONFIG"

// Flags of the commands that reach hosts.
const (
	hostFlag           = "host"
	connectTimeoutFlag = "connect-timeout"
	allHostsFlag       = "all-hosts"
	hostsFlag          = "hosts"
)

// addConnectTimeoutFlag registers --connect-timeout.
func addConnectTimeoutFlag(fs *pflag.FlagSet, p *time.Duration) {
	durationVar(fs, p, connectTimeoutFlag, remote.DefaultConnectTimeout, time.Second,
		"give up on a host that does not answer within this time (ssh's ConnectTimeout)")
}

// hostSet is the --all-hosts and --hosts choice of a listing.
type hostSet struct {
	All            bool
	Names          []string
	ConnectTimeout time.Duration
}

// any reports whether hosts were asked for.
func (s hostSet) any() bool { return s.All || len(s.Names) > 0 }

// addHostSetFlags registers --all-hosts, --hosts and --connect-timeout.
func addHostSetFlags(fs *pflag.FlagSet, s *hostSet) {
	fs.BoolVar(&s.All, allHostsFlag, false, "this machine and every host of swarm hosts ls, asked in parallel")
	fs.StringSliceVar(&s.Names, hostsFlag, nil, "only these hosts (comma-separated; local is this machine)")
	addConnectTimeoutFlag(fs, &s.ConnectTimeout)
}

// sshClient is the ssh client of the state root: connections shared
// through sockets in ROOT/ssh (or a private directory in /tmp when that
// path is too long for a socket).
func (f *factory) sshClient(timeout time.Duration) (*remote.Client, error) {
	root, err := f.Root()
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	fallback := filepath.Join(os.TempDir(), fmt.Sprintf("swarm-ssh-%d", os.Geteuid()))
	dir := remote.ControlDirFor(root, fallback)
	if dir == fallback {
		err = remote.PrivateDir(dir)
	} else {
		err = state.MakeDir(root, dir)
	}
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	return &remote.Client{ConfigFile: os.Getenv(sshConfigEnv), ConnectTimeout: timeout, ControlDir: dir}, nil
}

// host returns the host called name, checked.
func (f *factory) host(name string) (remote.Host, error) {
	root, err := f.Root()
	if err != nil {
		return remote.Host{}, &exitError{code: exitFail, err: err}
	}
	h, err := state.NewStore(root, f.IO.Warn).Host(name)
	if errors.Is(err, state.ErrNoHost) {
		return remote.Host{}, &exitError{code: exitFail, err: hint.Errorf(
			"swarm hosts ls lists them; swarm hosts add "+name+" USER@MACHINE adds one", "unknown host '%s'", name)}
	}
	if err != nil {
		return remote.Host{}, &exitError{code: exitFail, err: err}
	}
	rh := toRemote(h)
	if err := rh.Validate(); err != nil {
		return remote.Host{}, fail(exitFail, "host '%s' in %s: %w", name, state.NewStore(root, nil).HostsPath(), err)
	}
	return rh, nil
}

// hosts returns the hosts a listing asks for, in hosts.json's order
// (--all-hosts) or as named (--hosts), and whether this machine is one
// of them.
func (f *factory) hosts(s hostSet) (hosts []remote.Host, local bool, err error) {
	if !s.All {
		for _, n := range s.Names {
			if n == remote.Local {
				local = true
				continue
			}
			h, err := f.host(n)
			if err != nil {
				return nil, false, err
			}
			hosts = append(hosts, h)
		}
		return hosts, local, nil
	}
	root, err := f.Root()
	if err != nil {
		return nil, false, &exitError{code: exitFail, err: err}
	}
	all, err := state.NewStore(root, f.IO.Warn).Hosts()
	if err != nil {
		return nil, false, &exitError{code: exitFail, err: err}
	}
	for _, h := range all {
		rh := toRemote(h)
		if err := rh.Validate(); err != nil {
			return nil, false, fail(exitFail, "host '%s' in hosts.json: %w", h.Name, err)
		}
		hosts = append(hosts, rh)
	}
	return hosts, true, nil
}

func toRemote(h state.Host) remote.Host {
	return remote.Host{Name: h.Name, Target: h.Target, Swarm: h.Swarm, StateRoot: h.StateRoot,
		TmuxSocket: h.TmuxSocket, Env: h.Env, Options: h.SSHOptions}
}

// displayed returns w as a host's output must reach it: a terminal gets
// plain text (escape sequences and control characters dropped: a host
// must not be able to write the clipboard, retitle or redraw the user's
// terminal), anything else the bytes unchanged, for scripts. Call done
// once the output has ended.
func displayed(w io.Writer) (out io.Writer, done func()) {
	if !isTerminal(w) {
		return w, func() {}
	}
	t := termtext.NewWriter(w)
	return t, func() { _ = t.Flush() } // the user's stream, as fmt.Fprint's
}

// sshFailed is the error of a call to host that failed as ssh fails:
// ssh printed why on stderr already.
func sshFailed(h remote.Host, why string) error {
	msg := fmt.Sprintf("cannot reach host '%s' (%s)", h.Name, termtext.Line(h.Target))
	if why != "" {
		msg += ": " + why
	}
	return &exitError{code: remote.ExitSSH, err: hint.Errorf("swarm hosts check "+h.Name, "%s", msg)}
}

// hostOf splits "HOST:NAME" into its host and name; ok is false for a
// plain name (a worker name has no colon).
func hostOf(s string) (host, name string, ok bool) {
	return strings.Cut(s, ":")
}
