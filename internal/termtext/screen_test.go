package termtext

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A real Claude Code iteration (2.1.197 against the mock API, a 200x50
// window, as pipe-pane kept it: the prompt, a Bash tool call, the answer)
// renders as its screens read: each message once, in order, and none of
// the fragments of the spinner's and the input box's redraws, which the
// line model (Plain) prints by the dozen.
func TestRenderClaudeCodeIterationReadsAsItsScreens(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/claude-2.1.197-iteration.raw")
	if err != nil {
		t.Fatal(err)
	}
	text := string(Render(raw, 200, 50))
	want := []string{
		"╭─── Claude Code v2.1.197 ───",
		"❯ Do the next step of the task in this folder.\n  When the whole task is done, print <promise>COMPLETE</promise>.\n",
		"● Bash(ls -la; seq 1 80)\n  ⎿ \u00a0total 8\n",
		"     … +80 lines (ctrl+o to expand)\n",
		"● Let me look around first. I listed the files in this folder and will now read the task.\n",
		"✻ Cooked for 7s\n",
		"Resume this session with:\nclaude --resume 23a80821-5763-4ba8-a2a1-1e6dce2bf805\n",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("rendered text lacks %q after byte %d:\n%s", w, at, text)
		}
		at += i + len(w)
		if n := strings.Count(text, w); n != 1 {
			t.Errorf("%q shows %d times:\n%s", w, n, text)
		}
	}
	// The spinner's words ("Transfiguring…") were redrawn in place a
	// letter at a time: none of that is left.
	for _, frag := range []string{"Transfiguring", "\n✶\n", "\n*\n", "ig ri"} {
		if strings.Contains(text, frag) {
			t.Errorf("rendered text holds the redraw fragment %q:\n%s", frag, text)
		}
	}
	if plain := string(Plain(raw)); !strings.Contains(plain, "ig ri") {
		t.Errorf("the fixture no longer shows what the line model makes of it")
	}
	if lines := strings.Count(text, "\n"); lines > 60 {
		t.Errorf("%d lines for one short iteration:\n%s", lines, text)
	}
}

// A full-screen program's screen is kept when it leaves the alternate
// screen; erasing the history (ED 3) erases it here as in a terminal; a
// query the program sends (cursor position) does not stall the render;
// a bare line feed starts a line.
func TestRenderScreensHistoryAndQueries(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, raw, want string }{
		{"scrolled lines, then the screen", "one\r\ntwo\r\nthree\r\nfour\r\n", "one\ntwo\nthree\nfour\n"},
		{"bare line feeds", "one\ntwo\n", "one\ntwo\n"},
		{"redrawn in place", "step\r\n\x1b[6n10%\x1b[1A\x1b[2K\x1b[1B\x1b[G\x1b[2K100%\r\n", "\n100%\n"},
		{"alternate screen kept on leaving", "before\r\n\x1b[?1049h\x1b[Hmenu\x1b[2;1Hitem one\x1b[?1049lafter\r\n", "before\nmenu\nitem one\nafter\n"},
		{"history erased", "a\r\nb\r\nc\r\nd\r\n\x1b[2J\x1b[3J\x1b[Hredrawn\r\n", "redrawn\n"},
		{"title with UTF-8 is not text", "\x1b]0;✳ Claude Code\x07╭───\x1b[6GClaude\r\n", "╭─── Claude\n"},
	}
	for _, c := range cases {
		if got := string(Render([]byte(c.raw), 20, 3)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// Render takes any output without panicking or stalling, and its text
// holds no escape sequence or control character but the line ends.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"plain\r\n", "\x1b[?1049h\x1b[5;5Hx\x1b[?1049l", "\x1b]0;✳ t\x07a\x1b[3J\x1b[2J",
		"\x1b[6n\x1b[c\x1b]11;?\x07\x1b[>0q", "\x1b[999;999H\x1b[99999C\x1b[L\x1b[M\x1b[r\x1b[5;2r\n\n\n", "\x1bP1$r\x1b\\\x9b2J", "a\tb\bc\x7f\u00e9\u0301"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		text := Render(raw, 12, 4)
		for _, c := range string(text) {
			if c != '\n' && (c < ' ' || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
				t.Fatalf("control %q in %q", c, text)
			}
		}
	})
}

// Render is bounded in time however long the output: the emulator's work
// grows with the screen for every line that scrolls (a 200x50 screen:
// about 0.1 ms each), so 256 KiB of line feeds took half a minute and a
// 50 MiB log over an hour. Only the last renderOps operations are played
// through it (2 MiB of line feeds: a few seconds, under -race too).
func TestRenderIsBounded(t *testing.T) {
	t.Parallel()
	raw := []byte(strings.Repeat("\n", 2<<20) + "end\r\n")
	done := make(chan []byte, 1)
	go func() { done <- Render(raw, 200, 50) }()
	select {
	case out := <-done:
		if !strings.HasSuffix(string(out), "\nend\n") || strings.Count(string(out), "\n") != strings.Count(string(raw), "\n") {
			t.Errorf("render of 2 MiB of line feeds: %d lines, ends %q", strings.Count(string(out), "\n"), out[max(0, len(out)-20):])
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Render of 2 MiB of line feeds still runs after 2 minutes")
	}
}

// What comes before the part the emulator plays is rebuilt a line at a
// time and comes first: no line is lost, whatever cut it.
func TestRenderKeepsTheLinesBeforeTheCut(t *testing.T) {
	t.Parallel()
	cases := map[string][]byte{
		"line feeds":     []byte(strings.Repeat("\n", 2000) + "end\r\n"),
		"lines":          []byte(strings.Repeat("some output of an agent\r\n", 2000) + "end\r\n"),
		"erased screens": []byte("first\r\n" + strings.Repeat("\x1b[2J\x1b[3J", 2000) + "end\r\n"),
		"one long line":  []byte("first\r\n" + strings.Repeat("x", 200*2000) + "\r\nend\r\n"),
	}
	for name, raw := range cases {
		if renderCut(raw, 200, 300) == 0 {
			t.Fatalf("%s: not cut", name)
		}
		text := string(render(raw, 200, 50, 300))
		if !strings.HasSuffix(text, "end\n") {
			t.Errorf("%s: the render does not end with the last line: %q", name, text[max(0, len(text)-200):])
		}
		if want := strings.Count(string(raw), "\n"); (name == "line feeds" || name == "lines") && strings.Count(text, "\n") != want {
			t.Errorf("%s: %d lines rendered, want %d", name, strings.Count(text, "\n"), want)
		}
		if name != "line feeds" && !strings.HasPrefix(text, strings.SplitN(string(raw), "\r", 2)[0]+"\n") {
			t.Errorf("%s: the first line is lost: %q", name, text[:min(len(text), 200)])
		}
	}
}

// renderCut leaves at most ops operations after the cut, at a line's
// start, and cuts nothing from output that holds fewer.
func TestRenderCut(t *testing.T) {
	t.Parallel()
	raw := []byte("a\nb\nc\nd\n")
	if got := renderCut(raw, 80, 4); got != 0 {
		t.Errorf("4 line feeds, 4 allowed: cut at %d", got)
	}
	if got := renderCut(raw, 80, 2); got != 4 {
		t.Errorf("4 line feeds, 2 allowed: cut at %d, want 4 (c's line)", got)
	}
	if got := renderCut([]byte(strings.Repeat("\x1b[2J", 10)), 80, 4); got != 24 {
		t.Errorf("10 erased screens with no line feed, 4 allowed: cut at %d, want 24", got)
	}
	// The emulator reads a byte that is no part of a UTF-8 character as
	// a C1 control: CSI (0x9b), IND (0x84) cost as much as their ESC
	// forms. Within characters those bytes are text.
	if got := renderCut([]byte(strings.Repeat("\x9b2J", 10)), 80, 4); got != 18 {
		t.Errorf("10 erased screens by C1 CSI, 4 allowed: cut at %d, want 18", got)
	}
	if got := renderCut([]byte(strings.Repeat("\x84", 10)), 80, 4); got != 6 {
		t.Errorf("10 C1 index controls, 4 allowed: cut at %d, want 6", got)
	}
	if got := renderCut([]byte(strings.Repeat("╭…\u009b", 10)+"\n"), 80, 0); got != len("╭…\u009b")*10+1 {
		t.Errorf("characters holding those bytes counted as controls: cut at %d", got)
	}
}
