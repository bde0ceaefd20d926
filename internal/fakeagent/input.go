package main

import "unicode/utf8"

// action tells the caller of editor.feed what the bytes fed so far amount to.
type action int

const (
	actNone      action = iota // the message is not complete yet; feed more
	actSubmit                  // Enter: editor.message() holds the message
	actInterrupt               // Ctrl-C: the agent exits 130
	actEOF                     // Ctrl-D on an empty input: the agent exits 0
)

type editMode int

const (
	modeNormal editMode = iota
	modeEsc             // seen ESC, waiting to know whether a CSI sequence follows
	modeCSI             // inside ESC [ ... up to a final byte
	modePaste           // inside a bracketed paste, until ESC [ 2 0 1 ~
)

const pasteEnd = "\x1b[201~"

// maxCSI bounds how much of an unknown escape sequence is kept; only the
// paste markers are ever looked at, so anything longer is just skipped.
const maxCSI = 32

// editor is the line editor of the fake agent as a pure state machine: it is
// fed raw terminal bytes and answers with what to echo and whether a message
// is complete. It keeps no reference to a terminal so it can be tested by
// feeding byte slices, and its state survives arbitrary read boundaries
// (paste markers split across reads are common with tmux paste-buffer).
type editor struct {
	prompt   string
	input    []byte
	mode     editMode
	csi      []byte // parameter and intermediate bytes of the current CSI
	endMatch int    // how many bytes of pasteEnd have been matched in modePaste
	pasteCR  bool   // last pasted byte was \r, so a following \n is the same newline
	skipLF   bool   // the last message was submitted by \r; a \n right after it belongs to it
}

func newEditor(prompt string) *editor { return &editor{prompt: prompt} }

// feed consumes bytes of p until a message is complete (or Ctrl-C / Ctrl-D)
// or p runs out. It returns the bytes to echo to the terminal, what happened,
// and how many bytes of p it consumed: bytes after a submitted message are
// left for the next message, the way a real terminal program would see
// type-ahead.
func (e *editor) feed(p []byte) (echo []byte, act action, n int) {
	for n < len(p) {
		var consumed bool
		act, consumed = e.handle(p[n], &echo)
		if consumed {
			n++
		}
		if act != actNone {
			return echo, act, n
		}
	}
	return echo, actNone, n
}

// message returns the submitted input and starts a new, empty one.
func (e *editor) message() string {
	msg := string(e.input)
	e.input = e.input[:0]
	return msg
}

// handle processes one byte. consumed is false when the byte ended a state
// without belonging to it (a lone ESC, an aborted sequence, a false start of
// the paste end marker) and must be handled again in the new state.
func (e *editor) handle(b byte, echo *[]byte) (act action, consumed bool) {
	switch e.mode {
	case modePaste:
		return actNone, e.handlePaste(b, echo)
	case modeEsc:
		return actNone, e.handleEsc(b)
	case modeCSI:
		return actNone, e.handleCSI(b)
	}
	return e.handleNormal(b, echo)
}

// handleEsc: the byte after ESC. Only a CSI ("ESC [") is read further.
func (e *editor) handleEsc(b byte) bool {
	if b != '[' {
		// A lone Escape (Esc key, or Alt+key) is ignored; the byte after
		// it is ordinary input.
		e.mode = modeNormal
		return false
	}
	e.mode, e.csi = modeCSI, e.csi[:0]
	return true
}

// handleCSI collects a control sequence; "ESC [ 200 ~" starts a paste.
func (e *editor) handleCSI(b byte) bool {
	switch {
	case b >= 0x20 && b <= 0x3f: // parameter and intermediate bytes
		if len(e.csi) < maxCSI {
			e.csi = append(e.csi, b)
		}
		return true
	case b >= 0x40 && b <= 0x7e: // final byte
		e.mode = modeNormal
		if b == '~' && string(e.csi) == "200" {
			e.mode, e.endMatch, e.pasteCR = modePaste, 0, false
		}
		// Everything else, including a stray paste end marker, is a key
		// the fake agent does not implement (arrows, function keys).
		return true
	}
	// Not a valid sequence; give up on it and treat the byte normally.
	e.mode = modeNormal
	return false
}

// handleNormal is line editing outside escape sequences and pastes.
func (e *editor) handleNormal(b byte, echo *[]byte) (action, bool) {
	if e.skipLF {
		e.skipLF = false
		if b == '\n' {
			return actNone, true
		}
	}
	switch b {
	case '\r', '\n':
		e.skipLF = b == '\r'
		*echo = append(*echo, "\r\n"...)
		return actSubmit, true
	case 0x7f, 0x08: // Backspace
		if len(e.input) > 0 {
			_, size := utf8.DecodeLastRune(e.input)
			e.input = e.input[:len(e.input)-size]
			*echo = append(*echo, "\b \b"...)
		}
	case 0x15: // Ctrl-U: clear the input and redraw the prompt line
		e.input = e.input[:0]
		*echo = append(*echo, "\r\x1b[K"...)
		*echo = append(*echo, e.prompt...)
	case 0x03: // Ctrl-C; ISIG is off in raw mode, so it arrives as a byte
		return actInterrupt, true
	case 0x04: // Ctrl-D
		if len(e.input) == 0 {
			return actEOF, true
		}
	case 0x1b:
		e.mode = modeEsc
	default:
		// Printable ASCII and every byte of a UTF-8 sequence; other control
		// bytes are ignored.
		if b >= 0x20 {
			e.input = append(e.input, b)
			*echo = append(*echo, b)
		}
	}
	return actNone, true
}

// handlePaste collects a byte of a bracketed paste verbatim, watching for the
// end marker one byte at a time so that it may be split across reads.
func (e *editor) handlePaste(b byte, echo *[]byte) (consumed bool) {
	if b == pasteEnd[e.endMatch] {
		e.endMatch++
		if e.endMatch == len(pasteEnd) {
			e.mode, e.endMatch = modeNormal, 0
		}
		return true
	}
	if e.endMatch > 0 {
		// A false start: the bytes matched so far were content. Only the
		// first byte of pasteEnd is ESC, so b cannot continue an overlapping
		// match, but it may start a new one, hence not consumed.
		for i := 0; i < e.endMatch; i++ {
			e.pasteByte(pasteEnd[i], echo)
		}
		e.endMatch = 0
		return false
	}
	e.pasteByte(b, echo)
	return true
}

// pasteByte adds one byte of pasted content. tmux paste-buffer turns line
// feeds into carriage returns, and other terminals send \r\n, so both \r\n
// and a lone \r become \n in the message.
func (e *editor) pasteByte(b byte, echo *[]byte) {
	switch {
	case b == '\n' && e.pasteCR:
		e.pasteCR = false
	case b == '\r' || b == '\n':
		e.pasteCR = b == '\r'
		e.input = append(e.input, '\n')
		*echo = append(*echo, "\r\n"...)
	default:
		e.pasteCR = false
		e.input = append(e.input, b)
		*echo = append(*echo, b)
	}
}
