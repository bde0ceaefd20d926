package tmux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Server is one tmux server. A worker records the server it lives in, so
// that every later command reaches that server, whatever tmux server (if
// any) the command itself runs in: plain tmux talks to the server $TMUX
// names, and that is not the worker's when the command runs in another.
type Server struct {
	// Name is the -L socket name ("" for none).
	Name string
	// Path is the socket's absolute path (tmux -S). When set it is what
	// the client connects to; Name is then only what swarm.py uses.
	Path string
}

// defaultLabel is the socket name of tmux's default server.
const defaultLabel = "default"

// Check refuses a server a client must not connect to: a socket name
// tmux would turn into a path outside its socket directory (tmux -L
// joins the directory and the name), and a path that is not absolute and
// clean or holds control characters. Both come from records anyone with
// the state file could have written.
func (s Server) Check() error {
	if strings.Contains(s.Name, "/") {
		return fmt.Errorf("invalid tmux socket name '%s' (no '/')", s.Name)
	}
	if s.Path != "" && !validPath(s.Path) {
		return fmt.Errorf("invalid tmux socket path %q (it must be absolute and clean)", s.Path)
	}
	return nil
}

// validPath reports an absolute, clean path without control characters.
func validPath(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// SocketPath returns the path the client connects to: Path, or the path
// of the -L name (the default server's without one); "" when tmux's
// socket directory cannot be found.
func (s Server) SocketPath() string {
	if s.Path != "" {
		return s.Path
	}
	label := s.Name
	if label == "" {
		label = defaultLabel
	}
	p, err := LabelPath(label, os.Getenv)
	if err != nil {
		return ""
	}
	return p
}

// ServerFor is the server a new worker's window goes to, with the path
// that finds it again from anywhere: the -L socket name given; else,
// inside tmux, the server $TMUX names (where plain tmux would create it);
// else the default server. The path is left out when it cannot be known
// (an unusable $TMUX, no socket directory): the client then runs plain
// tmux or tmux -L name, as before paths were recorded.
//
// A $TMUX server whose socket is this user's tmux -L NAME keeps NAME as
// its Name, so swarm.py (which runs tmux -L with the record's socket)
// reaches it too.
func ServerFor(name string) (Server, error) {
	s := Server{Name: name}
	if err := s.Check(); err != nil {
		return Server{}, err
	}
	if name == "" {
		if p, ok := envServerPath(os.Getenv("TMUX")); ok {
			if !validPath(p) {
				return Server{}, nil
			}
			return Server{Name: labelOf(p, os.Getenv), Path: p}, nil
		}
	}
	s.Path = s.SocketPath()
	return s, nil
}

// envServerPath is the socket path in a $TMUX value
// ("socket_path,server_pid,session_index"), as tmux reads it: everything
// before the first comma, when that is not empty.
func envServerPath(v string) (string, bool) {
	p, _, _ := strings.Cut(v, ",")
	return p, p != ""
}

// labelOf returns the -L name of a socket path in this user's tmux socket
// directory ("" for any other path, and for the default server, which
// swarm.py reaches without one).
func labelOf(p string, getenv func(string) string) string {
	dir, err := SocketDir(getenv)
	if err != nil || filepath.Dir(p) != dir {
		return ""
	}
	if name := filepath.Base(p); name != defaultLabel {
		return name
	}
	return ""
}

// ownLabel returns the -L name that reaches the socket at path from this
// process ("default" for the default server), or "" when path is not in
// the directory where this process's tmux keeps its -L sockets.
func ownLabel(path string) string {
	dir, err := SocketDir(os.Getenv)
	if err != nil || filepath.Dir(path) != dir {
		return ""
	}
	return filepath.Base(path)
}

// LabelPath returns the socket path of tmux -L label.
func LabelPath(label string, getenv func(string) string) (string, error) {
	dir, err := SocketDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, label), nil
}

// SocketDir returns the directory holding this user's tmux -L sockets,
// found as tmux 3 finds it: the first of $TMUX_TMPDIR and /tmp that
// resolves (symbolic links resolved, relative to the working directory),
// then tmux-UID.
func SocketDir(getenv func(string) string) (string, error) {
	for _, d := range []string{getenv("TMUX_TMPDIR"), "/tmp"} {
		if d == "" {
			continue
		}
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if r, err = filepath.Abs(r); err == nil {
			return filepath.Join(r, fmt.Sprintf("tmux-%d", os.Getuid())), nil
		}
	}
	return "", errors.New("no directory for tmux sockets")
}
