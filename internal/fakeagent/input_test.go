package main

import (
	"reflect"
	"testing"
)

// feedAll feeds chunks to a fresh editor the way readMessage does, and
// returns each event (a submitted message, or "<interrupt>" / "<eof>") and
// everything echoed.
func feedAll(chunks ...string) (events []string, echo string) {
	e := newEditor("> ")
	for _, c := range chunks {
		p := []byte(c)
		for len(p) > 0 {
			out, act, n := e.feed(p)
			echo += string(out)
			p = p[n:]
			switch act {
			case actSubmit:
				events = append(events, e.message())
			case actInterrupt:
				events = append(events, "<interrupt>")
			case actEOF:
				events = append(events, "<eof>")
			}
			if act == actNone && len(p) > 0 {
				panic("feed returned actNone without consuming all input")
			}
		}
	}
	return events, echo
}

func TestEditor(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string
		echo   string // checked when not empty
	}{
		{"typed", []string{"hello\r"}, []string{"hello"}, "hello\r\n"},
		{"LF submits too", []string{"hi\n"}, []string{"hi"}, ""},
		{"CRLF is one Enter", []string{"a\r\nb\r"}, []string{"a", "b"}, ""},
		{"CR then LF in the next read", []string{"a\r", "\nb\r"}, []string{"a", "b"}, ""},
		{"dash text", []string{"-n x\r"}, []string{"-n x"}, ""},
		{"typed in pieces", []string{"he", "l", "lo", "\r"}, []string{"hello"}, ""},
		{"nothing until Enter", []string{"abc"}, nil, "abc"},
		{"empty Enter", []string{"\r"}, []string{""}, ""},
		{"UTF-8", []string{"h\xc3", "\xa9 ✓\r"}, []string{"hé ✓"}, ""},

		{"paste with CR newlines", []string{"\x1b[200~line one\rline two\rline three\x1b[201~\r"},
			[]string{"line one\nline two\nline three"}, "line one\r\nline two\r\nline three\r\n"},
		{"paste with CRLF and LF", []string{"\x1b[200~a\r\nb\nc\r\r\x1b[201~\r"}, []string{"a\nb\nc\n\n"}, ""},
		{"paste markers split everywhere", []string{"\x1b", "[", "20", "0", "~one\r", "\n", "two\x1b", "[2", "01", "~", "\r"},
			[]string{"one\ntwo"}, ""},
		{"paste split at every byte", splitBytes("x\x1b[200~p\rq\x1b[201~y\r"), []string{"xp\nqy"}, ""},
		{"escape-like bytes inside a paste are content", []string{"\x1b[200~a\x1b[2x\x1bb\x1b[201\x1b[201~\r"},
			[]string{"a\x1b[2x\x1bb\x1b[201"}, ""},
		{"Enter inside a paste does not submit", []string{"\x1b[200~a\r", "b\x1b[201~", "c\r"}, []string{"a\nbc"}, ""},
		{"typed around a paste", []string{"pre \x1b[200~mid\x1b[201~ post\r"}, []string{"pre mid post"}, ""},

		{"backspace", []string{"abx\x7fc\r"}, []string{"abc"}, "abx\b \bc\r\n"},
		{"ctrl-h", []string{"ab\x08\r"}, []string{"a"}, ""},
		{"backspace removes a rune", []string{"aé\x7f\r"}, []string{"a"}, ""},
		{"backspace on empty", []string{"\x7f\x7fa\r"}, []string{"a"}, "a\r\n"},
		{"ctrl-u", []string{"garbage\x15kept\r"}, []string{"kept"}, "garbage\r\x1b[K> kept\r\n"},
		{"ctrl-u after a paste", []string{"\x1b[200~a\rb\x1b[201~\x15c\r"}, []string{"c"}, ""},

		{"lone escape then ctrl-u", []string{"junk\x1b\x15typed\r"}, []string{"typed"}, ""},
		{"lone escape in its own read", []string{"junk", "\x1b", "\x15", "typed\r"}, []string{"typed"}, ""},
		{"lone escape before a letter", []string{"\x1bab\r"}, []string{"ab"}, ""},
		{"double escape", []string{"\x1b\x1b[A\x1bx\r"}, []string{"x"}, ""},
		{"arrow keys ignored", []string{"a\x1b[A\x1b[D\x1b[1;5C\x1b[3~b\r"}, []string{"ab"}, "ab\r\n"},
		{"stray paste end ignored", []string{"a\x1b[201~b\r"}, []string{"ab"}, ""},
		{"aborted CSI", []string{"a\x1b[1\rb\r"}, []string{"a", "b"}, ""},
		{"other control bytes ignored", []string{"a\x01\x02\tb\r"}, []string{"ab"}, ""},

		{"ctrl-c", []string{"abc\x03"}, []string{"<interrupt>"}, ""},
		{"ctrl-d on empty", []string{"\x04"}, []string{"<eof>"}, ""},
		{"ctrl-d with input ignored", []string{"a\x04b\r"}, []string{"ab"}, ""},
		{"type-ahead for the next message", []string{"one\rtwo\r\x1b[200~th\rree\x1b[201~\r"}, []string{"one", "two", "th\nree"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, echo := feedAll(tt.chunks...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("messages = %q, want %q", got, tt.want)
			}
			if tt.echo != "" && echo != tt.echo {
				t.Errorf("echo = %q, want %q", echo, tt.echo)
			}
		})
	}
}

// TestEditorStopsAtSubmit checks that feed leaves the bytes after Enter
// unconsumed, so the caller can keep them for the next message.
func TestEditorStopsAtSubmit(t *testing.T) {
	e := newEditor("> ")
	p := []byte("first\rsecond")
	_, act, n := e.feed(p)
	if act != actSubmit || n != len("first\r") {
		t.Fatalf("feed = %v, %d; want submit after %d bytes", act, n, len("first\r"))
	}
	if msg := e.message(); msg != "first" {
		t.Fatalf("message = %q", msg)
	}
	_, act, n = e.feed(p[n:])
	if act != actNone || n != len("second") {
		t.Fatalf("second feed = %v, %d", act, n)
	}
}

func splitBytes(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		out = append(out, s[i:i+1])
	}
	return out
}
