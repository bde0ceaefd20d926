package termtext

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

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
//
// The emulator's work grows with the screen's size for every line that
// scrolls and every screen erased (a 200x50 screen: about 0.1 ms each on
// a loaded 2-core machine, so a 50 MiB log of line feeds would take over
// an hour), so only the last renderOps such operations of the output
// (renderCut) are played through it; what comes before is rebuilt a
// line at a time (Plain) and comes first.
func Render(raw []byte, width, height int) []byte {
	return render(raw, width, height, renderOps)
}

// render is Render, playing at most ops operations through the emulator.
func render(raw []byte, width, height, ops int) []byte {
	raw = dropOSC(raw)
	var out strings.Builder
	if cut := renderCut(raw, max(width, 1), ops); cut > 0 {
		out.Write(Plain(raw[:cut]))
		raw = raw[cut:]
	}
	r := newRenderer(width, height)
	defer r.close()
	for len(raw) > 0 {
		n := min(len(raw), renderChunk)
		_, _ = r.emu.Write(raw[:n]) // an emulator's Write takes all, and fails only once closed
		raw = raw[n:]
		r.drain()
	}
	for _, l := range r.history {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	for _, l := range r.last() {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	// The emulator puts a C1 control that came UTF-8 encoded (U+0084)
	// in a cell as a character; a terminal given it back may act on it.
	return []byte(strings.Map(func(c rune) rune {
		if c != '\n' && (c < ' ' || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
			return -1
		}
		return c
	}, out.String()))
}

// renderOps bounds the operations Render plays through the emulator
// (renderCut): at most a few seconds' work, the last few hundred KiB of a
// full-screen agent's output.
const renderOps = 20000

// renderCut returns where the part of raw that Render plays through the
// emulator begins: the start of a line such that what follows holds at
// most ops operations that cost the emulator a screen's work (a line
// feed, which may scroll; a line that wraps at width, counted
// generously; a scroll, an erased screen, inserted or deleted lines, an
// index or reverse index, a reset, a switch of screens); 0 when all of
// raw does.
func renderCut(raw []byte, width, ops int) int {
	// Where the last ops+1 operations end, in a ring: a 50 MiB log of
	// line feeds has 50 million.
	at := make([]int, ops+1)
	n, col := 0, 0
	add := func(end int) { at[n%len(at)] = end; n++ }
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '\n' || c == '\v' || c == '\f':
			add(i + 1)
			col = 0
		case c == 0x1b && i+1 < len(raw) && raw[i+1] == '[', c == 0x9b && c1(raw[i:]):
			j := i + 1
			if c == 0x1b {
				j++
			}
			for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x3f {
				j++
			}
			if j < len(raw) && strings.IndexByte("JSTLMhl", raw[j]) >= 0 {
				add(j + 1)
			}
			i = max(i, j)
		case c == 0x1b && i+1 < len(raw) && strings.IndexByte("DEMc", raw[i+1]) >= 0:
			add(i + 2)
			i++
		case (c == 0x84 || c == 0x85 || c == 0x8d) && c1(raw[i:]):
			add(i + 1) // IND, NEL, RI as one byte
		case c >= 0x80:
			// A character of several bytes: one cell or two, counted as
			// many as its bytes.
			_, size := utf8.DecodeRune(raw[i:])
			if col += size; col >= width {
				add(i + size)
				col = 0
			}
			i += size - 1
		case c >= 0x20:
			if col++; col >= width {
				add(i + 1)
				col = 0
			}
		}
	}
	if n <= ops {
		return 0
	}
	// The first line start after the operation that leaves ops after it
	// (else that operation's end: output with no line feed to cut at).
	cut := at[(n-ops-1)%len(at)]
	if raw[cut-1] == '\n' {
		return cut
	}
	if nl := bytes.IndexByte(raw[cut:], '\n'); nl >= 0 {
		cut += nl + 1
	}
	return cut
}

// c1 reports whether b starts with a byte the emulator reads as a C1
// control: one that is not part of a UTF-8 character.
func c1(b []byte) bool {
	r, size := utf8.DecodeRune(b)
	return r == utf8.RuneError && size == 1
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
