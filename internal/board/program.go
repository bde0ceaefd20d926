package board

import (
	"io"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// bell is the terminal's bell character.
const bell = "\a"

// BellWriter is the board's output: the renderer's writes and the bell go
// through one lock, so a bell never lands inside an escape sequence of a
// frame.
type BellWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewBellWriter wraps w.
func NewBellWriter(w io.Writer) *BellWriter { return &BellWriter{w: w} }

// Write writes a frame, or part of one.
func (b *BellWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Bell rings the terminal bell.
func (b *BellWriter) Bell() { _, _ = b.Write([]byte(bell)) } // the terminal, as a frame's writes: no one left to tell

// ttyOutput is a BellWriter on a terminal: Bubble Tea recognises a
// terminal by its file descriptor (to read its size and follow resizes),
// so the file's other methods are passed through; writes take the lock.
type ttyOutput struct {
	*BellWriter
	f *os.File
}

func (t ttyOutput) Read(p []byte) (int, error) { return t.f.Read(p) }
func (t ttyOutput) Close() error               { return t.f.Close() }
func (t ttyOutput) Fd() uintptr                { return t.f.Fd() }

// Run shows the board full screen until the user quits, then waits for
// the actions it started. in and out are the terminal.
func Run(o Options, in io.Reader, out io.Writer) error {
	bw := NewBellWriter(out)
	if o.Bell == nil {
		o.Bell = bw.Bell
	}
	var output io.Writer = bw
	if f, ok := out.(*os.File); ok {
		output = ttyOutput{BellWriter: bw, f: f}
		// swarm attach's tmux client needs the terminal itself.
		o.Terminal = f
	}
	m := New(o)
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(output))
	_, err := p.Run()
	// A kill under way finishes before the board returns.
	m.Wait()
	return err
}
