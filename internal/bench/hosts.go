package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/remote"
	"github.com/swarmtools/swarm/internal/sshtest"
)

// hostsFanout measures swarm ls --all-hosts over n hosts of workers
// workers each, every host a real sshd on its own loopback address with
// its own state root and tmux server, against the slowest host's own
// ssh HOST swarm ls --format json over the same shared connection (the
// issue's target: the fan-out within 1.5 times that).
func (e *env) hostsFanout(n, workers int) {
	fmt.Printf("\nswarm ls --all-hosts: %d hosts x %d workers, each host an sshd on loopback (%d runs per figure)\n", n, workers, *runs)
	if err := sshtest.Available(); err != nil {
		fmt.Printf("  skipped: %v\n", err)
		return
	}
	keyDir := filepath.Join(e.dir, "ssh-keys")
	check(os.MkdirAll(keyDir, 0o700))
	keys, err := sshtest.NewKeys(keyDir)
	check(err)
	home := filepath.Join(e.dir, "fanout-home")
	var hosts []remote.Host
	for i := 0; i < n; i++ {
		srv, err := keys.Start(fmt.Sprintf("h%d", i), fmt.Sprintf("127.0.0.%d", i+2))
		check(err)
		defer srv.Stop()
		he := &env{dir: e.dir, home: filepath.Join(e.dir, fmt.Sprintf("host%d", i)), socket: fmt.Sprintf("%s-h%d", e.socket, i)}
		defer func() { _ = exec.Command("tmux", "-L", he.socket, "kill-server").Run() }() // tidying up: the figures are printed
		he.addWorkers(0, workers)
		h := remote.Host{Name: srv.Alias, Target: srv.Alias, Swarm: *swarmBin, StateRoot: he.home, TmuxSocket: he.socket}
		hosts = append(hosts, h)
		out, err := e.hostsSwarm(home, keys, "hosts", "add", h.Name, h.Target, "--swarm", h.Swarm, "--state-root", h.StateRoot, "--tmux-socket", h.TmuxSocket)
		check(errOut(err, out))
	}
	client := &remote.Client{ConfigFile: keys.ConfigFile, ControlDir: remote.ControlDirFor(home, filepath.Join(e.dir, "ssh"))}
	defer closeMasters(client.ControlDir)
	// Warm: the shared connections both measurements use.
	out, err := e.hostsSwarm(home, keys, "ls", "--all-hosts", "--format", "json")
	check(errOut(err, out))
	// Rounds, each timing every host's own call and then the fan-out,
	// so the machine's load (it drifts) weighs on both alike.
	single := make([][]time.Duration, len(hosts))
	var fan []time.Duration
	for r := 0; r < *runs; r++ {
		for i, h := range hosts {
			argv, err := client.Argv(h, false, remote.Command(h.SwarmArgv("ls", "--format", "json")))
			check(err)
			start := time.Now()
			out, err := runOut(argv)
			check(errOut(err, out))
			single[i] = append(single[i], time.Since(start))
		}
		start := time.Now()
		out, err := e.hostsSwarm(home, keys, "ls", "--all-hosts", "--format", "json")
		check(errOut(err, out))
		fan = append(fan, time.Since(start))
	}
	slowest, slowestHost, sum := time.Duration(0), "", time.Duration(0)
	for i, h := range hosts {
		med, p90 := medianP90(single[i])
		fmt.Printf("  ssh %s swarm ls --format json:  median %s (p90 %s)\n", h.Name, ms(med), ms(p90))
		sum += med
		if med > slowest {
			slowest, slowestHost = med, h.Name
		}
	}
	fmt.Printf("  the %d one after another:            %s\n", len(hosts), ms(sum))
	med, p90 := medianP90(fan)
	fmt.Printf("  swarm ls --all-hosts:              median %s (p90 %s)\n", ms(med), ms(p90))
	fmt.Printf("  ratio to the slowest host (%s):    %.2fx (target: at most 1.5x; the hosts here share this machine's %d cores)\n",
		slowestHost, float64(med)/float64(slowest), runtime.NumCPU())
}

// medianP90 returns the median and 90th percentile of ds.
func medianP90(ds []time.Duration) (time.Duration, time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*9/10]
}

// hostsSwarm runs the local swarm of the fan-out (state root home, the
// test servers' ssh configuration).
func (e *env) hostsSwarm(home string, keys *sshtest.Keys, args ...string) (string, error) {
	cmd := exec.Command(*swarmBin, args...)
	cmd.Env = append(os.Environ(), "SWARM_HOME="+home, "SWARM_DIR=", "SWARM_SSH_CONFIG="+keys.ConfigFile, "TMUX=")
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func runOut(argv []string) (string, error) {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

func errOut(err error, out string) error {
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out))
	}
	return nil
}

// closeMasters ends the shared connections left in dir.
func closeMasters(dir string) {
	ents, _ := os.ReadDir(dir)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		_ = exec.Command("ssh", "-o", "ControlPath="+filepath.Join(dir, n), "-O", "exit", "x").Run() // one that ended already is what is wanted
	}
}
