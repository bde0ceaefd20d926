package termtext

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// Render plays raw terminal output through a terminal emulator of width
// x height cells and returns what a terminal would show once it has
// all: the lines that scrolled off the top of the screen, in order (the
// terminal's history, scrolled back), then the last screen, as plain
// text, each line's trailing blanks and the screen's trailing blank
// lines left out.
//
// Unlike Plain, which rebuilds each line on its own, Render follows the
// cursor across lines: a program that redraws part of its screen in
// place (Claude Code's spinner and input box, a progress area, an editor)
// reads as the screens it showed, not as every fragment it wrote. A
// full-screen program (the alternate screen) leaves no history; each
// screen it showed last before leaving the alternate screen is kept in
// the history at that point. Erasing the history (ED 3, as a program
// that is about to draw all of it again does) erases it here too, as in
// a terminal.
func Render(raw []byte, width, height int) []byte {
	r := newRenderer(width, height)
	defer r.close()
	raw = dropOSC(raw)
	for len(raw) > 0 {
		n := min(len(raw), renderChunk)
		_, _ = r.emu.Write(raw[:n]) // an emulator's Write takes all, and fails only once closed
		raw = raw[n:]
		r.drain()
	}
	var out strings.Builder
	for _, l := range r.history {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	for _, l := range r.last() {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return []byte(out.String())
}

// dropOSC removes the operating system commands (ESC ] ... BEL or ST:
// window titles, hyperlink targets, swarm's end marker) from raw output:
// they show nothing, and the parser reads a UTF-8 byte in one as a C1
// control (0x9c, the second byte of Claude Code's "✳" title, is ST) and
// prints the rest of the title on the screen. An OSC not ended within
// maxOSC bytes is left as it is.
func dropOSC(raw []byte) []byte {
	start := bytes.Index(raw, []byte("\x1b]"))
	if start < 0 {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for start >= 0 {
		end := oscEnd(raw[start+2:])
		if end < 0 {
			break
		}
		out = append(out, raw[:start]...)
		raw = raw[start+2+end:]
		start = bytes.Index(raw, []byte("\x1b]"))
	}
	return append(out, raw...)
}

// oscEnd is the length of an OSC's text and terminator (BEL or ESC \),
// or -1 when it does not end within maxOSC bytes.
func oscEnd(b []byte) int {
	for i := 0; i < len(b) && i < maxOSC; i++ {
		switch {
		case b[i] == '\a':
			return i + 1
		case b[i] == '\x1b' && i+1 < len(b) && b[i+1] == '\\':
			return i + 2
		case b[i] == '\x1b':
			return i // another sequence begins: the OSC was cut short
		}
	}
	return -1
}

// maxOSC bounds an OSC's length (a clipboard write can be long).
const maxOSC = 1 << 20

// renderChunk is how much output the emulator takes between two moves of
// its scrollback into the history: its scrollback holds styled cells
// (some hundred bytes each), the history plain text.
const renderChunk = 4 << 10

// renderer is an emulator and the history taken from it as text.
type renderer struct {
	emu     *vt.Emulator
	history []string
	// seen are lines of the main screen put in the history when a
	// program took the alternate screen, while they are still on it.
	seen []string
	// replies is closed once the emulator's replies are read to the end.
	replies chan struct{}
}

func newRenderer(width, height int) *renderer {
	r := &renderer{emu: vt.NewEmulator(max(width, 1), max(height, 1))}
	// A line feed starts a new line at its first column (LNM): output
	// written without the terminal's CR before each LF (a test's, a
	// program's that turned output processing off) still reads as lines.
	_, _ = r.emu.WriteString(ansi.SetMode(ansi.ModeLineFeedNewLine)) // as Write
	// The emulator answers a program's queries (cursor position, device
	// attributes) through a pipe that blocks until read. It is read to
	// its end, which close makes by closing the pipe's writer
	// (Emulator.Close would race with Read on the emulator's closed flag).
	r.replies = make(chan struct{})
	go func() {
		defer close(r.replies)
		_, _ = io.Copy(io.Discard, r.emu) // replies no one reads; it ends at the pipe's close
	}()
	r.emu.RegisterCsiHandler('J', func(params ansi.Params) bool {
		if n, _, _ := params.Param(0, 0); n == 3 {
			r.history = r.history[:0] // and the emulator's own scrollback (not handled here)
		}
		return false
	})
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(params ansi.Params) bool {
		if !r.emu.IsAltScreen() && altScreenMode(params) {
			// What the main screen shows comes before the full screen
			// in the history; it stays on the main screen, so it is
			// left out when it shows up there again (seen).
			r.drain()
			r.seen = r.screen()
			r.history = append(r.history, r.seen...)
		}
		return false // the emulator sets the mode
	})
	r.emu.RegisterCsiHandler(ansi.Command('?', 0, 'l'), func(params ansi.Params) bool {
		if r.emu.IsAltScreen() && altScreenMode(params) {
			r.drain()
			r.history = append(r.history, r.screen()...)
		}
		return false // the emulator resets the mode
	})
	return r
}

// altScreenMode reports whether a DECSET's or DECRST's modes are the
// alternate screen's (47, 1047, 1049).
func altScreenMode(params ansi.Params) bool {
	for _, p := range params {
		switch ansi.DECMode(p.Param(0)) {
		case ansi.ModeAltScreenSaveCursor, ansi.ModeAltScreen, ansi.DECMode(47):
			return true
		}
	}
	return false
}

// drain moves the emulator's scrollback to the history, as text.
func (r *renderer) drain() {
	sb := r.emu.Scrollback()
	if sb == nil || sb.Len() == 0 {
		return
	}
	for _, l := range sb.Lines() {
		text := strings.TrimRight(l.String(), " ")
		if len(r.seen) > 0 && r.seen[0] == text {
			r.seen = r.seen[1:] // in the history already
			continue
		}
		r.seen = nil
		r.history = append(r.history, text)
	}
	sb.Clear()
}

// last is the screen that ends the render: the current one, less the
// lines at its top that are in the history already (seen).
func (r *renderer) last() []string {
	lines := r.screen()
	for len(r.seen) > 0 && len(lines) > 0 && lines[0] == r.seen[0] {
		lines, r.seen = lines[1:], r.seen[1:]
	}
	return lines
}

// screen is the current screen's lines, trailing blank ones left out.
func (r *renderer) screen() []string {
	lines := strings.Split(r.emu.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	end := len(lines)
	for end > 0 && lines[end-1] == "" {
		end--
	}
	return slices.Clip(lines[:end])
}

// close ends the reading of the emulator's replies: no more output is
// written, so none comes.
func (r *renderer) close() {
	if w, ok := r.emu.InputPipe().(io.Closer); ok {
		_ = w.Close() // an io.PipeWriter's Close does not fail
		<-r.replies
	}
}
