package tmux

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizePaste(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünï 日本 {} $HOME #{x} ;", "plain text, ünï 日本 {} $HOME #{x} ;"},
		{"l1\nl2\tx", "l1\nl2\tx"},
		{"a\x1b[201~b\x1b[200~c", "abc"},
		{"\x1b[31mred\x1b[0m \x1b[1;2;3H", "red "},
		{"t\x1b]0;title\x07x", "tx"},
		{"t\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "tlink"},
		{"osc\x1b]2;never ends\nnext line", "osc\nnext line"},
		{"dcs\x1bPq#0;2\x1b\\ok", "dcsok"},
		{"\x1b7\x1b(B\x1bOAup", "up"},
		{"lone\x1b", "lone"},
		{"esc\x1b\x1b[Ax", "escx"},
		{"csi\x1b[12\nx", "csi\nx"},
		{"a\r\nb\rc\r\r\nd", "a\nb\nc\n\nd"},
		{"c\x03d\x04e\x00f\x08g\x7fh\x07i", "cdefghi"},
		{"c1\u009b201~\u0085x", "c1201~x"},
		{"bad\xff\xfe utf8 \x9b", "bad\uFFFD utf8 \uFFFD"},
		{"", ""},
	} {
		if got := SanitizePaste(c.in); got != c.want {
			t.Errorf("SanitizePaste(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// allowedControl are the control characters SanitizePaste keeps.
func allowedControl(r rune) bool { return r == '\n' || r == '\t' }

// FuzzSanitizePaste: the output is valid UTF-8 with no ESC and no control
// character but "\n" and "\t", sanitising again changes nothing, and text
// that was already clean comes back unchanged.
func FuzzSanitizePaste(f *testing.F) {
	for _, s := range []string{"hello", "a\x1b[201~b", "\x1b]0;x\x07", "\r\n\r", "\x1b", "\xff\x9b", "\u009b", "x\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := SanitizePaste(in)
		if !utf8.ValidString(out) {
			t.Fatalf("%q -> invalid UTF-8 %q", in, out)
		}
		for _, r := range out {
			if isControl(r) && !allowedControl(r) {
				t.Fatalf("%q -> %q keeps control %U", in, out, r)
			}
		}
		if again := SanitizePaste(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		if utf8.ValidString(in) && !strings.ContainsFunc(in, func(r rune) bool { return isControl(r) && !allowedControl(r) }) && out != in {
			t.Fatalf("clean text changed: %q -> %q", in, out)
		}
	})
}
