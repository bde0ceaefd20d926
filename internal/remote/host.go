package remote

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Local is the name the local machine goes by in listings of many hosts
// (the HOST column, JSON's "host"); no host may take it.
const Local = "local"

// DefaultSwarm is the remote swarm when a host names none: found on the
// PATH of the remote user's non-interactive shell.
const DefaultSwarm = "swarm"

// Host is a machine swarm runs on, reached with ssh.
type Host struct {
	// Name is what commands call it (--host NAME, NAME:worker).
	Name string
	// Target is what ssh is given: user@host, host, an alias of
	// ~/.ssh/config.
	Target string
	// Swarm is the swarm binary on the host ("" is DefaultSwarm).
	Swarm string
	// StateRoot and TmuxSocket, when set, are the remote swarm's
	// SWARM_HOME and SWARM_TMUX_SOCKET.
	StateRoot  string
	TmuxSocket string
	// Env is more KEY=VALUE for the remote swarm's environment.
	Env []string
	// Options are ssh -o options for this host (KEY=VALUE).
	Options []string
}

// Compiled on first use: a package-level regexp is paid by every command
// at start-up (the {0,63} alone is hundreds of allocations).
var (
	hostName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	envName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	optionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`) })
)

// ValidateName checks a host's name: it is typed before a worker's name
// with a colon (gpu1:fixer) and becomes a column of listings, so it has a
// worker name's characters and no colon.
func ValidateName(name string) error {
	if !hostName().MatchString(name) || name == Local {
		return fmt.Errorf("invalid host name '%s' (use letters, digits, '.', '_', '-'; max 64; not %q)", name, Local)
	}
	return nil
}

// ValidateTarget checks an ssh target. One that starts with '-' would be
// read by ssh as an option (-oProxyCommand=... runs a command here), and
// whitespace or a control character has no place in a host name.
func ValidateTarget(target string) error {
	switch {
	case target == "":
		return errors.New("empty ssh target")
	case strings.HasPrefix(target, "-"):
		return fmt.Errorf("invalid ssh target '%s': it starts with '-', which ssh would read as an option", target)
	case strings.IndexFunc(target, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("invalid ssh target %q: it holds a space or a control character", target)
	}
	return nil
}

// Validate checks every field of h before it is stored or used.
func (h Host) Validate() error {
	if err := ValidateName(h.Name); err != nil {
		return err
	}
	if err := ValidateTarget(h.Target); err != nil {
		return err
	}
	// env takes a first word with '=' for a variable, and one starting
	// with '-' for its own option.
	if strings.HasPrefix(h.Swarm, "-") || strings.Contains(h.Swarm, "=") {
		return fmt.Errorf("invalid swarm path '%s' (no leading '-', no '=')", h.Swarm)
	}
	for _, kv := range h.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName().MatchString(k) {
			return fmt.Errorf("invalid environment variable '%s' (use KEY=VALUE)", kv)
		}
	}
	for _, o := range h.Options {
		if err := ValidateOption(o); err != nil {
			return err
		}
	}
	return nil
}

// ValidateOption checks an ssh -o option: KEY=VALUE, the key a word.
func ValidateOption(o string) error {
	k, _, ok := strings.Cut(o, "=")
	if !ok || !optionName().MatchString(k) {
		return fmt.Errorf("invalid ssh option '%s' (use KEY=VALUE, as in ssh -o Port=2222)", o)
	}
	return nil
}

// SwarmArgv is the remote command that runs the host's swarm with args:
// env with the host's SWARM_HOME, SWARM_TMUX_SOCKET and variables first,
// when it has any (env works under any login shell, where VAR=value cmd
// is a POSIX shell's syntax only).
func (h Host) SwarmArgv(args ...string) []string {
	swarm := h.Swarm
	if swarm == "" {
		swarm = DefaultSwarm
	}
	var env []string
	if h.StateRoot != "" {
		env = append(env, "SWARM_HOME="+h.StateRoot)
	}
	if h.TmuxSocket != "" {
		env = append(env, "SWARM_TMUX_SOCKET="+h.TmuxSocket)
	}
	env = append(env, h.Env...)
	var argv []string
	if len(env) > 0 {
		argv = append(append([]string{"env"}, env...), swarm)
	} else {
		argv = []string{swarm}
	}
	return append(argv, args...)
}
