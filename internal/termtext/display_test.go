package termtext

import (
	"strings"
	"testing"
	"unicode"
)

func TestStrip(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "hello\nworld", "hello\nworld"},
		{"colours", "\x1b[1;31merror\x1b[0m: boom", "error: boom"},
		{"controls kept", "a\rb\tc\x07d\n", "a\rb\tc\x07d\n"},
		// A regexp pass removed the ESC before the CSI and the CSI, and
		// left "ESC]52;c;...BEL" intact: a clipboard write.
		{"ESC before a sequence", "x\x1b\x1b[A\x1b]52;c;aGk=\x07y", "xy"},
		{"OSC with any text", "\x1b]8;;http://e.x/a b\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"unterminated OSC ends with its line", "\x1b]0;title\n<promise>COMPLETE</promise>\n", "\n<promise>COMPLETE</promise>\n"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"a line without escapes is kept byte for byte", "a\x9b31mb\xff", "a\x9b31mb\xff"},
		{"invalid utf-8 cannot take an ESC into a character", "a\xe2\x1b[0mb", "a\ufffdb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Strip(c.in); got != c.want {
				t.Errorf("Strip(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "need the API key", "need the API key"},
		{"clipboard write through a stray ESC", "key?\x1b\x1b[A\x1b]52;c;cm0gLXJmIH4=\x07", "key?"},
		{"clear screen", "\x1b[2J\x1b[Hblank", "blank"},
		{"newline cannot forge a row", "a\nw2  running", "a w2  running"},
		{"tab and CR are spaces", "a\tb\rc", "a b c"},
		{"C0, DEL and C1 dropped, NEL is a line break", "a\x00b\x07c\x7fd\u0085e\u009bf", "abcd ef"},
		{"bidi override dropped", "abc\u202edef", "abcdef"},
		{"other spaces", "a\u00a0b\u2028c", "a b c"},
		{"unicode kept", "日本 é 👩\u200d💻 ✓", "日本 é 👩\u200d💻 ✓"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Line(c.in); got != c.want {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"x\x1b\x1b[A\x1b]52;c;aGk=\x07", "a\nb", "\x9b2J", "\x1bP\x1b\\", "日本\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		for _, r := range got {
			if r != ' ' && r != zwj && !unicode.IsPrint(r) {
				t.Fatalf("Line(%q) = %q holds %U", s, got, r)
			}
		}
		if again := Line(got); again != got {
			t.Fatalf("Line not idempotent: %q -> %q -> %q", s, got, again)
		}
		if strings.ContainsRune(Strip(s), 0x1b) {
			t.Fatalf("Strip(%q) = %q keeps an ESC", s, Strip(s))
		}
	})
}

// Screens are matched every poll and an agent's output as it comes:
// Strip must cost next to nothing on a capture (no escapes) and stay
// fast on colourful output.
func BenchmarkStrip(b *testing.B) {
	screen := strings.Repeat("│ an agent's screen as capture-pane prints it, no escapes │\n", 40)
	output := strings.Repeat("\x1b[38;5;208m● \x1b[0mReading \x1b[1mfile.go\x1b[22m \x1b]0;title\x07\x1b[2K\r\x1b[1A 50%\n", 800)
	for _, c := range []struct{ name, in string }{{"screen", screen}, {"output", output}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			for b.Loop() {
				Strip(c.in)
			}
		})
	}
}
