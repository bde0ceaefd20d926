package stresstest

// Issue 16 items 5 and 11: text that came from an agent, a pane, a state
// file or a user's flag never reaches the terminal with an escape
// sequence or a control character in it, and tags are validated at spawn.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/swarmtools/swarm/internal/testenv"
)

// osc52 is the attack of the issue: an ESC before a cursor sequence,
// then an OSC 52 clipboard write. A regexp pass removed "ESC[A" and left
// "ESC]52;c;...BEL" whole: the terminal put "rm -rf ~" on the clipboard.
const osc52 = "\x1b\x1b[A]52;c;cm0gLXJmIH4=\x07"

// clearScreen blanks a terminal (and the live board).
const clearScreen = "\x1b[2J\x1b[H"

// controlIn returns the first character of out that a terminal would act
// on (anything but printable text, spaces and line ends), or -1.
func controlIn(out string) rune {
	for _, r := range out {
		if r != '\n' && r != ' ' && r != '\u200d' && !unicode.IsPrint(r) {
			return r
		}
	}
	return -1
}

// expectPrintable fails when a command's output holds a control character.
func expectPrintable(t *testing.T, r result) {
	t.Helper()
	for _, out := range []string{r.stdout, r.stderr} {
		if c := controlIn(out); c >= 0 {
			t.Errorf("swarm %s printed %U:\n%q", strings.Join(r.args, " "), c, out)
		}
	}
}

// TestBlockedReasonCannotWriteToTheTerminal: a loop whose agent ends
// BLOCKED with a reason carrying an OSC 52 clipboard write behind a stray
// ESC: ralph wait, ralph status, ralph ls and top --once print the reason
// as plain text.
func TestBlockedReasonCannotWriteToTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.WriteFile("PROMPT.md", "work")
	agent := `printf '> '; read line; printf '<promise>BLOCKED:need the key` + strings.ReplaceAll(osc52, "\x1b", `\033`) + ` now</promise>\n'; sleep 600`
	agent = strings.ReplaceAll(agent, "\x07", `\007`)
	w.must("spawn", "--name", "rl", "--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "2",
		"--inactivity-timeout", "60", "--", "sh", "-c", agent, w.marker)
	r := w.run("ralph", "wait", "rl", "--timeout", "60")
	if r.code != 2 || !strings.HasPrefix(r.stdout, "rl: blocked after 1 iterations: need the key") {
		t.Fatalf("%s", r)
	}
	expectPrintable(t, r)
	for _, args := range [][]string{{"ralph", "status", "rl"}, {"ralph", "ls"}, {"top", "--once"}, {"ls"}} {
		r := w.run(args...)
		if r.code != 0 && !(args[0] == "ralph" && args[1] == "status") {
			t.Errorf("%s", r)
		}
		expectPrintable(t, r)
	}
	if r := w.run("ralph", "status", "rl"); !strings.Contains(r.stdout, "Blocked: need the key") {
		t.Errorf("the reason is not shown: %s", r)
	}
}

// TestSpawnRefusesABadTag: a tag that a terminal would act on, or that
// would break ls's one row per worker, is refused before anything is made.
func TestSpawnRefusesABadTag(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.e.WriteFile("PROMPT.md", "work")
	const fix = "hint: a tag is printable text of at most 64 characters (no control characters, tabs or newlines)\n"
	bad := []string{"", "a" + clearScreen, "x\nw2  running", "a\tb", "bidi\u202e", strings.Repeat("t", 65), osc52}
	for _, tag := range bad {
		for _, mode := range [][]string{{"--tmux"}, {}, {"--ralph", "--prompt-file", "PROMPT.md", "--max-iterations", "1"}} {
			args := append(append([]string{"spawn", "--name", "w"}, mode...), "--tag", "ok", "--tag", tag, "--", "sleep", "300")
			r := w.run(args...)
			want := "swarm: error: invalid tag " + strconv.Quote(tag) + "\n" + fix
			if r.code != 1 || r.stdout != "" || r.stderr != want {
				t.Errorf("%s\nwant exit 1, stderr %q", r, want)
			}
		}
	}
	if recs, r, err := w.ls(); err != nil || len(recs) != 0 {
		t.Errorf("records after refused spawns: %v %s", err, r)
	}
	if entries, _ := os.ReadDir(filepath.Join(w.e.Home, "ralph")); len(entries) != 0 {
		t.Errorf("loop state after refused spawns: %v", entries)
	}
	// A fine tag with spaces and Unicode is taken.
	w.must(append([]string{"spawn", "--name", "ok", "--tag", "team α / sprint 3", "--"}, w.agent()...)...)
	if r := w.must("ls"); !strings.Contains(r.stdout, "team α / sprint 3") {
		t.Errorf("%s", r)
	}
}

// TestTagsFromTheStateFileArePrintedPlain: tags that did not go through
// spawn's check (a hand-edited state.json, swarm.py's records) are shown
// as printable text: no cleared screen, no forged row.
func TestTagsFromTheStateFileArePrintedPlain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must(append([]string{"spawn", "--name", "w", "--tag", "t"}, w.agent()...)...)
	path := filepath.Join(w.e.Home, "state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	rec := reg["workers"].([]any)[0].(map[string]any)
	rec["tags"] = []string{clearScreen + "x", "y\nforged  running  1  just now  -  -", osc52}
	data, _ = json.Marshal(reg)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ls"}, {"top", "--once"}, {"status", "w"}} {
		r := w.run(args...)
		expectPrintable(t, r)
		if n := strings.Count(r.stdout, "\n"); args[0] != "status" && n != 2 {
			t.Errorf("swarm %s: %d lines, want a header and one row:\n%s", args[0], n, r.stdout)
		}
	}
}

// TestHeartbeatMessageIsShownPlain: heartbeat status shows the message
// the user gave as printable text.
func TestHeartbeatMessageIsShownPlain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.must(append([]string{"spawn", "--name", "w", "--tmux", "--"}, w.agent()...)...)
	w.must("heartbeat", "start", "w", "--interval", "1h", "--message", "go on"+clearScreen+osc52)
	testenv.Eventually(t, "the heartbeat to run", 20*time.Second, func() bool {
		return strings.Contains(w.run("heartbeat", "status", "w").stdout, "Message: go on")
	})
	for _, args := range [][]string{{"heartbeat", "status", "w"}, {"heartbeat", "ls"}} {
		expectPrintable(t, w.run(args...))
	}
	w.must("heartbeat", "stop", "w")
}
