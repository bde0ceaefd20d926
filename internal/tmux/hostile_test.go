package tmux

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Tests against real tmux that strings of users and agents reach the
// programs in panes byte for byte and never run anything. Every hostile
// string that would run a command runs "touch side"; side must not exist
// afterwards.

// waitLong bounds every wait for tmux and the programs in its panes.
const waitLong = 15 * time.Second

// hostileStrings are the strings the tests pass everywhere, with side the
// file a command in them would create. Some contain '/' (the side path):
// as a directory they are nested directories.
func hostileStrings(side string) []string {
	touch := "touch " + side
	return []string{
		"C#Sharp;x", "d#(" + touch + ")", "x;", "{}", "$HOME", "#{pane_id}",
		`a\;`, ";", `'quote"`, "-n", "a b", "ünïcödé 日本語",
		"%Y-%m %%", "#[fg=red]##[x", "trailing#", `back\slash\`,
		"$(" + touch + ")", "`" + touch + "`", "~root", "#S#W#{session_name}",
		"run-shell", "C##Sharp", "{ }", "#,#}",
	}
}

// assertNothingRan fails if side exists. It is a backstop: the tests'
// main check is that programs see exactly the bytes given, which a format
// or shell expansion would have changed. tmux runs a #() job in the
// background and kills it when the client that caused it exits, so first
// a control: an unescaped "#(touch canary)" on the same server, with the
// client kept until the job has run (run-shell waits for it), shows that
// jobs do run there.
func assertNothingRan(t *testing.T, c *Client, side string) {
	t.Helper()
	canary := filepath.Join(t.TempDir(), "canary")
	q := ShellQuote(canary)
	waitCanary := "i=0; while [ ! -e " + q + " ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done"
	_, err := c.RunChain(nil,
		// Deliberately a format: display-message expands its argument.
		[]string{"display-message", "-p", "--", "#(touch " + q + ")"},
		[]string{"run-shell", escapeFormat(waitCanary)})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the control job", waitLong, func() bool { _, err := os.Stat(canary); return err == nil })
	if _, err := os.Stat(side); err == nil {
		t.Fatalf("a hostile string ran a command: %s exists", side)
	}
}

// wantReport waits for the report in path and compares it with want.
func wantReport(t *testing.T, what, path string, want report) {
	t.Helper()
	var got report
	testenv.Eventually(t, what+" report", waitLong, func() bool {
		var ok bool
		got, ok = readReport(path)
		return ok
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// hostileArgs are the arguments after the program, around s; the brief's
// attack "prog 'x;' run-shell 'touch pwned'" among them.
func hostileArgs(s, side string) []string {
	return []string{s, s + ";", "x;", `\;`, "run-shell", "touch " + side, s}
}

func TestHostileDirsArgsAndEnvArriveExactly(t *testing.T) {
	c := server(t)
	side := filepath.Join(t.TempDir(), "pwned")
	base := t.TempDir()
	strs := append(hostileStrings(side), "two\nlines")
	dirs := make([]string, len(strs))
	ids := make([]string, len(strs))
	// All windows first, then all waits: the programs start in parallel.
	for i, s := range strs {
		dirs[i] = filepath.Join(base, fmt.Sprint(i), s)
		if err := os.MkdirAll(dirs[i], 0o700); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(base, fmt.Sprintf("new-%d", i))
		spec := WindowSpec{Session: "s", Name: fmt.Sprintf("w%d", i), Dir: dirs[i],
			Env: []string{helperEnv + "=" + s}, Command: helperCommand(t, "report", out, hostileArgs(s, side)...)}
		var err error
		if ids[i], err = c.NewWindow(spec); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	for i, s := range strs {
		want := report{Dir: dirs[i], Args: hostileArgs(s, side), Env: s, HasEnv: true}
		wantReport(t, fmt.Sprintf("new-window %q", s), filepath.Join(base, fmt.Sprintf("new-%d", i)), want)
	}
	// respawn-pane takes the same -c, -e and command.
	for i, s := range strs {
		out := filepath.Join(base, fmt.Sprintf("respawn-%d", i))
		err := c.Respawn(ids[i], RespawnSpec{Dir: dirs[i], Env: []string{helperEnv + "=" + s + ";"},
			Command: helperCommand(t, "report", out, hostileArgs(s, side)...), RemainOnExit: true})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	for i, s := range strs {
		want := report{Dir: dirs[i], Args: hostileArgs(s, side), Env: s + ";", HasEnv: true}
		wantReport(t, fmt.Sprintf("respawn %q", s), filepath.Join(base, fmt.Sprintf("respawn-%d", i)), want)
	}
	assertNothingRan(t, c, side)
}

// readyPanes starts the stdin helper in n new windows and waits until
// each records its terminal's bytes in the file returned for it.
func readyPanes(t *testing.T, c *Client, n int) (ids, outs []string) {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		out := filepath.Join(dir, fmt.Sprintf("stdin-%d", i))
		id, err := c.NewWindow(WindowSpec{Session: "s", Name: fmt.Sprintf("w%d", i), Command: helperCommand(t, "stdin", out)})
		if err != nil {
			t.Fatal(err)
		}
		ids, outs = append(ids, id), append(outs, out)
	}
	for _, id := range ids {
		testenv.Eventually(t, "helper ready", waitLong, func() bool {
			s, _ := c.Capture(id, CaptureOptions{})
			return strings.Contains(s, readyMark)
		})
	}
	return ids, outs
}

// wantBytes waits until the file holds exactly want (it only grows).
func wantBytes(t *testing.T, what, path, want string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(waitLong)
	for {
		b, _ := os.ReadFile(path)
		got = string(b)
		if got == want || len(got) > len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != want {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// pasted is what a program in bracketed-paste mode reads for a paste of
// clean text: the brackets around it, each "\n" turned into "\r" by tmux.
func pasted(text string) string {
	return "\x1b[200~" + strings.ReplaceAll(text, "\n", "\r") + "\x1b[201~"
}

func TestHostileTextIsTypedAndPastedExactly(t *testing.T) {
	c := server(t)
	side := filepath.Join(t.TempDir(), "pwned")
	strs := append(hostileStrings(side), "b;", "Enter", "C-c", "two\nlines", "tab\there")
	ids, outs := readyPanes(t, c, len(strs))
	wants := make([]string, len(strs))
	for i, s := range strs {
		// Typed: literally, or as one paste when it holds a newline or tab.
		wants[i] = s
		if strings.ContainsAny(s, "\n\t") {
			wants[i] = pasted(s)
		}
		wants[i] += "\r" // Enter
		if err := c.TypeText(ids[i], s, true); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	for i, s := range strs {
		wantBytes(t, fmt.Sprintf("typed %q", s), outs[i], wants[i])
	}
	for i, s := range strs {
		wants[i] += pasted(s)
		if err := c.Paste(ids[i], s); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	for i, s := range strs {
		wantBytes(t, fmt.Sprintf("pasted %q", s), outs[i], wants[i])
	}
	assertNothingRan(t, c, side)
}

func TestPastedTextCannotEndThePasteOrActAsKeys(t *testing.T) {
	c := server(t)
	ids, outs := readyPanes(t, c, 1)
	id, out := ids[0], outs[0]
	prompt := "fix the bug\n\x1b[201~rm -rf ~\r\n\x1b[200~again\x03\x04\x1b]0;title\x07 end\x7f\x00\x1b[A"
	if err := c.Paste(id, prompt); err != nil {
		t.Fatal(err)
	}
	want := pasted("fix the bug\nrm -rf ~\nagain end")
	wantBytes(t, "one paste", out, want)
	// Typed literally, a control character is not a key.
	if err := c.TypeText(id, "ab\x03c\x1b[Ad\x1b", false); err != nil {
		t.Fatal(err)
	}
	want += "abcd"
	wantBytes(t, "typed without controls", out, want)
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "\x1b[201~"); n != 1 {
		t.Errorf("the paste ended %d times: %q", n, b)
	}
}

func TestPipePaneToHostilePath(t *testing.T) {
	c := server(t)
	side := filepath.Join(t.TempDir(), "pwned")
	root := t.TempDir()
	// A SWARM_HOME-like directory with everything a shell or tmux format
	// could read.
	home := filepath.Join(root, "h#o;m'e $HOME %Y #(touch "+side+") $(touch "+side+") `x` ##[y \\;")
	logDir := filepath.Join(home, "loops", "w")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(logDir, "iteration#1;'%d.log")
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Command: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Respawn(id, RespawnSpec{Command: []string{"sh", "-c", "echo piped-output; exec sleep 600"}, PipeTo: pipe})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "output in the pipe file", waitLong, func() bool {
		b, _ := os.ReadFile(pipe)
		return strings.Contains(string(b), "piped-output")
	})
	assertNothingRan(t, c, side)
	// Nothing else was created anywhere under root.
	var files []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if !reflect.DeepEqual(files, []string{pipe}) {
		t.Errorf("files under the state root: %q", files)
	}
}

func TestSingleElementCommandIsNotShellParsed(t *testing.T) {
	c := server(t)
	side := filepath.Join(t.TempDir(), "pwned")
	// The program's path has a shell and a format command in it (and so
	// nested directories: the side path has slashes).
	prog := filepath.Join(t.TempDir(), "d$(touch "+side+");'x", "a b", "agent#(touch "+side+")`x`")
	if err := os.MkdirAll(filepath.Dir(prog), 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	script := "#!/bin/sh\necho \"ran $0 $#\" > \"$OUT\"\nexec sleep 600\n"
	testenv.WriteExecutable(t, prog, script)
	id, err := c.NewWindow(WindowSpec{Session: "s", Name: "w", Env: []string{"OUT=" + out}, Command: []string{prog}})
	if err != nil {
		t.Fatal(err)
	}
	wantBytes(t, "new-window ran the program", out, "ran "+prog+" 0\n")
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := c.Respawn(id, RespawnSpec{Env: []string{"OUT=" + out}, Command: []string{prog}}); err != nil {
		t.Fatal(err)
	}
	wantBytes(t, "respawn ran the program", out, "ran "+prog+" 0\n")
	assertNothingRan(t, c, side)
}

func TestSessionNamesAreExact(t *testing.T) {
	c := server(t)
	names := []string{"s#S", "s;", "##[x", "-n", "{}", "ünï 日本", "%Y", "#{pane_id}", "=x", "a$", "s"}
	for _, name := range names {
		for _, w := range []string{"one", "two"} { // new-session, then new-window
			if _, err := c.NewWindow(WindowSpec{Session: name, Name: w + "#W", Command: []string{"sleep", "600"}}); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
		}
	}
	panes, err := c.ListPanes()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range panes {
		count[p.Session+"\x00"+p.WindowName]++
	}
	for _, name := range names {
		for _, w := range []string{"one#W", "two#W"} {
			if count[name+"\x00"+w] != 1 {
				t.Errorf("session %q window %q: %d windows, all: %v", name, w, count[name+"\x00"+w], count)
			}
		}
	}
	if _, err := c.NewWindow(WindowSpec{Session: "a:b", Name: "w", Command: []string{"true"}}); err == nil {
		t.Error("session a:b accepted")
	}
}

// escapeAlphabet is what random format strings are made of: every byte
// tmux's format and time expansion treat specially, and some that it
// does not.
const escapeAlphabet = "##[]{}(),%;\\$ aZ'\"é"

func randomString(r *rand.Rand) string {
	alphabet := []rune(escapeAlphabet)
	n := r.IntN(12) + 1
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestEscapeFormatRoundTripsThroughTmux checks the escaping and the model
// of tmux's expansion the fuzz targets rely on against tmux itself:
// display-message -p expands with time (as pipe-pane does), new-window -n
// without (as -c and -s do).
func TestEscapeFormatRoundTripsThroughTmux(t *testing.T) {
	c := server(t)
	if _, err := c.NewWindow(WindowSpec{Session: "s", Name: "base", Command: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	strs := hostileStrings(filepath.Join(t.TempDir(), "pwned"))
	var windows [][]string
	for _, s := range strs {
		windows = append(windows, []string{"new-window", "-d", "-n", escapeFormat(s), "--", "sleep", "600"})
	}
	for range 300 {
		strs = append(strs, randomString(r))
	}
	var display, model [][]string
	var modelWant []string
	for _, s := range strs {
		display = append(display, []string{"display-message", "-p", "--", escapeTimeFormat(s)})
		// The model must also agree with tmux on the strings it says
		// expand to something without running anything, sent unescaped.
		if want, ok := expandTimeFormatModel(s); ok {
			model = append(model, []string{"display-message", "-p", "--", s})
			modelWant = append(modelWant, want)
		}
	}
	out, err := c.RunChain(nil, display...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !reflect.DeepEqual(got, strs) {
		t.Errorf("display-message:\n got %q\nwant %q", got, strs)
	}
	out, err = c.RunChain(nil, model...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !reflect.DeepEqual(got, modelWant) {
		t.Errorf("model:\n got %q\nwant %q", got, modelWant)
	}
	if _, err := c.RunChain(nil, windows...); err != nil {
		t.Fatal(err)
	}
	out, err = c.Run(nil, "list-windows", "-t", "=s:", "-F", "#{window_name}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !reflect.DeepEqual(got[1:], strs[:len(windows)]) {
		t.Errorf("window names:\n got %q\nwant %q", got[1:], strs[:len(windows)])
	}
}
