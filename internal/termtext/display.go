package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Strip returns s without its escape sequences, parsed as a terminal
// parses them (x/ansi): an ESC that starts no sequence, or one cut short
// by the next ESC, cannot leave a working sequence behind as a pattern
// matching pass over the text could ("ESC ESC[A ]52;..." would keep an
// OSC 52 clipboard write). Everything else, control characters
// included, is kept: Strip is what screens and output are matched on.
//
// A control string (OSC, DCS, APC ...) ends at the end of its line at the
// latest, so one left unterminated hides no line after it. A line with an
// escape sequence has its invalid UTF-8 turned into U+FFFD first (a stray
// lead byte must not take the ESC after it into a character); other lines
// are kept byte for byte.
func Strip(s string) string {
	if strings.IndexByte(s, ansi.ESC) < 0 {
		return s // the usual capture-pane screen: nothing to parse
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		line, rest, ended := strings.Cut(s, "\n")
		if strings.IndexByte(line, ansi.ESC) >= 0 {
			line = ansi.Strip(strings.ToValidUTF8(line, string(utf8.RuneError)))
		}
		b.WriteString(line)
		if ended {
			b.WriteByte('\n')
		}
		s = rest
	}
	return b.String()
}

// zwj joins emoji into one; it is kept although it is not printable.
const zwj = '\u200d'

// Line returns text that came from an agent, a pane, a state file or a
// user's flag as one line of printable text, safe to show on a terminal
// and in a table: escape sequences removed (Strip), line breaks, tabs
// and other spaces turned into a space (a newline cannot start a forged
// row), and every other character that is not printable dropped: C0 and
// C1 controls, DEL, and invisible format characters such as the
// bidirectional overrides, which reorder what a terminal shows. Invalid
// UTF-8 becomes U+FFFD.
func Line(s string) string {
	if printableASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsPrint(r) || r == zwj:
			return r
		case unicode.IsSpace(r):
			return ' '
		}
		return -1
	}, Strip(s))
}

// printableASCII reports text Line leaves as it is.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= ansi.DEL {
			return false
		}
	}
	return true
}
