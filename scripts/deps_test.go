// Package scripts holds the repository's shell scripts; its tests run
// them against fake programs.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin is a directory that is the whole PATH of a run of deps.sh: the
// programs named in have, an id that prints uid, and, when asked, an
// apt-get and a sudo that record how they were called. apt-get install
// makes each package it is given appear as a program (unless broken).
func fakeBin(t *testing.T, have []string, uid string, apt bool, sudo string, broken bool) (bin, record string) {
	t.Helper()
	bin = t.TempDir()
	record = filepath.Join(t.TempDir(), "record")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range have {
		write(p, "exit 0\n")
	}
	write("id", "echo "+uid+"\n")
	if apt {
		install := `for a in "$@"; do case "$a" in -*|install|update) ;; *) printf '#!/bin/sh\n' > "` + bin + `/$a"; /bin/chmod +x "` + bin + `/$a";; esac; done`
		if broken {
			install = ":"
		}
		write("apt-get", `echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> `+record+"\n"+install+"\n")
	}
	switch sudo {
	case "nopasswd", "asks":
		rc := map[string]string{"nopasswd": "0", "asks": "1"}[sudo]
		write("sudo", `echo "sudo $*" >> `+record+`
[ "$1" = -n ] && shift
[ "$1" = true ] && exit `+rc+`
exec /usr/bin/env "$@"
`)
	}
	return bin, record
}

func TestDeps(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	testTools := []string{"tmux", "git", "make", "gcc", "shellcheck", "python3", "ssh", "sshd", "podman", "runc", "catatonit", "mmdebstrap", "iptables"}
	without := func(drop ...string) []string {
		var out []string
		for _, p := range testTools {
			if !strings.Contains(" "+strings.Join(drop, " ")+" ", " "+p+" ") {
				out = append(out, p)
			}
		}
		return out
	}
	cases := []struct {
		name    string
		groups  []string
		have    []string
		uid     string
		apt     bool
		sudo    string
		broken  bool
		env     []string
		code    int
		record  string // what apt-get and sudo were asked, in order
		stdout  string
		stderr  string
		nowHave string // a program that must exist after the run
	}{
		{name: "nothing missing", groups: []string{"test"}, have: testTools, uid: "1000", apt: true, sudo: "nopasswd"},
		{name: "root installs with apt-get", groups: []string{"demo"}, have: without("tmux"), uid: "0", apt: true,
			record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq tmux DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing tmux with apt-get (make demo needs tmux)\n", nowHave: "tmux"},
		{name: "a user installs through sudo that does not ask", groups: []string{"demo"}, have: without("tmux", "git"), uid: "1000", apt: true, sudo: "nopasswd",
			record: "sudo -n true\nsudo -n DEBIAN_FRONTEND=noninteractive apt-get update -qq\napt-get update -qq DEBIAN_FRONTEND=noninteractive\n" +
				"sudo -n DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux git\napt-get install -y -qq tmux git DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing tmux git with apt-get (make demo needs tmux, git)\n", nowHave: "git"},
		{name: "a sudo that would ask installs nothing", groups: []string{"demo"}, have: without("tmux"), uid: "1000", apt: true, sudo: "asks",
			code: 1, record: "sudo -n true\n",
			stderr: "deps: error: make demo needs tmux, not installed\nhint: sudo apt-get install tmux\n"},
		{name: "no sudo", groups: []string{"demo"}, have: without("tmux"), uid: "1000", apt: true,
			code: 1, stderr: "deps: error: make demo needs tmux, not installed\nhint: sudo apt-get install tmux\n"},
		{name: "no apt-get names the packages", groups: []string{"demo"}, have: without("tmux"), uid: "0",
			code: 1, stderr: "deps: error: make demo needs tmux, not installed\nhint: install them with your system's package manager (Debian/Ubuntu packages: tmux)\n"},
		{name: "tests need a C compiler for -race", groups: []string{"test"}, have: without("gcc", "shellcheck"), uid: "1000",
			code: 1, stderr: "deps: error: make test needs gcc, not installed\nhint: install them with your system's package manager (Debian/Ubuntu packages: gcc libc6-dev shellcheck)\n"},
		{name: "only optional programs missing", groups: []string{"test"}, have: without("shellcheck", "python3"), uid: "1000",
			stderr: "deps: note: shellcheck, python3 not installed: the tests that need shellcheck, python3 are skipped (to run them: install them with your system's package manager (Debian/Ubuntu packages: shellcheck python3))\n"},
		{name: "root installs optional programs too", groups: []string{"test"}, have: without("python3"), uid: "0", apt: true,
			record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq python3 DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing python3 with apt-get (make test needs python3)\n", nowHave: "python3"},
		{name: "SWARM_NO_INSTALL only says what to do", groups: []string{"demo"}, have: without("tmux"), uid: "0", apt: true, env: []string{"SWARM_NO_INSTALL=1"},
			code: 1, stderr: "deps: error: make demo needs tmux, not installed\nhint: apt-get install tmux\n"},
		{name: "root installs OpenSSH for the remote hosts' tests", groups: []string{"test"}, have: without("ssh", "sshd"), uid: "0", apt: true,
			record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq openssh-client openssh-server DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing openssh-client openssh-server with apt-get (make test needs ssh, sshd)\n", nowHave: "openssh-server"},
		{name: "root installs the sandbox kit's container tools", groups: []string{"test"}, have: without("podman", "runc", "catatonit", "mmdebstrap", "iptables"), uid: "0", apt: true,
			record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq podman runc catatonit mmdebstrap iptables DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing podman runc catatonit mmdebstrap iptables with apt-get (make test needs podman, runc, catatonit, mmdebstrap, iptables)\n", nowHave: "mmdebstrap"},
		{name: "agents: node is in the package nodejs", groups: []string{"agents"}, uid: "0", apt: true,
			record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq nodejs npm DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing nodejs npm with apt-get (make test-agents needs node, npm)\n", nowHave: "nodejs"},
		{name: "an install that did not bring the program", groups: []string{"demo"}, have: without("tmux"), uid: "0", apt: true, broken: true,
			code: 1, record: "apt-get update -qq DEBIAN_FRONTEND=noninteractive\napt-get install -y -qq tmux DEBIAN_FRONTEND=noninteractive\n",
			stdout: "deps: installing tmux with apt-get (make demo needs tmux)\n",
			stderr: "deps: error: tmux is still not on PATH after apt-get install tmux\n"},
		{name: "two groups, each package once", groups: []string{"demo", "test"}, have: without("tmux", "git"), uid: "1000",
			code: 1, stderr: "deps: error: make demo make test needs tmux, git, not installed\nhint: install them with your system's package manager (Debian/Ubuntu packages: tmux git)\n"},
		{name: "an unknown group", groups: []string{"bogus"}, uid: "0", code: 2, stderr: "usage: scripts/deps.sh demo|test|agents ...\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin, record := fakeBin(t, c.have, c.uid, c.apt, c.sudo, c.broken)
			cmd := exec.Command("/bin/bash", append([]string{script}, c.groups...)...)
			cmd.Env = append([]string{"PATH=" + bin, "SWARM_SBIN_DIRS="}, c.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			rec, _ := os.ReadFile(record)
			if code != c.code || stdout.String() != c.stdout || stderr.String() != c.stderr || string(rec) != c.record {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s\nrecord:\n%s\nwant:\n%s",
					code, c.code, stdout.String(), c.stdout, stderr.String(), c.stderr, rec, c.record)
			}
			if c.nowHave != "" {
				if _, err := os.Stat(filepath.Join(bin, c.nowHave)); err != nil {
					t.Errorf("%s not installed: %v", c.nowHave, err)
				}
			}
		})
	}
}

// make install says when the directory it installed into is not on PATH
// (-o build: the binary under test is a stand-in, nothing is built).
func TestMakeInstallSaysWhenNotOnPath(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not on PATH")
	}
	prefix, bin := t.TempDir(), filepath.Join(t.TempDir(), "swarm")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	note := "note: " + prefix + "/bin is not on your PATH: add it, e.g. in ~/.profile: export PATH=\"" + prefix + "/bin:$PATH\"\n"
	for _, onPath := range []bool{false, true} {
		path := os.Getenv("PATH")
		if onPath {
			path = prefix + "/bin:" + path
		}
		cmd := exec.Command("make", "-s", "--no-print-directory", "-C", "..", "-o", "build", "install", "PREFIX="+prefix, "BIN="+bin)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make install: %v\n%s", err, out)
		}
		want := "installed " + prefix + "/bin/swarm\n"
		if !onPath {
			want += note
		}
		if string(out) != want {
			t.Errorf("on PATH %v: make install printed\n%s\nwant\n%s", onPath, out, want)
		}
	}
}
