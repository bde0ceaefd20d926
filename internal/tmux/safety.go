package tmux

import (
	"errors"

	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/swarmtools/swarm/internal/hint"
)

// CheckOwner refuses a socket path (tmux -S) that another user may be
// listening on: a socket that is not this user's, or a directory holding
// it that another user owns or others can write. A recorded path outlives
// its server (a reboot, kill-server), and in a directory others can write
// (/tmp) another user can listen there next; a client that connects sends
// the server its commands and its environment, and types what the server
// says into the user's agents. tmux checks the directory of its -L
// sockets itself (tmux-UID, 0700); a path is checked here, before every
// client that connects. A path that does not exist yet is fine: no server
// listens there, and tmux makes its socket as the user.
func (s Server) CheckOwner() error {
	if s.Path == "" {
		return nil
	}
	return checkSocketPath(s.Path)
}

func checkSocketPath(path string) error {
	dir := filepath.Dir(path)
	link, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fix := "start tmux with a socket in a directory of your own (tmux -S ~/.tmux/NAME, or tmux -L NAME), or give swarm a server of its own with --tmux-socket NAME"
	for _, f := range []fs.FileInfo{link, fi} {
		if uid, ok := ownerOf(f); ok && uid != os.Geteuid() {
			return hint.Errorf(fix, "tmux socket directory %s is owned by another user (uid %d)", dir, uid)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return hint.Errorf(fix, "tmux socket directory %s is writable by others (mode %04o)", dir, perm)
	}
	sock, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if uid, ok := ownerOf(sock); ok && uid != os.Geteuid() {
		return hint.Errorf("this server is not yours (yours is gone); give swarm a server of its own with --tmux-socket NAME",
			"tmux socket %s is owned by another user (uid %d)", path, uid)
	}
	if sock.Mode().Type() != fs.ModeSocket {
		return hint.Errorf("remove it if no tmux should be there, or give swarm a server of its own with --tmux-socket NAME",
			"tmux socket %s is not a socket (%s)", path, sock.Mode().Type())
	}
	return nil
}

// ownerOf returns the uid owning fi; ok is false where the system does
// not say.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// clientEnvKeys are the variables a tmux client is run with; clientEnv
// leaves out every other. A client sends the server its whole
// environment, and the client that starts a server makes it the server's
// global environment, which every window inherits and every client of
// the server can read (show-environment -g): an API key in the shell that
// ran swarm would reach every pane, and any server listening on the
// socket. What is kept is what tmux itself reads (its socket directory,
// configuration, locale, terminal, shell, editor, the user's identity), what a
// shell of a server swarm started needs (PATH), tmux's default
// update-environment (copied into each new session as tmux would), and
// $TMUX, by which plain tmux finds its server. A worker's own environment
// does not come from here: it reaches the worker through its env file
// (worker.WindowLaunch).
var clientEnvKeys = map[string]bool{
	"HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "PATH": true,
	"TERM": true, "COLORTERM": true, "TERMINFO": true, "TERMINFO_DIRS": true,
	"LANG": true, "LANGUAGE": true, "TZ": true,
	"TMUX": true, "TMUX_TMPDIR": true, "TMPDIR": true,
	"XDG_CONFIG_HOME": true, "XDG_RUNTIME_DIR": true,
	// vi keys in copy mode and at the prompt when they name vi (mode-keys,
	// status-keys), as the user's own tmux has them
	"VISUAL": true, "EDITOR": true,
	// tmux's default update-environment
	"DISPLAY": true, "KRB5CCNAME": true, "SSH_ASKPASS": true, "SSH_AUTH_SOCK": true,
	"SSH_AGENT_PID": true, "SSH_CONNECTION": true, "WINDOWID": true, "XAUTHORITY": true,
}

// clientEnv is environ reduced to what a tmux client is run with
// (clientEnvKeys, and the locale's LC_* variables).
func clientEnv(environ []string) []string {
	out := make([]string, 0, len(clientEnvKeys))
	for _, e := range environ {
		k, _, ok := strings.Cut(e, "=")
		if ok && (clientEnvKeys[k] || strings.HasPrefix(k, "LC_")) {
			out = append(out, e)
		}
	}
	return out
}
