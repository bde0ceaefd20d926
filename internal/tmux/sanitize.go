package tmux

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bytes that start or end terminal sequences.
const (
	esc = 0x1b // starts an escape sequence
	bel = 0x07 // ends an OSC string
	del = 0x7f // a control character above the printable range
	// Ranges of ECMA-48 sequence bytes.
	paramLo, paramHi       = 0x30, 0x3f // CSI parameter bytes
	interLo, interHi       = 0x20, 0x2f // intermediate bytes
	csiFinalLo, csiFinalHi = 0x40, 0x7e // CSI final bytes
	escFinalLo, escFinalHi = 0x30, 0x7e // final bytes after ESC (intermediates)
)

// stringIntroducers follow ESC to open a control string (OSC, DCS, SOS,
// PM, APC) that runs up to a terminator.
const stringIntroducers = "]PX^_"

// singleShifts follow ESC to shift the one character after them (SS2,
// SS3).
const singleShifts = "NO"

// SanitizePaste returns text reduced to what a person could type: nothing
// in it can end or restart a bracketed paste, act as a key, or drive the
// terminal. tmux hands pasted and literally typed text to the program
// byte for byte, so "\x1b[201~" in a prompt would end the paste early and
// the rest would arrive as separate typed submissions, and a Ctrl-C byte
// would interrupt a program whose terminal is in cooked mode.
//
//   - ESC and the sequence it starts are removed: CSI sequences (ESC [,
//     parameters, intermediates and a final byte: the paste brackets
//     "\x1b[200~" and "\x1b[201~", colours, cursor keys); control strings
//     (ESC ] OSC, ESC P DCS, ESC X, ESC ^, ESC _) up to BEL, ESC \ or the
//     next control character; other ESC sequences (ESC 7, ESC ( B, ESC O
//     A); an ESC followed by anything else is removed alone.
//   - "\r\n" and a lone "\r" become "\n". tmux's paste-buffer turns every
//     "\n" into "\r" anyway, so the program cannot tell them apart, and a
//     "\r\n" would otherwise arrive as two line breaks.
//   - "\n" and "\t" are kept: they are text inside a bracketed paste.
//   - Every other control character is removed: C0 (NUL, BEL, BS, Ctrl-C,
//     Ctrl-D, ...), DEL and C1 (U+0080 to U+009F, including the 8-bit CSI).
//   - Invalid UTF-8 becomes U+FFFD: a stray byte such as 0x9b is an 8-bit
//     CSI to some parsers.
//
// Everything else, printable ASCII and Unicode, is kept unchanged, and
// sanitising twice changes nothing more.
func SanitizePaste(text string) string {
	if isPlain(text) {
		return text
	}
	text = strings.ToValidUTF8(text, string(utf8.RuneError))
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == esc:
			size = escapeSequenceLen(text[i:])
		case r == '\r':
			b.WriteByte('\n')
			if strings.HasPrefix(text[i+size:], "\n") {
				size++
			}
		case r == '\n' || r == '\t' || !isControl(r):
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isControl reports C0 controls, DEL and C1 controls.
func isControl(r rune) bool { return unicode.IsControl(r) }

// isPlain reports text that SanitizePaste leaves as it is.
func isPlain(text string) bool {
	return utf8.ValidString(text) && !strings.ContainsFunc(text, func(r rune) bool {
		return r != '\n' && r != '\t' && isControl(r)
	})
}

// escapeSequenceLen is the length of the escape sequence at the start of
// s, which starts with ESC.
func escapeSequenceLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch c := s[1]; {
	case c == '[':
		return 2 + csiLen(s[2:])
	case strings.IndexByte(stringIntroducers, c) >= 0:
		return 2 + controlStringLen(s[2:])
	case strings.IndexByte(singleShifts, c) >= 0:
		// The shifted character is part of the sequence (ESC O A is the
		// Up key in application cursor mode).
		if len(s) > 2 && s[2] >= ' ' && s[2] < del {
			return 3
		}
		return 2
	case c >= interLo && c <= escFinalHi:
		return 1 + escLen(s[1:])
	}
	return 1
}

// csiLen is the length of a CSI sequence's parameters, intermediates and
// final byte at the start of s; it stops early at any other byte, which
// is then read as text.
func csiLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= paramLo && s[i] <= paramHi {
		i++
	}
	for i < len(s) && s[i] >= interLo && s[i] <= interHi {
		i++
	}
	if i < len(s) && s[i] >= csiFinalLo && s[i] <= csiFinalHi {
		i++
	}
	return i
}

// escLen is the length of the intermediates and final byte of an ESC
// sequence at the start of s.
func escLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= interLo && s[i] <= interHi {
		i++
	}
	if i < len(s) && s[i] >= escFinalLo && s[i] <= escFinalHi {
		i++
	}
	return i
}

// controlStringLen is the length of a control string's body and its
// terminator (BEL or ESC \) at the start of s. It ends before any other
// control character, so an unterminated string cannot swallow the lines
// after it.
func controlStringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == bel:
			return i + 1
		case s[i] == esc && strings.HasPrefix(s[i+1:], `\`):
			return i + 2
		case s[i] < ' ' || s[i] == del:
			return i
		}
	}
	return len(s)
}
