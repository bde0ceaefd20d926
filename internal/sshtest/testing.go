package sshtest

import (
	"fmt"
	"net"
	"os"
	"testing"
)

// Require skips the test when test servers cannot run here, saying why;
// on CI (CI set), where .ci/run installs OpenSSH, it fails instead.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("OpenSSH tests cannot run on CI: %v", err)
		}
		t.Skipf("OpenSSH tests skipped: %v", err)
	}
}

// New makes keys in a temp dir and starts one sshd per alias, on
// 127.0.0.2, 127.0.0.3, ... in order; they are stopped when the test
// ends.
func New(t testing.TB, aliases ...string) (*Keys, []*Server) {
	t.Helper()
	Require(t)
	k, err := NewKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var servers []*Server
	for i, alias := range aliases {
		s, err := k.Start(alias, fmt.Sprintf("127.0.0.%d", i+2))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		servers = append(servers, s)
	}
	return k, servers
}

// Silent listens on ip (a loopback address) and accepts connections but
// never answers: a host that hangs the SSH handshake, for connect
// timeouts. It returns the port; the listener closes when the test ends.
func Silent(t testing.TB, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // the test is over; its connections go with it
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close() // held open until now, never written to
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}
