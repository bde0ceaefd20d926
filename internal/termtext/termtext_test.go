package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
)

func TestPlain(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"text", "hello\nworld\n", "hello\nworld\n"},
		{"colours", "\x1b[1;31merror\x1b[0m: boom\n", "error: boom\n"},
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"progress redrawn", "10%\r50%\r100%\n", "100%\n"},
		{"shorter redraw keeps the rest", "abcdef\rxy\n", "xycdef\n"},
		{"redraw after erase", "downloading 90%\r\x1b[Kdone\n", "done\n"},
		{"erase whole line", "junk\x1b[2K\rok\n", "ok\n"},
		{"backspace", "ab\bc\n", "ac\n"},
		{"tab kept", "a\tb\n", "a\tb\n"},
		{"controls dropped", "a\x07b\x00c\x0ed\n", "abcd\n"},
		{"C1 control dropped", "a\u0085b\n", "ab\n"},
		{"osc title and swarm's end marker", "\x1b]0;title\x07done\n\x1b]7777;swarm-end\x07", "done\n"},
		{"cursor column", "abc\x1b[1Gx\n", "xbc\n"},
		{"cursor forward pads", "a\x1b[2Cb\n", "a  b\n"},
		{"private modes and screen moves dropped", "\x1b[?25l\x1b[2J\x1b[Hhi\x1b[?25h\n", "hi\n"},
		{"wide and combining", "日本\re\u0301\n", "e\u0301本\n"},
		{"trailing blanks trimmed", "x   \n", "x\n"},
		{"unended last line", "a\nb", "a\nb"},
		{"invalid utf-8 shown as a terminal does", "a\xffb\n", "a\ufffdb\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := string(Plain([]byte(c.in))); got != c.want {
				t.Errorf("Plain(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// The writer gives the same text however the output is cut into writes,
// escape sequences and redraws cut in two included.
func TestWriterMatchesPlainAcrossWrites(t *testing.T) {
	t.Parallel()
	in := "\x1b[32mstep 1\x1b[0m\r\n10%\r\x1b[K100%\nlast \x1b]7777;swarm-end\x07"
	want := string(Plain([]byte(in)))
	for size := 1; size <= len(in); size++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(in); i += size {
			if _, err := w.Write([]byte(in[i:min(len(in), i+size)])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, b.String(), want)
		}
	}
}

// A line that never ends is written once it is long, not held forever.
func TestWriterBoundsTheLineHeldBack(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write([]byte("partial"))
	if b.Len() != 0 {
		t.Fatalf("an unended line was written: %q", b.String())
	}
	w.Write([]byte(strings.Repeat("x", maxPending)))
	if b.Len() == 0 {
		t.Fatal("nothing written after maxPending bytes without a newline")
	}
	if !strings.HasPrefix(b.String(), "partialx") || !strings.HasSuffix(b.String(), "x\n") {
		t.Errorf("held-back line: %.20q ... %q", b.String(), b.String()[max(0, b.Len()-5):])
	}
}

// Whatever the output, the text has no escape or control characters but
// newlines and tabs, and the writer agrees with Plain.
func FuzzPlain(f *testing.F) {
	for _, s := range []string{"a\r\x1b[Kb\n", "\x1b]7777;swarm-end\x07", "\x9b31mx\n", "日本\b\b\bz\n", "\x1b[99999999999C.\n"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, in []byte, size int) {
		got := Plain(in)
		for _, r := range string(got) {
			if r != '\n' && r != '\t' && unicode.IsControl(r) {
				t.Fatalf("Plain(%q) = %q holds control %U", in, got, r)
			}
		}
		size = max(1, min(size, 64))
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(in); i += size {
			w.Write(in[i:min(len(in), i+size)])
		}
		w.Flush()
		// An escape sequence may hold a newline, which Plain reads as
		// part of it and the writer as the end of a line; without one
		// the two agree.
		if !bytes.ContainsFunc(in, func(r rune) bool { return r == 0x1b || r >= 0x80 }) && !bytes.Equal(b.Bytes(), got) {
			t.Fatalf("writer %q, Plain %q", b.Bytes(), got)
		}
	})
}
