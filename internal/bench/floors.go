package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The floors every figure is a ratio to, built and measured in the same
// run: a Go hello-world built as make build builds swarm (what any Go
// command costs to start), and a Go loop that runs one tmux process every
// 2 s and does nothing else (what watching a pane with one tmux process
// per poll costs at the least).

// helloSrc is the hello-world.
const helloSrc = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

// pollLoopSrc runs its arguments as a command every 2 s, for ever, and
// reads its output: a monitor reduced to its one tmux process per poll.
const pollLoopSrc = `package main

import (
	"os"
	"os/exec"
	"time"
)

func main() {
	for {
		exec.Command(os.Args[1], os.Args[2:]...).Output()
		time.Sleep(2 * time.Second)
	}
}
`

// floors are the floor programs' paths.
type floors struct {
	hello, pollLoop string
	// pollShim is a tmux shim of the poll loops' own, so that they run
	// through a shell as the monitors' counted tmux calls do, without
	// adding to the monitors' count.
	pollShim, pollCount string
}

var floor floors

// buildFloors builds the floor programs as make build builds swarm
// (CGO_ENABLED=0, -trimpath, -s -w).
func (e *env) buildFloors(realTmux string) {
	dir := filepath.Join(e.dir, "floors")
	for name, src := range map[string]string{"hello": helloSrc, "pollloop": pollLoopSrc} {
		pkg := filepath.Join(dir, name+"-src")
		check(os.MkdirAll(pkg, 0o755))
		check(os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644))
		check(os.WriteFile(filepath.Join(pkg, "go.mod"), []byte("module "+name+"\n\ngo 1.22\n"), 0o644))
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, name), ".")
		build.Dir = pkg
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: go build %s: %v\n%s", name, err, out)
			os.Exit(1)
		}
	}
	floor = floors{hello: filepath.Join(dir, "hello"), pollLoop: filepath.Join(dir, "pollloop"),
		pollShim: filepath.Join(dir, "tmux-shim"), pollCount: filepath.Join(dir, "tmux.count")}
	check(writeShim(floor.pollShim, floor.pollCount, realTmux))
}

// writeShim writes a tmux shim that logs one line per process to count,
// then becomes tmux.
func writeShim(path, count, realTmux string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf("#!/bin/sh\necho x >> %s\nexec %s \"$@\"\n", count, realTmux)), 0o755)
}

// timed is one command of an interleaved measurement.
type timed struct {
	name string
	run  func()
}

// interleave runs every command once a round, for rounds rounds, and
// returns each one's median and 90th percentile: the machine's load,
// which drifts, weighs on each alike.
func interleave(rounds int, cmds ...timed) (med, p90 map[string]time.Duration) {
	all := map[string][]time.Duration{}
	for r := 0; r < rounds; r++ {
		for _, c := range cmds {
			start := time.Now()
			c.run()
			all[c.name] = append(all[c.name], time.Since(start))
		}
	}
	med, p90 = map[string]time.Duration{}, map[string]time.Duration{}
	for name, ds := range all {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		med[name], p90[name] = ds[len(ds)/2], ds[len(ds)*9/10]
	}
	return med, p90
}

// quiet runs a program with its output discarded and fails the bench
// when it fails (unless mayFail).
func quiet(mayFail bool, env []string, dir string, argv ...string) func() {
	return func() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil && !mayFail {
			fmt.Fprintf(os.Stderr, "bench: %v: %v\n%s", argv, err, out.String())
			os.Exit(1)
		}
	}
}

// ratio prints a/b as a ratio.
func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

// loadAvg is the machine's load average (1, 5 and 15 minutes).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
