package main

// --host NAME and NAME:worker: a worker or ralph command given a host is
// run by the host's own swarm, through ssh, with the same command line
// less --host, and its exit code, stdout and stderr come back. This is
// done once, here, for every such command (execute), not in each.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/remote"
	"github.com/swarmtools/swarm/internal/state"
)

// remoteSpec says how a command reaches a host.
type remoteSpec struct {
	// nameArg: its first argument is a worker or loop name, which may be
	// HOST:NAME; only when it has at least minArgs arguments (send's
	// first is a name only before a text).
	nameArg bool
	minArgs int
	// nameFlag is the flag naming the worker (spawn's --name), which may
	// be HOST:NAME.
	nameFlag string
	// tty: the command needs a terminal on the host (attach).
	tty bool
	// prompt: its --prompt-file, a file here, is copied to the host.
	prompt bool
}

var (
	named       = remoteSpec{nameArg: true}
	spawnSpec   = remoteSpec{nameFlag: "name", prompt: true}
	remoteSpecs = map[string]remoteSpec{
		"spawn": spawnSpec, "ls": {}, "status": named, "peek": named, "logs": named,
		"attach": {nameArg: true, tty: true}, "send": {nameArg: true, minArgs: 2}, "interrupt": named,
		"eof": named, "wait": named, "kill": named, "clean": named, "respawn": named,
		"heartbeat start": named, "heartbeat stop": named, "heartbeat pause": named,
		"heartbeat resume": named, "heartbeat status": named, "heartbeat list": {},
		"ralph spawn": spawnSpec, "ralph run": named, "ralph pause": named, "ralph resume": named,
		"ralph stop": named, "ralph set": named, "ralph status": named, "ralph wait": named,
		"ralph logs": named, "ralph clean": named, "ralph list": {},
	}
)

// addHostFlags gives every command of remoteSpecs --host and
// --connect-timeout. They are read by planForward, before the command
// itself parses its flags.
func addHostFlags(root *cobra.Command) {
	for path := range remoteSpecs {
		words := strings.Fields(path)
		if !hasCommand(root, words[0]) {
			continue // not built: the command line does not reach it (newCmdRoot)
		}
		c, _, err := root.Find(words)
		if err != nil || c == root {
			panic("remoteSpecs names no command: " + path)
		}
		c.Flags().String(hostFlag, "", "run it on this host (swarm hosts ls), as NAME:WORKER does")
		if c.Flags().Lookup(connectTimeoutFlag) == nil {
			var d time.Duration
			addConnectTimeoutFlag(c.Flags(), &d)
		}
	}
}

// hasCommand reports whether c has a command called name.
func hasCommand(c *cobra.Command, name string) bool {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return true
		}
	}
	return false
}

// forward is a command line to run on a host.
type forward struct {
	cmd     *cobra.Command
	spec    remoteSpec
	host    string
	words   []string // the command's words: "ralph", "spawn"
	args    []string // its flags (--name=value) and arguments, less --host
	timeout time.Duration
	// prompt is the local prompt file to copy, loop the loop's name.
	prompt, loop string
}

// mayForward is a quick look at args before any parsing: without
// "--host" or a colon no command goes to a host.
func mayForward(args []string) bool {
	for _, a := range args {
		if a == "--"+hostFlag || strings.HasPrefix(a, "--"+hostFlag+"=") || strings.Contains(a, ":") {
			return true
		}
	}
	return false
}

// flagValue is a flag as it was given, in order.
type flagValue struct {
	flag  *pflag.Flag
	value string
}

// planForward reads a command line as the command would and returns what
// to run on a host, or nil when it runs here; with a usage error, the
// forward says only which command it is of. root must not run the
// command afterwards (its flags are set). A command line that does not
// parse is left to the command, which reports it.
func planForward(root *cobra.Command, args []string) (*forward, error) {
	c, rest, err := root.Find(args)
	if err != nil || c == root {
		return nil, nil
	}
	path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
	spec, ok := remoteSpecs[path]
	if !ok {
		return nil, nil
	}
	c.InitDefaultHelpFlag()
	fs := c.Flags()
	var given []flagValue
	err = fs.ParseAll(rest, func(fl *pflag.Flag, v string) error {
		given = append(given, flagValue{fl, v})
		return fs.Set(fl.Name, v)
	})
	if err != nil || fs.Changed("help") {
		return nil, nil
	}
	fw := &forward{cmd: c, spec: spec, words: strings.Fields(path), host: fs.Lookup(hostFlag).Value.String()}
	positional := fs.Args()
	if err := fw.takeNames(given, positional); err != nil {
		return fw, err // fw.cmd: the command the usage error is of
	}
	if fw.host == "" {
		return nil, nil
	}
	fw.timeout = *fs.Lookup(connectTimeoutFlag).Value.(*durationValue).p
	fw.build(given, positional)
	return fw, nil
}

// takeNames strips HOST: off the worker name (argument or flag) and
// checks it agrees with --host.
func (fw *forward) takeNames(given []flagValue, positional []string) error {
	take := func(s string) (string, error) {
		h, n, ok := hostOf(s)
		if !ok {
			return s, nil
		}
		if fw.host != "" && h != fw.host {
			return "", usagef("--host %s and %s name different hosts", fw.host, s)
		}
		fw.host = h
		return n, nil
	}
	var err error
	if fw.spec.nameArg && len(positional) >= max(1, fw.spec.minArgs) {
		if positional[0], err = take(positional[0]); err != nil {
			return err
		}
	}
	for i := range given {
		if fw.spec.nameFlag != "" && given[i].flag.Name == fw.spec.nameFlag {
			if given[i].value, err = take(given[i].value); err != nil {
				return err
			}
			fw.loop = given[i].value
		}
	}
	return nil
}

// build makes the host's command line: every flag as given (long names,
// --flag=value, so no value is taken for a flag), less --host and
// --connect-timeout (and --prompt-file, which is copied), then "--" and
// the arguments.
func (fw *forward) build(given []flagValue, positional []string) {
	for _, g := range given {
		switch {
		case g.flag.Name == hostFlag || g.flag.Name == connectTimeoutFlag:
			continue
		case fw.spec.prompt && g.flag.Name == "prompt-file":
			fw.prompt = g.value
			continue
		}
		fw.args = append(fw.args, "--"+g.flag.Name+"="+g.value)
	}
	if len(positional) > 0 {
		fw.args = append(append(fw.args, "--"), positional...)
	}
}

// runForward runs the command on its host and returns the exit code.
func runForward(f *factory, fw *forward) int {
	if fw.host == remote.Local {
		line := append(fw.words, fw.args...)
		return runCommand(f.IO, newCmdRoot(f, line), line)
	}
	code, err := forwardCall(f, fw)
	if err != nil {
		return report(f.IO.Err, fw.cmd, err)
	}
	return code
}

// forwardCall runs fw over ssh.
func forwardCall(f *factory, fw *forward) (int, error) {
	h, err := f.host(fw.host)
	if err != nil {
		return 0, err
	}
	client, err := f.sshClient(fw.timeout)
	if err != nil {
		return 0, err
	}
	argv := h.SwarmArgv(append(fw.words, fw.args...)...)
	call := remote.Call{Host: h}
	switch {
	case fw.spec.tty:
		if !isTerminal(f.IO.In) {
			return 0, fail(exitFail, "swarm attach needs a terminal (standard input is not one)")
		}
		call.TTY, call.Stdin, call.Stdout, call.Stderr = true, f.IO.In, f.IO.Out, f.IO.Err
	case fw.prompt != "":
		data, err := readLocalPrompt(fw.prompt)
		if err != nil {
			return 0, err
		}
		// The host writes the prompt under its state root and runs the
		// spawn with it (swarm _with-prompt).
		argv = h.SwarmArgv(append([]string{withPromptCommand, fw.loop, "--"}, append(fw.words, fw.args...)...)...)
		call.Stdin = bytes.NewReader(data)
	}
	call.Command = remote.Command(argv)
	if !call.TTY {
		var doneOut, doneErr func()
		call.Stdout, doneOut = displayed(f.IO.Out)
		call.Stderr, doneErr = displayed(f.IO.Err)
		defer doneErr()
		defer doneOut()
	}
	res, err := client.Run(context.Background(), call)
	if err != nil {
		return 0, sshFailed(h, remote.Failure(res, err, nil))
	}
	if res.Code == remote.ExitSSH {
		return 0, sshFailed(h, "")
	}
	return res.Code, nil
}

// readLocalPrompt reads the prompt file to copy, with ralph spawn's
// messages for a missing or unusable one.
func readLocalPrompt(path string) ([]byte, error) {
	data, err := state.ReadRegular(path, ralph.MaxPromptBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(exitFail, "prompt file not found: %s", path)
	case errors.Is(err, state.ErrUnsafe):
		return nil, fail(exitFail, "prompt file is not a regular file: %s", path)
	case err != nil:
		return nil, fail(exitFail, "cannot read prompt file %s: %w", path, err)
	}
	return data, nil
}

// withPromptCommand is the hidden command a host's swarm runs a spawn
// under when its prompt file was on the user's machine: "swarm
// _with-prompt LOOP -- ralph spawn ...". It writes its standard input,
// the prompt, to prompts/LOOP.ID.md under its state root and runs the
// spawn with --prompt-file set to it; a spawn that fails leaves no copy.
const withPromptCommand = "_with-prompt"

func newCmdWithPrompt(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:                withPromptCommand + " LOOP -- SWARM-COMMAND...",
		Short:              "Run a spawn with its prompt file read from standard input (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 || args[1] != "--" {
				return usagef("%s expects LOOP -- SWARM-COMMAND...", cmd.CommandPath())
			}
			return runWithPrompt(f, args[0], args[2:])
		},
	}
}

func runWithPrompt(f *factory, loop string, cmdline []string) error {
	root, err := f.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	data, err := readAllMax(f.IO.In, ralph.MaxPromptBytes)
	if err != nil {
		return fail(exitFail, "cannot read the prompt: %w", err)
	}
	store := state.NewStore(root, f.IO.Warn)
	path, err := store.WritePromptCopy(loop, data)
	if err != nil {
		return fail(exitFail, "cannot keep the prompt: %w", err)
	}
	c, rest, err := newCmdRoot(f, cmdline).Find(cmdline)
	if err != nil || c.Name() != "spawn" {
		_ = os.Remove(path) // best effort: the usage error is what to report; a next spawn of the loop removes a copy left
		return usagef("%s runs a spawn, not %q", withPromptCommand, strings.Join(cmdline, " "))
	}
	words := len(cmdline) - len(rest)
	args := append(append(append([]string{}, cmdline[:words]...), "--prompt-file="+path), rest...)
	if code := runCommand(f.IO, newCmdRoot(f, args), args); code != exitOK {
		_ = os.Remove(path) // best effort: the spawn's error is printed; a next spawn of the loop removes a copy left
		return exitCode(code)
	}
	store.RemovePromptCopies(loop, path)
	return nil
}

// readAllMax reads r to its end, at most max bytes.
func readAllMax(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("the prompt is larger than %d bytes", max)
	}
	return data, nil
}
