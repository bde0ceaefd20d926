package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// TrustRepoEnv, set to 1 in swarm's environment, lets swarm's git commands
// run what the repository's own configuration names (hooks, fsmonitor,
// filter drivers), as a plain git command would: for a post-checkout hook
// that sets up each new worktree, say.
const TrustRepoEnv = "SWARM_GIT_TRUST_REPO"

// safeConfig turns off the programs a repository's configuration can make
// the git commands swarm runs start. A repository's .git is not always the
// user's own work: a sandboxed agent may write to it (see the sandbox
// kit), or it came in an archive. Command-line configuration wins over
// every file, and git passes it on to the git processes it starts itself
// (git worktree remove runs git status).
var safeConfig = []string{
	// An fsmonitor hook runs on every index refresh: status, diff,
	// worktree add and remove, reset.
	"core.fsmonitor=",
	// Hooks: post-checkout (worktree add, reset), reference-transaction
	// (every branch created, moved or deleted).
	"core.hooksPath=/dev/null",
	// Transport and diff programs: swarm fetches nothing and diffs with
	// --no-ext-diff, but no command of swarm's is to run them.
	"core.sshCommand=",
	"diff.external=",
	// Signing runs gpg.program (or gpg.ssh.program), which the
	// repository's configuration can name, and may wait for a passphrase
	// that a background merge can never be given.
	"commit.gpgSign=false",
	// Checking a signature runs the same programs (merge.verifySignatures,
	// log.showSignature): swarm checks none, and with them empty no
	// command of swarm's can start one.
	"gpg.program=", "gpg.openpgp.program=", "gpg.x509.program=", "gpg.ssh.program=",
	"log.showSignature=false",
}

// filterFree are the git commands swarm runs that never read or write a
// file's content, so never run a filter driver (see repoDrivers).
var filterFree = map[string]bool{
	"rev-parse": true, "rev-list": true, "config": true, "check-ref-format": true,
	"branch": true, "update-ref": true, "symbolic-ref": true, "worktree list": true, "worktree prune": true,
}

// emptyEnv holds the empty value --config-env sets a filter's settings to.
const emptyEnv = "SWARM_GIT_EMPTY"

// git runs git in dir with swarm's safety settings (safeArgs) and returns
// its standard output. Every git command swarm runs goes through here.
func git(dir string, args ...string) (string, error) {
	full, err := safeArgs(dir, args)
	if err != nil {
		return "", err
	}
	out, _, err := runGit(dir, full)
	return out, err
}

// safeArgs puts the safety settings before args: safeConfig, and for a
// command that may filter or merge file content, the neutralising of
// every filter and merge driver the repository defines itself
// (repoDrivers). With TrustRepoEnv
// set they are left out.
func safeArgs(dir string, args []string) ([]string, error) {
	args = ignoreSubmodules(args)
	if os.Getenv(TrustRepoEnv) == "1" {
		return args, nil
	}
	var pre []string
	for _, kv := range safeConfig {
		pre = append(pre, "-c", kv)
	}
	cmd := args[0]
	if cmd == "worktree" && len(args) > 1 {
		cmd += " " + args[1]
	}
	if !filterFree[cmd] {
		drivers, merges, err := repoDrivers(dir, pre)
		if err != nil {
			return nil, err
		}
		for _, d := range drivers {
			pre = append(pre, filterOff(d)...)
		}
		for _, d := range merges {
			pre = append(pre, mergeDriverOff(d)...)
		}
	}
	return append(pre, args...), nil
}

// ignoreSubmodules gives a status or diff --ignore-submodules=dirty. To
// tell whether a nested repository (a submodule, or one an agent made in
// its worktree and added to the index) has changes, git runs git status
// in it, with its own configuration: its filter drivers, which
// repoDrivers never sees, would run as the user. Only its commit is then
// compared. The option, not diff.ignoreSubmodules: a .gitmodules in the
// worktree (the agent's) overrides that setting, not the option. A
// populated nested repository keeps its worktree from removal instead
// (DirtyError.nested). Given with TrustRepoEnv too: what a worktree
// holds is judged the same way either way.
func ignoreSubmodules(args []string) []string {
	i := 0
	for i+1 < len(args) && args[i] == "-c" {
		i += 2
	}
	if i >= len(args) || (args[i] != "status" && args[i] != "diff") {
		return args
	}
	out := append(append([]string{}, args[:i+1]...), "--ignore-submodules=dirty")
	return append(out, args[i+1:]...)
}

// falseEnv holds "false", the command a merge driver is set to.
const falseEnv = "SWARM_GIT_FALSE"

// mergeDriverOff makes the merge driver d's command "false": a file the
// repository's .gitattributes gives that driver then conflicts whenever
// both sides changed it, and is reported as a conflict (a driver with
// an empty command would run as a shell that succeeds, and keep one
// side silently).
func mergeDriverOff(d string) []string {
	name := "merge." + d + ".driver"
	if strings.Contains(d, "=") {
		return []string{"--config-env=" + name + "=" + falseEnv}
	}
	return []string{"-c", name + "=false"}
}

// filterOff empties the filter driver d's commands and makes it optional:
// a file it was to convert is then taken as it is. A driver name holding
// "=" cannot be given with -c (git splits there), so it goes through
// --config-env, which splits at the last "=".
func filterOff(d string) []string {
	var out []string
	for _, key := range []string{"clean", "smudge", "process", "required"} {
		name := "filter." + d + "." + key
		if strings.Contains(d, "=") {
			out = append(out, "--config-env="+name+"="+emptyEnv)
		} else {
			out = append(out, "-c", name+"=")
		}
	}
	return out
}

// repoDrivers names the filter drivers (filter.<driver>.clean, smudge,
// process) and the merge drivers (merge.<driver>.driver) that the
// repository's own configuration sets: its config file, a worktree's
// config.worktree, and what they include. Their commands would run on a
// checkout or a status, and on a merge or rebase (swarm merge). Drivers
// set only in the system or the user's global configuration (git-lfs's,
// say) are the user's own and stay. pre is the safety configuration the
// lookup runs with.
func repoDrivers(dir string, pre []string) (filters, merges []string, err error) {
	out, code, err := runGit(dir, append(pre, "config", "-z", "--show-scope", "--get-regexp", `^(filter|merge)\.`))
	if code == 1 && out == "" {
		return nil, nil, nil // none configured
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the repository's git configuration: %w", err)
	}
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope, key := fields[i], fields[i+1]
		key, _, _ = strings.Cut(key, "\n")
		if scope == "system" || scope == "global" || scope == "command" {
			continue
		}
		section, rest, _ := strings.Cut(key, ".")
		// <section>.<driver>.<setting>: the driver is all between.
		dot := strings.LastIndex(rest, ".")
		if dot <= 0 {
			continue // merge.ff and the like: no driver
		}
		d, setting := rest[:dot], rest[dot+1:]
		switch {
		case section == "filter" && !slices.Contains(filters, d):
			filters = append(filters, d)
		case section == "merge" && setting == "driver" && !slices.Contains(merges, d):
			merges = append(merges, d)
		}
	}
	return filters, merges, nil
}

// runGit runs git -C dir args and returns its standard output and exit
// code; the error holds git's message.
func runGit(dir string, args []string) (string, int, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	// Never prompt for credentials or an editor from a background command.
	// Replace refs (refs/replace/<commit>) are off: refs are shared by
	// every worktree and written by agents, and one planted for a branch's
	// tip would change what every later worktree checks out, a diff shows
	// and a merge takes, unseen. This holds with TrustRepoEnv too: it is
	// no program of the repository's, and what swarm checks out must be
	// the commit it names.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_NO_REPLACE_OBJECTS=1",
		emptyEnv+"=", falseEnv+"=false")
	if err := start(cmd); err != nil {
		return "", -1, err
	}
	if err := cmd.Wait(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), code, errors.New(msg)
	}
	return out.String(), 0, nil
}

// start starts cmd with the repository locks this process holds (see
// held).
func start(cmd *exec.Cmd) error {
	held.mu.Lock()
	defer held.mu.Unlock()
	cmd.ExtraFiles = append([]*os.File(nil), held.files...)
	return cmd.Start()
}
