package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/remote"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
)

// newCmdHosts is the hosts command group.
func newCmdHosts(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "The machines swarm reaches with ssh (--host NAME, NAME:worker, --all-hosts)",
		Long: `Each host runs its own swarm (its own state, tmux server and loop monitors); this
swarm reaches it with OpenSSH, as you would: your keys, agent and ~/.ssh/config.
A worker or ralph command runs on a host with --host NAME or NAME:WORKER;
ls, ralph ls and top show every host with --all-hosts.

See docs/remote.md.`,
		Example: `  swarm hosts add gpu1 me@gpu1.example.com --swarm .local/bin/swarm
  swarm hosts install gpu1
  swarm hosts check
  swarm ralph spawn --host gpu1 --name fix --prompt-file PROMPT.md --cwd src/app -- claude
  swarm ls --all-hosts`,
	}
	cmd.AddCommand(newCmdHostsAdd(f, nil), newCmdHostsRm(f, nil), newCmdHostsLs(f, nil),
		newCmdHostsCheck(f, nil), newCmdHostsInstall(f, nil))
	return cmd
}

type hostsAddOptions struct {
	IO   *IO
	Root func() (string, error)

	Host state.Host
}

func newCmdHostsAdd(f *factory, runF func(*hostsAddOptions) error) *cobra.Command {
	opts := &hostsAddOptions{IO: f.IO, Root: f.Root}
	cmd := &cobra.Command{
		Use:   "add NAME SSH_TARGET",
		Short: "Add a host: its name here and what ssh connects to (user@host, an alias of ~/.ssh/config)",
		Example: `  swarm hosts add gpu1 me@gpu1.example.com
  swarm hosts add build build-box --swarm /opt/swarm/bin/swarm --state-root /srv/swarm
  swarm hosts add lab lab --ssh-option Port=2222 --env PATH=/usr/local/bin:/usr/bin:/bin`,
		Args: argsRange(2, 2, "NAME SSH_TARGET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Host.Name, opts.Host.Target = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runHostsAdd(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Host.Swarm, "swarm", "", "swarm on the host (default: swarm on its PATH; a path to install to with swarm hosts install)")
	fs.StringVar(&opts.Host.StateRoot, "state-root", "", "the host's state root (its swarm's SWARM_HOME; default: its own)")
	fs.StringVar(&opts.Host.TmuxSocket, "tmux-socket", "", "the host's tmux socket name (its swarm's SWARM_TMUX_SOCKET)")
	fs.StringArrayVar(&opts.Host.Env, "env", nil, "KEY=VALUE for the host's swarm (repeatable)")
	fs.StringArrayVar(&opts.Host.SSHOptions, "ssh-option", nil, "an ssh -o option for this host, KEY=VALUE (repeatable)")
	return cmd
}

func runHostsAdd(opts *hostsAddOptions) error {
	if err := toRemote(opts.Host).Validate(); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	root, err := opts.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	h := opts.Host
	err = state.NewStore(root, opts.IO.Warn).UpdateHosts(func(hosts *[]state.Host) error {
		for _, o := range *hosts {
			if o.Name == h.Name {
				return hint.Errorf(fmt.Sprintf("swarm hosts rm %s first to change it", h.Name), "host '%s' exists (%s)", h.Name, termtext.Line(o.Target))
			}
		}
		*hosts = append(*hosts, h)
		return nil
	})
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintf(opts.IO.Out, "added host %s (%s)\n", h.Name, h.Target)
	return nil
}

type hostsRmOptions struct {
	IO   *IO
	Root func() (string, error)

	Name string
}

func newCmdHostsRm(f *factory, runF func(*hostsRmOptions) error) *cobra.Command {
	opts := &hostsRmOptions{IO: f.IO, Root: f.Root}
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Forget a host (nothing on it changes)",
		Example: `  swarm hosts rm gpu1`,
		Args:    argsRange(1, 1, "one host name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runHostsRm(opts)
		},
	}
}

func runHostsRm(opts *hostsRmOptions) error {
	root, err := opts.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	err = state.NewStore(root, opts.IO.Warn).UpdateHosts(func(hosts *[]state.Host) error {
		for i, h := range *hosts {
			if h.Name == opts.Name {
				*hosts = append((*hosts)[:i], (*hosts)[i+1:]...)
				return nil
			}
		}
		return hint.Errorf("swarm hosts ls", "unknown host '%s'", opts.Name)
	})
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintf(opts.IO.Out, "removed host %s\n", opts.Name)
	return nil
}

type hostsLsOptions struct {
	IO   *IO
	Root func() (string, error)

	Format string
}

func newCmdHostsLs(f *factory, runF func(*hostsLsOptions) error) *cobra.Command {
	opts := &hostsLsOptions{IO: f.IO, Root: f.Root}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the hosts",
		Example: `  swarm hosts ls
  swarm hosts ls --format json`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runHostsLs(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", formatTable, []string{formatTable, formatJSON}, "output format: table or json")
	return cmd
}

func runHostsLs(opts *hostsLsOptions) error {
	root, err := opts.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	hosts, err := state.NewStore(root, opts.IO.Warn).Hosts()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if opts.Format == formatJSON {
		if hosts == nil {
			hosts = []state.Host{}
		}
		return printJSON(opts.IO, hosts)
	}
	if len(hosts) == 0 {
		return nil
	}
	tw, flush := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "NAME\tTARGET\tSWARM\tSTATE_ROOT\tTMUX_SOCKET")
	for _, h := range hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(h.Name), termtext.Line(h.Target),
			termtext.Line(orDash(h.Swarm)), termtext.Line(orDash(h.StateRoot)), termtext.Line(orDash(h.TmuxSocket)))
	}
	return flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type hostsCheckOptions struct {
	IO    *IO
	Hosts func(hostSet) ([]remote.Host, bool, error)
	SSH   func(time.Duration) (*remote.Client, error)

	Name           string
	ConnectTimeout time.Duration
}

func newCmdHostsCheck(f *factory, runF func(*hostsCheckOptions) error) *cobra.Command {
	opts := &hostsCheckOptions{IO: f.IO, Hosts: f.hosts, SSH: f.sshClient}
	cmd := &cobra.Command{
		Use:   "check [NAME]",
		Short: "Reach each host (or NAME): its swarm, tmux and git versions, platform, round-trip time",
		Long: `Connect to each host, in parallel, and show what runs there: the host's swarm
(swarm hosts install puts this one there), tmux and git, its platform and the
time of one round trip over the shared connection. Exits 1 when a host cannot
be reached or has no working swarm.`,
		Example: `  swarm hosts check
  swarm hosts check gpu1 --connect-timeout 3s`,
		Args: argsRange(0, 1, "at most one host name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runHostsCheck(opts)
		},
	}
	addConnectTimeoutFlag(cmd.Flags(), &opts.ConnectTimeout)
	return cmd
}

func runHostsCheck(opts *hostsCheckOptions) error {
	set := hostSet{All: opts.Name == ""}
	if opts.Name != "" {
		set.Names = []string{opts.Name}
	}
	hosts, _, err := opts.Hosts(set)
	if err != nil {
		return err
	}
	client, err := opts.SSH(opts.ConnectTimeout)
	if err != nil {
		return err
	}
	probes := make([]remote.Probe, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { probes[i], errs[i] = client.Check(context.Background(), h) })
	}
	wg.Wait()
	tw, flush := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "HOST\tREACHABLE\tSWARM\tTMUX\tGIT\tPLATFORM\tRTT")
	bad := 0
	for i, h := range hosts {
		p := probes[i]
		if errs[i] != nil {
			bad++
			fmt.Fprintf(tw, "%s\tno: %s\t-\t-\t-\t-\t-\n", h.Name, termtext.Line(errs[i].Error()))
			continue
		}
		if !p.SwarmOK() {
			bad++
		}
		fmt.Fprintf(tw, "%s\tyes\t%s\t%s\t%s\t%s\t%s\n", h.Name, p.Swarm, p.Tmux, p.Git, p.Platform, rtt(p.RTT))
	}
	if err := flush(); err != nil {
		return err
	}
	if bad > 0 {
		return exitCode(exitFail)
	}
	return nil
}

// rtt renders a round trip: "12ms".
func rtt(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%dms", max(1, d.Milliseconds()))
}

type hostsInstallOptions struct {
	IO    *IO
	Hosts func(hostSet) ([]remote.Host, bool, error)
	SSH   func(time.Duration) (*remote.Client, error)

	Name           string
	Force          bool
	ConnectTimeout time.Duration
}

func newCmdHostsInstall(f *factory, runF func(*hostsInstallOptions) error) *cobra.Command {
	opts := &hostsInstallOptions{IO: f.IO, Hosts: f.hosts, SSH: f.sshClient}
	cmd := &cobra.Command{
		Use:   "install NAME",
		Short: "Copy this swarm binary to the host's --swarm path (checked by SHA-256)",
		Long: `Copy this very swarm binary to the host's --swarm path (swarm hosts add ... --swarm
PATH; a relative path is under the remote user's home) when nothing is there.
The host must run the same OS and architecture. The copy goes to a temporary
file beside the path, its SHA-256 is checked, and only then does it take the
path. A different file already there is left alone unless --force.`,
		Example: `  swarm hosts add gpu1 me@gpu1 --swarm .local/bin/swarm
  swarm hosts install gpu1
  swarm hosts install gpu1 --force   # replace another version`,
		Args: argsRange(1, 1, "one host name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runHostsInstall(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace a different binary at the path")
	addConnectTimeoutFlag(cmd.Flags(), &opts.ConnectTimeout)
	return cmd
}

func runHostsInstall(opts *hostsInstallOptions) error {
	hosts, _, err := opts.Hosts(hostSet{Names: []string{opts.Name}})
	if err != nil {
		return err
	}
	if len(hosts) != 1 {
		return fail(exitFail, "'%s' is this machine, not a host", opts.Name)
	}
	h := hosts[0]
	client, err := opts.SSH(opts.ConnectTimeout)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fail(exitFail, "cannot find this swarm binary: %w", err)
	}
	bin := remote.Binary{Path: self, Platform: runtime.GOOS + "/" + runtime.GOARCH, Version: version}
	how, err := client.Install(context.Background(), h, bin, opts.Force)
	if err != nil {
		return &exitError{code: exitFail, err: installHint(h, bin, err)}
	}
	switch how {
	case remote.Unchanged:
		fmt.Fprintf(opts.IO.Out, "%s: %s is this swarm already\n", h.Name, h.Swarm)
	default:
		fmt.Fprintf(opts.IO.Out, "%s: %s swarm %s at %s\n", h.Name, how, version, h.Swarm)
	}
	return nil
}

// installHint attaches the fix to an install error.
func installHint(h remote.Host, bin remote.Binary, err error) error {
	switch {
	case errors.Is(err, remote.ErrNoInstallPath):
		return hint.Wrap(err, "swarm hosts rm %[1]s && swarm hosts add %[1]s %[2]s --swarm .local/bin/swarm", h.Name, h.Target)
	case errors.Is(err, remote.ErrPlatform):
		return hint.Wrap(err, "build one for it (GOOS=... GOARCH=... make build) and copy it to %s yourself", h.Swarm)
	case errors.Is(err, remote.ErrOtherBinary):
		return hint.Wrap(err, "swarm hosts install %s --force", h.Name)
	}
	return err
}
