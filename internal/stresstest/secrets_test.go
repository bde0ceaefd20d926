package stresstest

// Issue 16 item 4: --env values (API keys) reach only the worker they were
// given to: not later workers of the same tmux session, not the argv of
// any process (tmux clients, the tmux server), which every local user can
// read in ps.

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// argvScanner reads the argv of every process (/proc/*/cmdline) until
// stopped, and remembers any that holds one of the secrets: a tmux client
// lives for milliseconds, so it is looked for all along. The test's own
// "swarm spawn --env K=V" commands are left out: the user put the value
// on that command line.
type argvScanner struct {
	secrets []string
	spawn   []byte // the argv prefix of the test's own spawns
	stop    atomic.Bool
	done    sync.WaitGroup
	mu      sync.Mutex
	found   map[string]bool
}

func scanArgv(swarm string, secrets ...string) *argvScanner {
	s := &argvScanner{secrets: secrets, spawn: []byte(swarm + "\x00spawn\x00"), found: map[string]bool{}}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for !s.stop.Load() {
			s.once()
		}
	}()
	return s
}

// once reads every process's argv once.
func (s *argvScanner) once() {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil || bytes.HasPrefix(data, s.spawn) {
			continue
		}
		for _, secret := range s.secrets {
			if bytes.Contains(data, []byte(secret)) {
				s.mu.Lock()
				s.found[fmt.Sprintf("%s: %q", p, bytes.ReplaceAll(data, []byte{0}, []byte{' '}))] = true
				s.mu.Unlock()
			}
		}
	}
}

// end stops the scan, scans once more and returns what was found.
func (s *argvScanner) end() []string {
	s.stop.Store(true)
	s.done.Wait()
	s.once()
	return slices.Sorted(maps.Keys(s.found))
}

// TestEnvSecretsReachOnlyTheirWorker: a tmux worker and a ralph loop
// given --env SECRET get it; a second worker of the same session given
// none does not (tmux new-session -e had put it in the session's
// environment), and no process's argv ever holds it: not a tmux client's
// (a shim logs every tmux call), not the tmux server's, which the first
// spawn starts and whose argv was the spawning client's.
func TestEnvSecretsReachOnlyTheirWorker(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret := fmt.Sprintf("sk-worker-%x", rand.Uint64())
	loopSecret := fmt.Sprintf("sk-loop-%x", rand.Uint64())
	calls := filepath.Join(t.TempDir(), "tmux-calls")
	shim := tmuxShim(t, t.TempDir(), "tmux", `printf '%s\n' "$*" >> '`+calls+`'`, "new-session", "new-window", "respawn-pane", "set-environment")
	w.e.Extra = append(w.e.Extra, "SWARM_TMUX="+shim)
	scan := scanArgv(w.e.Swarm, secret, loopSecret)

	printEnv := []string{w.e.Agent, "--input", "none", "--script", "env SECRET;quiet", w.marker}
	w.must(append([]string{"spawn", "--name", "a", "--tmux", "--env", "SECRET=" + secret, "--"}, printEnv...)...)
	w.must(append([]string{"spawn", "--name", "b", "--tmux", "--"}, printEnv...)...)
	w.e.WriteFile("PROMPT.md", "work")
	w.must("spawn", "--name", "r", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "2",
		"--restart-delay", "100ms", "--env", "SECRET="+loopSecret, "--",
		w.e.Agent, "--input", "none", "--script", "env SECRET;exit 0", w.marker)
	w.waitLoopEnd("r", 60*time.Second)

	screen := func(name string) string { return w.e.Screen(name) }
	testenv.Eventually(t, "the workers to print their env", 20*time.Second, func() bool {
		return strings.Contains(screen("a"), "SECRET=") && strings.Contains(screen("b"), "SECRET=")
	})
	if s := screen("a"); !strings.Contains(s, "SECRET="+secret) {
		t.Errorf("worker a did not get its env:\n%s", s)
	}
	if s := screen("b"); !strings.Contains(s, "SECRET=<unset>") {
		t.Errorf("worker b, given no env, has SECRET:\n%s", s)
	}
	data, _ := os.ReadFile(filepath.Join(w.e.Home, "ralph", "r", "output", "iteration-0002.log"))
	if !strings.Contains(string(data), "SECRET="+loopSecret) {
		t.Errorf("the loop's agent did not get its env: %q", data)
	}

	for _, s := range []string{secret, loopSecret} {
		for _, args := range [][]string{{"show-environment", "-g"}, {"show-environment", "-t", "=" + w.session}} {
			if out, _ := w.e.Tmux(args...); strings.Contains(out, s) {
				t.Errorf("tmux %s holds the secret:\n%s", strings.Join(args, " "), out)
			}
		}
	}
	logged, _ := os.ReadFile(calls)
	if !strings.Contains(string(logged), "new-session") {
		t.Fatalf("the shim saw no new-session:\n%s", logged)
	}
	for _, s := range []string{secret, loopSecret} {
		if strings.Contains(string(logged), s) {
			t.Errorf("a tmux call had the secret on its argv:\n%s", logged)
		}
	}
	if found := scan.end(); len(found) > 0 {
		t.Errorf("processes with the secret on their argv:\n%s", strings.Join(found, "\n"))
	}
	if entries, _ := os.ReadDir(filepath.Join(w.e.Home, "env")); len(entries) != 0 {
		t.Errorf("env files left: %v", entries)
	}
}
