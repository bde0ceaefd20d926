// Package termtext turns what a program wrote to a terminal (an agent's
// raw output as pipe-pane records it) into plain text: escape sequences
// are parsed and dropped, other control characters too, and a line
// redrawn in place (a carriage return, backspaces, an erase to the end of
// the line, as progress bars and spinners do) keeps what the terminal
// finally showed on it.
//
// Each line is rebuilt on its own: cursor movements to other lines (a
// full-screen program redrawing its screen) are dropped, so such output
// reads as its lines in the order they were written.
package termtext

import (
	"bytes"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Plain returns b as plain text.
func Plain(b []byte) []byte {
	var out bytes.Buffer
	var l line
	l.feed(b, &out)
	l.flush(&out, false)
	return out.Bytes()
}

// maxPending bounds what Writer holds back waiting for the end of a line:
// a program that never writes a newline (a full-screen one) still shows.
const maxPending = 64 << 10

// Writer writes plain text to an io.Writer as raw terminal output comes.
// It writes whole lines only, holding back the line not yet ended (up to
// maxPending bytes), since a carriage return may still redraw it and an
// escape sequence may still be cut in two; Flush writes what is held.
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write takes raw output; the lines it ends are written to the
// underlying writer as plain text.
func (w *Writer) Write(p []byte) (int, error) {
	w.pending = append(w.pending, p...)
	end := bytes.LastIndexByte(w.pending, '\n') + 1
	if end == 0 && len(w.pending) < maxPending {
		return len(p), nil
	}
	if end == 0 {
		end = len(w.pending)
	}
	text := Plain(w.pending[:end])
	if end == len(w.pending) && w.pending[end-1] != '\n' {
		text = append(text, '\n')
	}
	w.pending = append(w.pending[:0], w.pending[end:]...)
	if _, err := w.w.Write(text); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the line held back, as it is so far.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	text := Plain(w.pending)
	w.pending = w.pending[:0]
	_, err := w.w.Write(text)
	return err
}

// Control characters and CSI finals the line model acts on.
const (
	backspace = '\b'
	tab       = '\t'
	newline   = '\n'
	cr        = '\r'
	// CSI finals: erase in line, cursor forward, cursor back, cursor to
	// column.
	csiEraseLine  = 'K'
	csiForward    = 'C'
	csiBack       = 'D'
	csiColumn     = 'G'
	eraseToEnd    = 0
	eraseToCursor = 1
	eraseAll      = 2
	// maxColumn bounds where cursor movements can put the cursor: a
	// terminal stops at its last column, and "move 99999999 right" must
	// not become a line of that many blanks.
	maxColumn = 1024
)

// line is the terminal line being written: a cell per grapheme (wide
// ones too: the line is text, not a screen) and the cursor's column.
type line struct {
	cells []string
	col   int
}

// feed runs raw output through the line, writing each ended line to out.
func (l *line) feed(b []byte, out *bytes.Buffer) {
	p := ansi.NewParser()
	var state byte
	for len(b) > 0 {
		seq, width, n, next := ansi.DecodeSequence(b, state, p)
		if n <= 0 {
			n, seq = 1, b[:1]
		}
		state, b = next, b[n:]
		switch {
		case len(seq) == 1 && (seq[0] < ' ' || seq[0] == ansi.DEL):
			l.control(seq[0], out)
		case ansi.HasCsiPrefix(seq):
			l.csi(ansi.Cmd(p.Command()).Final(), p)
		case seq[0] == ansi.ESC || isC1(seq[0]):
			// Other escape sequences (colours are CSI, titles and
			// swarm's end marker OSC) and C1 controls show nothing.
		default:
			l.grapheme(seq, width)
		}
	}
}

// isC1 reports whether a byte is a C1 control in its 8-bit form (a
// terminal reads 0x9b as CSI): in UTF-8 it never starts a character.
func isC1(b byte) bool { return b >= 0x80 && b < 0xa0 }

// grapheme writes a printable grapheme. Its control characters (a C1
// control in UTF-8) are dropped and bytes that are not UTF-8 show as a
// terminal shows them; a zero-width one (a combining mark on its own)
// joins the cell before the cursor.
func (l *line) grapheme(g []byte, width int) {
	var b strings.Builder
	for len(g) > 0 {
		r, size := utf8.DecodeRune(g)
		g = g[size:]
		if !unicode.IsControl(r) {
			b.WriteRune(r) // utf8.RuneError for a byte that is not UTF-8
		}
	}
	switch {
	case b.Len() == 0:
	case width > 0:
		l.put(b.String())
	case l.col > 0 && l.col <= len(l.cells):
		l.cells[l.col-1] += b.String()
	}
}

// put writes a grapheme at the cursor, over what was there.
func (l *line) put(g string) {
	for len(l.cells) < l.col {
		l.cells = append(l.cells, " ")
	}
	if l.col < len(l.cells) {
		l.cells[l.col] = g
	} else {
		l.cells = append(l.cells, g)
	}
	l.col++
}

// control acts on a control character; the ones a line of text has no
// use for (bells, shifts, C1 controls) are dropped.
func (l *line) control(c byte, out *bytes.Buffer) {
	switch c {
	case newline:
		l.flush(out, true)
	case cr:
		l.col = 0
	case backspace:
		l.col = max(0, l.col-1)
	case tab:
		l.put("\t")
	}
}

// csi acts on the sequences that change the current line: erasing and
// moving along it.
func (l *line) csi(final byte, p *ansi.Parser) {
	n, _ := p.Param(0, 0)
	switch final {
	case csiEraseLine:
		switch n {
		case eraseToEnd:
			l.cells = l.cells[:min(l.col, len(l.cells))]
		case eraseToCursor:
			for i := 0; i <= l.col && i < len(l.cells); i++ {
				l.cells[i] = " "
			}
		case eraseAll:
			l.cells = l.cells[:0]
		}
	case csiForward:
		l.col = min(max(maxColumn, len(l.cells)), l.col+max(1, n))
	case csiBack:
		l.col = max(0, l.col-max(1, n))
	case csiColumn:
		l.col = min(max(maxColumn, len(l.cells)), max(1, n)-1)
	}
}

// flush writes the line without trailing blanks, and starts the next.
func (l *line) flush(out *bytes.Buffer, ended bool) {
	text := strings.TrimRight(strings.Join(l.cells, ""), " ")
	out.WriteString(text)
	if ended {
		out.WriteByte(newline)
	}
	l.cells, l.col = l.cells[:0], 0
}
