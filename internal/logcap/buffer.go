package logcap

import (
	"fmt"
	"io"
)

// Buffer holds what is written to it within a cap, in memory, as
// ReadCapped would read it back from a file of all of it: the first
// quarter of max, the most recent rest, and how many bytes between them
// were dropped. Output that may be huge (a check printing without end) is
// bounded while it is written, never stored whole first.
type Buffer struct {
	max        int64
	head, tail []byte
	dropped    int64
}

// NewBuffer returns an empty Buffer capped at max bytes (0: DefaultMax).
func NewBuffer(max int64) (*Buffer, error) {
	max, err := normMax(max)
	if err != nil {
		return nil, err
	}
	return &Buffer{max: max}, nil
}

// Write keeps p's first bytes while the head has room and its last ones in
// the tail; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := int(headSize(b.max)) - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	tailMax := int(b.max - headSize(b.max))
	if len(p) >= tailMax {
		b.dropped += int64(len(b.tail) + len(p) - tailMax)
		b.tail = append(b.tail[:0], p[len(p)-tailMax:]...)
		return n, nil
	}
	if over := len(b.tail) + len(p) - tailMax; over > 0 {
		b.dropped += int64(over)
		k := copy(b.tail, b.tail[over:])
		b.tail = b.tail[:k]
	}
	b.tail = append(b.tail, p...)
	return n, nil
}

// Capped returns what the buffer holds.
func (b *Buffer) Capped() Capped {
	return Capped{Head: b.head, Tail: b.tail, Dropped: b.dropped}
}

// Limit returns a writer that passes the first n bytes written to it on
// to w, then one line saying the rest was dropped (note names whose
// output it is), and drops the rest: streamed output, such as a hook's
// into a monitor's log, stays bounded however much is printed. Writes
// past the limit report success, so the writer (a child process through
// a pipe) is neither stopped nor slowed by it.
func Limit(w io.Writer, n int64, note string) io.Writer {
	return &limitWriter{w: w, left: n, note: note}
}

type limitWriter struct {
	w     io.Writer
	left  int64
	note  string
	noted bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= l.left {
		l.left -= int64(len(p))
		return l.w.Write(p)
	}
	if l.left > 0 {
		if _, err := l.w.Write(p[:l.left]); err != nil {
			return 0, err
		}
		l.left = 0
	}
	if !l.noted {
		l.noted = true
		fmt.Fprintf(l.w, "\n[swarm: %s: output cut here; the rest is dropped]\n", l.note)
	}
	return len(p), nil
}
