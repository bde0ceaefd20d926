// Package sshtest runs real OpenSSH servers for tests and benchmarks:
// sshd on loopback addresses (127.0.0.2, 127.0.0.3, ...) with a generated
// host key, a user key in authorized_keys, and a client configuration
// (ssh -F) that reaches each server by an alias with that key and a
// known_hosts of its own: no password, no agent, nothing of the user's
// ~/.ssh read or written.
package sshtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
)

// hostKeyAlias is the name every test server's host key is known by, so
// one known_hosts line covers every address and port.
const hostKeyAlias = "swarm-test-sshd"

// startTimeout bounds the wait for a started sshd to accept connections.
const startTimeout = 10 * time.Second

// Available says why test servers cannot run here, or nil: sshd and ssh
// installed, and, as root, the privilege separation directory sshd
// insists on (made when missing).
func Available() error {
	if _, err := sshdPath(); err != nil {
		return err
	}
	for _, p := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s not installed (Debian: apt-get install openssh-client)", p)
		}
	}
	// Linux answers on all of 127.0.0.0/8; macOS only on the addresses
	// given to lo0.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return fmt.Errorf("no loopback address 127.0.0.2 (macOS: sudo ifconfig lo0 alias 127.0.0.2 up, and .3 ...): %w", err)
	}
	_ = l.Close() // a probe: the address answered, which is all it asked
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return fmt.Errorf("sshd needs /run/sshd: %w", err)
		}
	}
	return nil
}

// sshdPath finds sshd, which must be run by its absolute path (it
// re-executes itself); /usr/sbin is not on every user's PATH.
func sshdPath() (string, error) {
	if p, err := exec.LookPath("sshd"); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("sshd not installed (Debian: apt-get install openssh-server)")
}

// Keys are one set of test servers' keys and the client configuration
// that reaches them.
type Keys struct {
	Dir string
	// ConfigFile is the client configuration: give it to ssh as -F.
	ConfigFile string
	userKey    string
	hostKey    string
	authorized string
	mu         sync.Mutex
}

// NewKeys makes the host key, the user key, authorized_keys, known_hosts
// and the client configuration in dir.
func NewKeys(dir string) (*Keys, error) {
	k := &Keys{Dir: dir, ConfigFile: filepath.Join(dir, "ssh_config"),
		userKey: filepath.Join(dir, "user_key"), hostKey: filepath.Join(dir, "host_key"),
		authorized: filepath.Join(dir, "authorized_keys")}
	for _, key := range []string{k.userKey, k.hostKey} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "swarm-test", "-f", key).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ssh-keygen: %w: %s", err, out)
		}
	}
	userPub, err := os.ReadFile(k.userKey + ".pub")
	if err != nil {
		return nil, err
	}
	hostPub, err := os.ReadFile(k.hostKey + ".pub")
	if err != nil {
		return nil, err
	}
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	files := map[string]string{
		k.authorized: string(userPub),
		knownHosts:   hostKeyAlias + " " + string(hostPub),
		k.ConfigFile: fmt.Sprintf(`Host *
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  IdentityAgent none
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  HostKeyAlias %s
  LogLevel ERROR
`, u.Username, k.userKey, knownHosts, hostKeyAlias),
	}
	for path, data := range files {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Server is one running sshd.
type Server struct {
	// Alias reaches it through Keys.ConfigFile (ssh -F CONFIG ALIAS).
	Alias string
	Addr  string
	Port  int
	// Log is sshd's log file.
	Log string
	cmd *exec.Cmd
}

// Start starts sshd on addr (a free port) with sshd_config lines extra
// added, and makes alias reach it. It returns once sshd accepts
// connections.
func (k *Keys) Start(alias, addr string, extra ...string) (*Server, error) {
	sshd, err := sshdPath()
	if err != nil {
		return nil, err
	}
	port, err := freePort(addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Alias: alias, Addr: addr, Port: port, Log: filepath.Join(k.Dir, alias+".log")}
	conf := filepath.Join(k.Dir, alias+".sshd_config")
	lines := append([]string{
		"Port " + strconv.Itoa(port),
		"ListenAddress " + addr,
		"HostKey " + k.hostKey,
		"PidFile none",
		"AuthorizedKeysFile " + k.authorized,
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		// CI runs as root; the keys are the test's own.
		"PermitRootLogin prohibit-password",
		// The keys live in a temp directory sshd would find too open.
		"StrictModes no",
		"UsePAM no",
		"LogLevel VERBOSE",
	}, extra...)
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(sshd, "-D", "-e", "-f", conf, "-E", s.Log)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting sshd: %w", err)
	}
	go func() { _ = s.cmd.Wait() }() // reaps it; how it ended is in its log (s.Log)
	if err := waitListening(addr, port); err != nil {
		s.Stop()
		log, _ := os.ReadFile(s.Log)
		return nil, fmt.Errorf("sshd on %s:%d: %w\n%s", addr, port, err, log)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	f, err := os.OpenFile(k.ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		s.Stop()
		return nil, err
	}
	// Host blocks before "Host *" would be nicer to read; ssh takes the
	// first value of each option, and "Host *" sets neither of these.
	_, err = fmt.Fprintf(f, "Host %s\n  HostName %s\n  Port %d\n", alias, addr, port)
	if err = errors.Join(err, f.Close()); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// freePort finds a port free on addr.
func freePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	defer func() { _ = l.Close() }() // a probe: the port is all it asked
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something accepts connections on addr:port.
func waitListening(addr string, port int) error {
	var err error
	if clock.Wait(context.Background(), clock.Real, 20*time.Millisecond, startTimeout, func() bool {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", net.JoinHostPort(addr, strconv.Itoa(port)), time.Second); err == nil {
			_ = c.Close() // a probe: the connection was accepted, which is all it asked
			return true
		}
		return false
	}) {
		return nil
	}
	return fmt.Errorf("not listening after %s: %w", startTimeout, err)
}

// Stop kills sshd and every session it runs (sshd puts each connection
// in a session of its own, so they are found as its descendants): the
// host is gone, and so is every connection to it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	pids := append(descendants(s.cmd.Process.Pid), s.cmd.Process.Pid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL) // one gone already is what is wanted
	}
}

// descendants lists pid's descendants, read from /proc.
func descendants(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	stack := []int{pid}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			out = append(out, c)
			stack = append(stack, c)
		}
	}
	return out
}
