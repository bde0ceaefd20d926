// Command fakeagent plays an interactive AI coding agent CLI (such as claude)
// inside a tmux pane, for the integration tests of swarm.
//
// swarm starts agents in tmux windows, waits until they look ready, pastes a
// prompt into them as a bracketed paste, presses Enter, watches their screen
// and restarts them. A real agent is slow, costly and nondeterministic, so
// the tests run this program instead: it behaves like a real full-screen
// terminal program (raw mode, bracketed paste, its own echo and line editing)
// but what it does once it has a message is a deterministic script given on
// the command line.
//
// Usage:
//
//	fakeagent [flags] [args...]
//
// The flags choose how the message arrives (--input), where it is recorded
// (--record), which iteration this run is (--counter), and which steps run
// afterwards (--script, --iter). Steps are separated by ";" (a literal
// semicolon is "\;"); see stepWords for the list and runStep for what each
// does.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"golang.org/x/sys/unix"
)

const prompt = "> "

// Bracketed paste mode: with it enabled, tmux paste-buffer -p wraps pasted
// text in ESC[200~ ... ESC[201~, so newlines inside a paste do not submit.
const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

type config struct {
	banner         string
	input          string
	record         string
	counter        string
	script         string
	iters          iterFlags
	echoTranscript bool
	pidfile        string
	args           []string
}

// agent is the state of one run of the fake agent.
type agent struct {
	cfg   config
	n     int // iteration number
	steps []step
	out   output

	// tty input mode on a real terminal
	term        *terminal
	ed          *editor
	buf         []byte
	pending     []byte // bytes read but not yet fed: type-ahead for the next message
	cleanupOnce sync.Once

	lines *bufio.Reader // tty input mode when stdin is not a terminal
	last  string        // the last message received, for the echo step
}

func main() {
	cfg := parseFlags(os.Args[1:])
	a := &agent{cfg: cfg}

	// Validate everything before touching any file, so that a broken test
	// script leaves no trace and fails with exit 2 like a usage error.
	script, err := parseSteps(cfg.script)
	if err != nil {
		usageError(err)
	}
	for i := range cfg.iters {
		if cfg.iters[i].steps, err = parseSteps(cfg.iters[i].script); err != nil {
			usageError(err)
		}
	}
	switch cfg.input {
	case "tty", "stdin", "none":
	case "arg":
		if len(cfg.args) == 0 {
			usageError(errors.New("--input arg needs the message as the last argument"))
		}
	default:
		usageError(fmt.Errorf("unknown input mode %q (want tty, stdin, arg or none)", cfg.input))
	}

	if cfg.pidfile != "" {
		if err := os.WriteFile(cfg.pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			a.fail(err)
		}
	}
	a.n = 1
	if cfg.counter != "" {
		if a.n, err = bumpCounter(cfg.counter); err != nil {
			a.fail(err)
		}
	}
	a.steps = selectSteps(script, cfg.iters, a.n)

	if cfg.input == "tty" {
		a.startTTY()
	}
	if cfg.banner != "" {
		a.out.write(cfg.banner + "\n")
	}

	switch cfg.input {
	case "tty":
		a.out.write(prompt)
		a.receive(a.readMessage())
	case "stdin":
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			a.fail(err)
		}
		a.receive(string(data))
	case "arg":
		a.receive(cfg.args[len(cfg.args)-1])
	}

	for _, s := range a.steps {
		a.runStep(s)
	}
	a.exit(0)
}

func parseFlags(args []string) config {
	var cfg config
	flags := flag.NewFlagSet("fakeagent", flag.ExitOnError)
	flags.StringVar(&cfg.banner, "banner", "Fake Agent v1.0", "line printed at start; empty for none")
	flags.StringVar(&cfg.input, "input", "tty", "how the message arrives: tty, stdin, arg or none")
	flags.StringVar(&cfg.record, "record", "", "append each received message to this file as a JSON line")
	flags.StringVar(&cfg.counter, "counter", "", "file holding the iteration count, incremented at start")
	flags.StringVar(&cfg.script, "script", "exit 0", "steps to run after the message, separated by ;")
	flags.Var(&cfg.iters, "iter", "N=STEPS or N+=STEPS: steps for iteration N (or N and later); repeatable")
	flags.BoolVar(&cfg.echoTranscript, "echo-transcript", false, "after a tty message, print it again with each line prefixed by \"> \"")
	flags.StringVar(&cfg.pidfile, "pidfile", "", "write the agent's pid to this file")
	_ = flags.Parse(args) // ExitOnError: exits 2 itself
	cfg.args = flags.Args()
	return cfg
}

func usageError(err error) {
	fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
	os.Exit(2)
}

// startTTY prepares tty input mode. On a terminal it switches to raw mode
// and bracketed paste, like a real TUI agent; otherwise the message is read
// as a line, which keeps the mode usable with a pipe.
func (a *agent) startTTY() {
	if !isTerminal(int(os.Stdin.Fd())) {
		a.lines = bufio.NewReader(os.Stdin)
		return
	}
	t, err := makeRaw(int(os.Stdin.Fd()))
	if err != nil {
		a.fail(err)
	}
	a.term = t
	a.ed = newEditor(prompt)
	a.buf = make([]byte, 4096)
	a.out.raw.Store(true)
	a.handleSignals()
	a.out.writeRaw([]byte(bracketedPasteOn))
}

// handleSignals restores the terminal when the agent is killed (swarm
// restarts agents with signals, and tmux sends SIGHUP when a pane goes).
func (a *agent) handleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGTERM, unix.SIGHUP, unix.SIGINT)
	go func() {
		sig := (<-ch).(syscall.Signal)
		a.cleanup()
		// Then die by the same signal, as a program without handlers would,
		// so that whoever waits for the agent sees a realistic status.
		signal.Reset(sig)
		_ = unix.Kill(os.Getpid(), sig) // a signal to itself: the exit below is the fallback
		clock.Real.Sleep(context.Background(), time.Second)
		os.Exit(128 + int(sig))
	}()
}

// cleanup undoes startTTY; it runs at most once, whichever of the main
// goroutine and the signal handler gets there first.
func (a *agent) cleanup() {
	a.cleanupOnce.Do(func() {
		if a.term == nil {
			return
		}
		a.out.writeRaw([]byte(bracketedPasteOff))
		a.term.restore()
		a.out.raw.Store(false)
	})
}

func (a *agent) exit(code int) {
	a.cleanup()
	os.Exit(code)
}

func (a *agent) fail(err error) {
	a.cleanup()
	fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
	os.Exit(1)
}

// readMessage returns the next message in tty input mode, or exits the agent
// on Ctrl-C (130), on Ctrl-D with an empty input (0) and at end of input (0).
func (a *agent) readMessage() string {
	if a.term == nil {
		return a.readLine()
	}
	for {
		if len(a.pending) == 0 {
			n, err := os.Stdin.Read(a.buf)
			if n == 0 {
				if err == nil {
					continue
				}
				if errors.Is(err, io.EOF) {
					a.exit(0)
				}
				a.fail(err)
			}
			a.pending = a.buf[:n]
		}
		echo, act, used := a.ed.feed(a.pending)
		a.pending = a.pending[used:]
		a.out.writeRaw(echo)
		switch act {
		case actSubmit:
			return a.ed.message()
		case actInterrupt:
			a.exit(130)
		case actEOF:
			a.exit(0)
		}
	}
}

// readLine is tty input mode without a terminal: one line is one message.
func (a *agent) readLine() string {
	line, err := a.lines.ReadString('\n')
	if line == "" && err != nil {
		if errors.Is(err, io.EOF) {
			a.exit(0)
		}
		a.fail(err)
	}
	// Nothing echoed the line, so end it here to keep later output off the
	// prompt line, as it would be on a terminal.
	a.out.write("\n")
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

// receive handles a message that has arrived: it is recorded, shown in the
// transcript if asked, and kept for the echo step.
func (a *agent) receive(msg string) {
	a.last = msg
	if a.cfg.record != "" {
		if err := appendRecord(a.cfg.record, a.n, msg); err != nil {
			a.fail(err)
		}
	}
	if a.cfg.echoTranscript && a.cfg.input == "tty" {
		var b strings.Builder
		for _, line := range strings.Split(msg, "\n") {
			b.WriteString(prompt + line + "\n")
		}
		a.out.write(b.String())
	}
}

type recordLine struct {
	Iteration int    `json:"iteration"`
	Message   string `json:"message"`
	Time      string `json:"time"`
}

// appendRecord appends one JSON line with a single write on an O_APPEND
// file, so that lines from agents sharing a record file never interleave.
func appendRecord(path string, n int, msg string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <, > and & readable in the file
	if err := enc.Encode(recordLine{Iteration: n, Message: msg, Time: time.Now().Format(time.RFC3339Nano)}); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	return errors.Join(err, f.Close())
}

// bumpCounter increments the integer in path (missing or empty is 0) and
// returns the new value. It writes a temporary file and renames it, so a
// reader never sees a half-written number.
func bumpCounter(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	n := 0
	if s := strings.TrimSpace(string(data)); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			return 0, fmt.Errorf("counter file %s: %w", path, err)
		}
	}
	n++
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, err
	}
	_, err = tmp.WriteString(strconv.Itoa(n))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // best effort: the write's error is the one to return
		return 0, err
	}
	return n, nil
}

func (a *agent) expand(s string) string { return expand(s, a.n, os.Getenv) }

// runStep runs one validated step.
func (a *agent) runStep(s step) {
	run, ok := stepRunners[s.word]
	if !ok {
		// parseSteps rejects unknown words, so this is a bug in fakeagent.
		panic("fakeagent: step not implemented: " + s.word)
	}
	run(a, s.arg)
}

// stepRunners maps each step word to what it does.
var stepRunners = map[string]func(a *agent, arg string){
	"print": func(a *agent, arg string) { a.out.write(a.expand(arg) + "\n") },
	"write": func(a *agent, arg string) { a.out.write(a.expand(arg)) },
	"sleep": func(a *agent, arg string) {
		d, _ := time.ParseDuration(arg) // validated by parseSteps
		clock.Real.Sleep(context.Background(), d)
	},
	"quiet": func(a *agent, arg string) { blockForever() },
	"spin":  func(a *agent, arg string) { a.spin(arg) },
	"exit": func(a *agent, arg string) {
		code, _ := exitCode(arg) // validated by parseSteps
		a.exit(code)
	},
	"touch": func(a *agent, arg string) {
		if err := os.WriteFile(a.expand(arg), []byte("done\n"), 0o644); err != nil {
			a.fail(err)
		}
	},
	"rm": func(a *agent, arg string) {
		if err := os.Remove(a.expand(arg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.fail(err)
		}
	},
	"env": func(a *agent, arg string) {
		name := a.expand(arg)
		if v, ok := os.LookupEnv(name); ok {
			a.out.write(name + "=" + v + "\n")
		} else {
			a.out.write(name + "=<unset>\n")
		}
	},
	"child":       (*agent).startChild,
	"ignore-term": func(a *agent, arg string) { signal.Ignore(unix.SIGTERM) },
	"wait": func(a *agent, arg string) {
		// Only tty input mode has a further message to wait for; the
		// other modes have consumed all their input already.
		if a.cfg.input == "tty" {
			a.out.write(prompt)
			a.receive(a.readMessage())
		}
	},
	"echo": func(a *agent, arg string) { a.out.write(a.last + "\n") },
	"cwd": func(a *agent, arg string) {
		wd, err := os.Getwd()
		if err != nil {
			a.fail(err)
		}
		a.out.write("CWD=" + wd + "\n")
	},
}

// startChild starts a child in the agent's own process group (no Setpgid)
// and never waits for it: it stands for the helper processes a real agent
// leaves behind, which swarm must kill along with it. Its pid goes to the
// file arg.
func (a *agent) startChild(arg string) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		a.fail(err)
	}
	if err := os.WriteFile(a.expand(arg), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		a.fail(err)
	}
}

// spin prints a progress line every 50ms for the given duration (or
// forever), like an agent that is busy and keeps its screen changing.
func (a *agent) spin(arg string) {
	var done <-chan time.Time
	if arg != "forever" {
		d, _ := time.ParseDuration(arg) // validated by parseSteps
		done = time.After(d)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-done:
			return
		case <-tick.C:
			a.out.write(fmt.Sprintf("working %d\n", i))
		}
	}
}

// blockForever waits until the agent is killed. A sleeping loop rather than
// select{} because the runtime could report a deadlock for the latter.
func blockForever() {
	for {
		clock.Real.Sleep(context.Background(), time.Hour)
	}
}
