package sandbox

// The kit run for real: sandbox.sh starts a container with Podman as
// docker (Debian's podman, runc runtime), from an image made of Debian
// packages (no registry is reachable from the test machines), on the
// network setup-sandbox-network.sh locks down. As the agent inside it,
// the third attack's escapes are tried; the host must see none of them.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/testenv"
	kit "github.com/swarmtools/swarm/templates/sandbox"
)

// imageRepo is the name of the test's image in Podman's store; its tag is
// the key of what it is made of (imageKey), so the image is built once per
// machine and kit version and reused by every later run.
const imageRepo = "localhost/swarm-sandbox-test"

// imagePackages are what the agent's side of the test needs: git, and
// bash (in every Debian image). The kit's own Dockerfile.sandbox starts
// FROM node:22-slim and installs Claude Code with npm: registries the
// test machines cannot reach, so its image is not the one built here.
const imagePackages = "git,procps,ca-certificates"

// containerTools are the programs the test needs; as root (CI) they are
// installed by scripts/deps.sh, and a missing one is a failure.
var containerTools = []string{"podman", "runc", "catatonit", "mmdebstrap", "iptables"}

// requireContainers skips the test when it cannot run here: not root
// (the network lock-down needs iptables, rootless Podman other set-up) or
// a tool missing when not root. As root a missing tool fails the test.
func requireContainers(t *testing.T) {
	t.Helper()
	var missing []string
	for _, p := range containerTools {
		if _, err := exec.LookPath(p); err != nil {
			if _, err := os.Stat(filepath.Join("/usr/sbin", p)); err != nil {
				missing = append(missing, p)
			}
		}
	}
	if os.Geteuid() != 0 {
		t.Skipf("the sandbox kit's real-container test runs as root (it sets up iptables rules); missing here too: %v", missing)
	}
	if len(missing) > 0 {
		t.Fatalf("%s not installed: scripts/deps.sh test installs them", strings.Join(missing, ", "))
	}
}

// engine is Podman as docker: a directory holding a docker that runs
// podman (what podman-docker installs; it is first on PATH, ahead of any
// real docker) and a containers.conf with the runc runtime and limits
// this machine's container can set (it cannot raise a hard limit).
type engine struct {
	bin  string // the directory of the docker shim
	conf string // CONTAINERS_CONF
}

func newEngine(t *testing.T) engine {
	t.Helper()
	dir := t.TempDir()
	e := engine{bin: filepath.Join(dir, "bin"), conf: filepath.Join(dir, "containers.conf")}
	if err := os.Mkdir(e.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\nexec " + podman + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(e.bin, "docker"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	var nofile, nproc syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrlimit(6 /* RLIMIT_NPROC */, &nproc); err != nil {
		t.Fatal(err)
	}
	// Podman as root sets nofile and nproc to its own maxima, which a
	// process without CAP_SYS_RESOURCE cannot set: these stay under the
	// limits the test runs with.
	procs := min(nproc.Cur, 4096)
	conf := fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n[engine]\nruntime = \"runc\"\n",
		nofile.Cur, nofile.Cur, procs, procs)
	if err := os.WriteFile(e.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// env is the environment the kit's scripts run in (iptables is in
// /usr/sbin, not on every PATH).
func (e engine) env() []string {
	return []string{"PATH=" + e.bin + ":" + os.Getenv("PATH") + ":/usr/sbin:/sbin", "CONTAINERS_CONF=" + e.conf}
}

// run runs a program (docker is the shim) with the engine, and returns
// its combined output.
func (e engine) run(t *testing.T, extraEnv []string, name string, args ...string) (string, error) {
	t.Helper()
	if name == "docker" {
		name = filepath.Join(e.bin, "docker")
	}
	if !strings.Contains(name, "/") {
		for _, dir := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/sbin", "/sbin") {
			if p := filepath.Join(dir, name); isExecutable(p) {
				name = p
				break
			}
		}
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(append(os.Environ(), e.env()...), extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}

// freeSubnet is a /24 under 10.199.0.0/16 that no network of this host's
// interfaces overlaps (starting at one of the test process's own, so
// that two runs at once take different ones).
func freeSubnet(t *testing.T) (subnet, gateway string) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		n := (os.Getpid()+i)%200 + 20
		_, cand, _ := net.ParseCIDR(fmt.Sprintf("10.199.%d.0/24", n))
		used := false
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && (ipn.Contains(cand.IP) || cand.Contains(ipn.IP)) {
				used = true
			}
		}
		if !used {
			return cand.String(), fmt.Sprintf("10.199.%d.1", n)
		}
	}
	t.Fatal("no free /24 under 10.199.0.0/16 for the sandbox's network")
	return "", ""
}

// suite is the Debian release of this machine, which its apt sources
// serve (mmdebstrap takes them when given no mirror).
func suite() string {
	data, _ := os.ReadFile("/etc/os-release")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok && v != "" {
			return strings.Trim(v, `"`)
		}
	}
	return "bookworm"
}

// imageKey names what the image is made of: the packages, the suite, and
// the kit's Dockerfile (the kit's version of the image).
func imageKey() string {
	dockerfile, _ := kit.Files.ReadFile("Dockerfile.sandbox")
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s", suite(), imagePackages, dockerfile)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// baseImage returns the test image, building it when Podman's store does
// not have it: mmdebstrap makes a Debian tree of imagePackages as a
// tarball, podman import makes it an image. Older test images are
// removed. One build at a time on a machine (a lock file).
func baseImage(t *testing.T, e engine) string {
	t.Helper()
	tag := imageRepo + ":" + imageKey()
	if _, err := e.run(t, nil, "podman", "image", "exists", tag); err == nil {
		t.Logf("reusing image %s", tag)
		return tag
	}
	lock := flock.New(filepath.Join(os.TempDir(), "swarm-sandbox-test-image.lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Unlock() }() // the test's own lock file: nothing to lose
	if _, err := e.run(t, nil, "podman", "image", "exists", tag); err == nil {
		return tag // built by another test process meanwhile
	}
	start := time.Now()
	tar := filepath.Join(t.TempDir(), "rootfs.tar")
	out, err := e.run(t, nil, "mmdebstrap", "--variant=minbase", "--include="+imagePackages,
		"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*", "--aptopt=Acquire::Retries \"3\"",
		suite(), tar)
	if err != nil {
		t.Fatalf("mmdebstrap: %v\n%s", err, out)
	}
	if out, err := e.run(t, nil, "podman", "import", "--change", `CMD ["bash"]`, tar, tag); err != nil {
		t.Fatalf("podman import: %v\n%s", err, out)
	}
	t.Logf("built image %s from Debian %s packages in %v", tag, suite(), time.Since(start).Round(time.Second))
	if out, err := e.run(t, nil, "podman", "images", "--format", "{{.Repository}}:{{.Tag}}", imageRepo); err == nil {
		for _, old := range strings.Fields(out) {
			if old != tag {
				_, _ = e.run(t, nil, "podman", "rmi", old) // an old image kept costs disk only
			}
		}
	}
	return tag
}

// lockedNetwork sets up the kit's network, under names of this test's own
// (the user's own sandbox network and chains, if any, are left alone),
// and removes it when the test ends. It returns the network's settings
// for sandbox.sh and its gateway address (the host, as the container
// sees it).
func lockedNetwork(t *testing.T, e engine, kitDir string) (env []string, gateway string) {
	t.Helper()
	subnet, gateway := freeSubnet(t)
	env = []string{
		fmt.Sprintf("SANDBOX_NETWORK=swarm-test-%d", os.Getpid()),
		"SANDBOX_SUBNET=" + subnet,
		fmt.Sprintf("SANDBOX_CHAIN=SWT-%d", os.Getpid()),
		// No host name may resolve here: an address range keeps the
		// allow-list from being empty.
		"SANDBOX_ALLOW_CIDRS=192.0.2.0/24",
	}
	t.Cleanup(func() {
		name := strings.TrimPrefix(env[0], "SANDBOX_NETWORK=")
		if out, err := e.run(t, nil, "podman", "ps", "-aq", "--filter", "network="+name); err == nil {
			for _, id := range strings.Fields(out) {
				_, _ = e.run(t, nil, "podman", "rm", "-f", id) // the teardown below says if one is left
			}
		}
		if out, err := e.run(t, env, "bash", filepath.Join(kitDir, "teardown-sandbox-network.sh")); err != nil {
			t.Errorf("teardown-sandbox-network.sh: %v\n%s", err, out)
		}
	})
	for i := 0; i < 2; i++ { // a rerun rebuilds the rules in place
		if out, err := e.run(t, env, "bash", filepath.Join(kitDir, "setup-sandbox-network.sh")); err != nil {
			t.Fatalf("setup-sandbox-network.sh (run %d): %v\n%s", i+1, err, out)
		}
	}
	return env, gateway
}

// hostAddress is this host's address on its default route ("" when it has
// none): a connection to it from the container reaches the host itself.
func hostAddress() string {
	c, err := net.Dial("udp4", "192.0.2.1:9") // no packet is sent
	if err != nil {
		return ""
	}
	defer func() { _ = c.Close() }() // a UDP socket: nothing to lose
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// TestSandboxKitForReal (issue 27, item 27): swarm spawns a worker in a
// worktree whose agent runs through the kit's sandbox.sh in a real
// container, on the kit's locked-down network. As the agent it commits
// (which must work), then tries the third attack's escapes: a nested
// repository with a clean filter recorded in the index (item 20), a
// replace ref and a note for main's tip (item 25), writes to the
// repository's config, hooks, info, packed-refs and the worktree's
// pointers, and connections to the host. None may reach the host: swarm's
// own git afterwards (diff, kill --rm-worktree, a new worktree) runs no
// program the agent planted and checks out main as it was.
func TestSandboxKitForReal(t *testing.T) {
	requireContainers(t)
	testenv.RequireTmux(t)
	t.Parallel()
	e := newEngine(t)
	image := baseImage(t, e)
	kitDir := t.TempDir()
	mustWrite(t, kitDir, Options{})
	netEnv, gateway := lockedNetwork(t, e, kitDir)

	// A host service the container must not reach; a container on
	// Podman's default network, with no lock-down, does reach it.
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // the test's listener: nothing to lose
	port := ln.Addr().(*net.TCPAddr).Port
	hostIP := hostAddress()
	if hostIP != "" {
		probe := fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", hostIP, port)
		if out, err := e.run(t, nil, "docker", "run", "--rm", image, "bash", "-c", probe); err != nil {
			t.Fatalf("a container on the default network cannot reach the host either (the test would prove nothing): %v\n%s", err, out)
		}
	}

	controlRun(t, hostIP, port)

	env := testenv.New(t)
	env.InitRepo()
	repo := env.Dir
	env.Git(repo, "config", "user.name", "A U Thor")
	env.Git(repo, "config", "user.email", "author@example.com")
	common := filepath.Join(repo, ".git")
	mainTip := strings.TrimSpace(env.Git(repo, "rev-parse", "main"))
	marker := filepath.Join(t.TempDir(), "ran") // what a planted program would write, on the host
	before := gitState(t, common)

	wt := filepath.Join(filepath.Dir(repo), filepath.Base(repo)+"-worktrees", "agent")
	admin := filepath.Join(common, "worktrees", "agent")
	hosts := map[string]string{"the gateway": gateway}
	if hostIP != "" {
		hosts["its address"] = hostIP
	}
	attack := escapes(wt, common, admin, mainTip, marker, hosts, port)
	args := []string{"spawn", "--tmux", "--name", "agent", "--worktree"}
	for _, kv := range append(append(e.env(), netEnv...),
		"SANDBOX_IMAGE="+image, "SANDBOX_AGENT=bash", "CPU_LIMIT=1", "MEMORY_LIMIT=1g", "PIDS_LIMIT=128",
		"GH_TOKEN=x", "ANTHROPIC_API_KEY=x", "HOME="+t.TempDir()) {
		args = append(args, "--env", kv)
	}
	start := time.Now()
	env.MustRun(append(args, "--", filepath.Join(kitDir, "sandbox.sh"), "-c", attack)...)
	log := filepath.Join(wt, "escape.log")
	if !clock.Wait(context.Background(), clock.Real, 100*time.Millisecond, time.Minute, func() bool {
		data, _ := os.ReadFile(log)
		return strings.Contains(string(data), "\nend\n")
	}) {
		data, _ := os.ReadFile(log)
		t.Fatalf("the sandboxed agent did not finish in a minute; its output:\n%s\nescape.log:\n%s", env.Run("logs", "agent"), data)
	}
	t.Logf("the sandboxed agent ran in %v", time.Since(start).Round(100*time.Millisecond))
	data, _ := os.ReadFile(log)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		switch {
		case strings.HasPrefix(line, "ESCAPED "), strings.HasPrefix(line, "FAILED "):
			t.Errorf("in the sandbox: %s", line)
		case strings.HasPrefix(line, "blocked "), strings.HasPrefix(line, "ok "), line == "end":
		default:
			t.Logf("in the sandbox: %s", line)
		}
	}
	if !strings.Contains(string(data), "ok commit in the worktree") || !strings.Contains(string(data), "ok record it in the index") {
		t.Fatalf("the agent could not work in the sandbox:\n%s\n%s", data, env.Screen("agent"))
	}

	// On the host: swarm's git in the worktree and the repository.
	if r := env.Run("diff", "agent"); r.Code != 0 {
		t.Errorf("swarm diff: %s", r)
	}
	r := env.Run("kill", "agent", "--rm-worktree")
	if _, err := os.Stat(filepath.Join(wt, "sub", "f")); err != nil {
		t.Errorf("kill --rm-worktree deleted the nested repository: %v\n%s", err, r)
	}
	if after := gitState(t, common); after != before {
		t.Errorf("the repository's git metadata changed:\n%s\nwas:\n%s", after, before)
	}
	for name, want := range map[string]string{"commondir": "../..\n", "gitdir": wt + "/.git\n", "config.worktree": ""} {
		if data, err := os.ReadFile(filepath.Join(admin, name)); err != nil || string(data) != want {
			t.Errorf("the agent's worktree's %s: %q (%v), want %q", name, data, err, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(wt, ".git")); err != nil || string(data) != "gitdir: "+admin+"\n" {
		t.Errorf("the agent's worktree's .git file: %q (%v)", data, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(common, "worktrees")); len(entries) != 1 {
		t.Errorf("worktrees in %s: %v, want the agent's alone", common, entries)
	}
	env.MustRun("spawn", "--name", "second", "--worktree", "--", "sleep", "300")
	second := filepath.Join(filepath.Dir(wt), "second")
	if _, err := os.Stat(filepath.Join(second, "README")); err != nil {
		t.Errorf("the second worktree has no README: %v", err)
	}
	if _, err := os.Stat(filepath.Join(second, "work.txt")); err == nil {
		t.Error("the second worktree checked out the agent's commit in place of main's tip (a replace ref)")
	}
	if got := strings.TrimSpace(env.Git(repo, "rev-parse", "main")); got != mainTip {
		t.Errorf("main moved: %s, was %s", got, mainTip)
	}
	if ran, _ := os.ReadFile(marker); len(ran) > 0 {
		t.Errorf("a program the agent planted ran on the host: %s", ran)
	}
	if got := env.Git(repo, "for-each-ref", "refs/replace", "refs/notes"); got != "" {
		t.Errorf("refs the agent planted: %s", got)
	}
}

// controlRun runs the agent's script on the host, in a worktree of a
// scratch repository laid out as sandbox.sh finds one: every escape must
// go through there, so that "blocked" in the sandbox means the sandbox
// stopped it, not a mistake in the script.
func controlRun(t *testing.T, hostIP string, port int) {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo, wt := filepath.Join(base, "proj"), filepath.Join(base, "proj-worktrees", "agent")
	os.Mkdir(repo, 0o755)
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "agent", wt)
	common := filepath.Join(repo, ".git")
	for _, d := range []string{"refs/replace", "refs/notes", "hooks", "info"} {
		os.MkdirAll(filepath.Join(common, d), 0o755)
	}
	// The host reaches its address on the sandbox's network (the
	// gateway) from that very address, which the lock-down refuses as it
	// would the container: only its own address is tried here.
	hosts := map[string]string{}
	if hostIP != "" {
		hosts["its address"] = hostIP
	}
	script := escapes(wt, common, filepath.Join(common, "worktrees", "agent"), strings.TrimSpace(gitIn(t, repo, "rev-parse", "main")),
		filepath.Join(base, "ran"), hosts, port)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the agent's script on the host: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(filepath.Join(wt, "escape.log"))
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "blocked ") || strings.HasPrefix(line, "FAILED ") {
			t.Errorf("the agent's script, run outside the sandbox: %s (the attempt itself is wrong)", line)
		}
	}
	if !strings.HasSuffix(string(data), "\nend\n") {
		t.Errorf("the agent's script did not end:\n%s", data)
	}
}

// gitState is what of the repository's git directory the agent must not
// change, for comparison: config, hooks, info, packed-refs, the
// replace and notes refs.
func gitState(t *testing.T, common string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{"config", "packed-refs", "config.worktree"} {
		data, err := os.ReadFile(filepath.Join(common, p))
		fmt.Fprintf(&b, "%s: %q %v\n", p, data, err != nil)
	}
	for _, d := range []string{"hooks", "info", "refs/replace", "refs/notes"} {
		entries, _ := os.ReadDir(filepath.Join(common, d))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		slices.Sort(names)
		fmt.Fprintf(&b, "%s/: %s\n", d, strings.Join(names, " "))
	}
	return b.String()
}

// escapes is the agent's script: each attempt prints "blocked WHAT" when
// the sandbox stopped it and "ESCAPED WHAT" when it went through; the work
// an agent must be able to do prints "ok WHAT" or "FAILED WHAT". It runs
// in the worktree wt and writes escape.log there, ending with "end".
func escapes(wt, common, admin, mainTip, marker string, hosts map[string]string, port int) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var s strings.Builder
	fmt.Fprintf(&s, "export C=%s A=%s MAIN=%s M=%s\n", q(common), q(admin), q(mainTip), q(marker))
	s.WriteString(`cd ` + q(wt) + ` || exit 1
try() { what=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "ESCAPED $what"; else echo "blocked $what"; fi; }
must() { what=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "ok $what"; else echo "FAILED $what"; fi; }
{
must "commit in the worktree" sh -c 'echo work > work.txt && git add work.txt && git commit -q -m work'
must "make a nested repository with a clean filter" sh -c '
  mkdir sub && cd sub && git init -q && echo "* filter=evil" > .gitattributes && echo x > f &&
  git config filter.evil.clean "echo nested-filter >> $M; cat" && git add . && git commit -q -m nested'
must "record it in the index" sh -c '
  printf "[submodule \"sub\"]\n\tpath = sub\n\tignore = none\n" > .gitmodules &&
  git add sub .gitmodules 2>/dev/null && git commit -q -m gitlink && echo changed > sub/f'
try "plant refs/replace for main" git replace "$MAIN" HEAD
try "write refs/replace directly" sh -c 'git rev-parse HEAD > "$C/refs/replace/$MAIN"'
try "add a note" git notes add -m planted "$MAIN"
try "write packed-refs" sh -c 'echo "$(git rev-parse HEAD) refs/replace/$MAIN" >> "$C/packed-refs"'
try "set core.fsmonitor" git config core.fsmonitor "echo fsmonitor >> $M"
try "write the repository's config" sh -c 'printf "[core]\n\tfsmonitor = echo fsmonitor >> $M\n" >> "$C/config"'
try "turn on worktree config" git config extensions.worktreeConfig true
try "write config.worktree" sh -c 'printf "[core]\n\tfsmonitor = x\n" > "$A/config.worktree"'
try "add a hook" sh -c 'printf "#!/bin/sh\necho hook >> $M\n" > "$C/hooks/post-checkout" && chmod +x "$C/hooks/post-checkout"'
try "write info/attributes" sh -c 'echo "* filter=evil" > "$C/info/attributes"'
try "rewrite commondir" sh -c 'echo /tmp > "$A/commondir"'
try "rewrite the worktree's gitdir" sh -c 'echo /tmp > "$A/gitdir"'
try "rewrite the worktree's .git file" sh -c 'echo "gitdir: /tmp" > .git'
try "move the worktree's .git file" mv .git .git.old
try "make another worktree's metadata" mkdir "$C/worktrees/x"
`)
	for _, what := range slices.Sorted(maps.Keys(hosts)) {
		fmt.Fprintf(&s, "try \"reach a service on the host (%s)\" bash -c 'exec 3<>/dev/tcp/%s/%d'\n", what, hosts[what], port)
	}
	s.WriteString("echo end\n} > escape.log 2>&1\n")
	return s.String()
}
