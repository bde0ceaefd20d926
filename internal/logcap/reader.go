package logcap

import (
	"errors"
	"io"
	"os"

	"github.com/swarmtools/swarm/internal/state"
)

// Reader follows a capped log while it is written, by offset in the
// stream written to it rather than in the file, so a cut (the file
// rewritten shorter) neither hides new output nor repeats old output. It
// opens the file afresh for each read, as a cut replaces it.
//
// The cap must be the writer's: it tells where the marker sits.
type Reader struct {
	path string
	max  int64
	off  int64
	lost int64
}

// NewReader returns a Reader of the log at path, capped at max (0:
// DefaultMax), from the start of the stream.
func NewReader(path string, max int64) *Reader {
	if m, err := normMax(max); err == nil {
		max = m
	}
	return &Reader{path: path, max: max}
}

// Offset is the stream offset of the next byte ReadNew returns: the number
// of bytes written to the log before it.
func (r *Reader) Offset() int64 { return r.off }

// SetOffset makes ReadNew continue at stream offset off (from Offset or
// Size earlier).
func (r *Reader) SetOffset(off int64) { r.off = off }

// Lost is how many bytes the cap dropped before this reader read them.
func (r *Reader) Lost() int64 { return r.lost }

// ReadNew returns what was written since the last read that the file still
// holds; bytes dropped by the cap in between are skipped (and counted in
// Lost). A missing file holds nothing yet. If the file holds less than was
// already read, it was truncated or replaced by something else than the
// writer, and reading starts over at its beginning.
func (r *Reader) ReadNew() ([]byte, error) {
	f, l, err := open(r.path, r.max)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if r.off > l.end() {
		r.off = 0
	}
	var out []byte
	for _, s := range l.segments() {
		if r.off >= s.to {
			continue
		}
		if r.off < s.from {
			r.lost += s.from - r.off
			r.off = s.from
		}
		buf := make([]byte, s.to-r.off)
		n, err := f.ReadAt(buf, s.file+r.off-s.from)
		out = append(out, buf[:n]...)
		r.off += int64(n)
		if err != nil && err != io.EOF {
			return out, err
		}
		if int64(n) < int64(len(buf)) {
			break
		}
	}
	return out, nil
}

// ErrDropped reports a stream range the cap has dropped.
var ErrDropped = errors.New("logcap: output dropped by the log cap")

// ReadAt reads the stream (not the file) from offset off into p, as far
// as the file holds it contiguously. A short read ends with ErrDropped
// where the cap dropped what follows, io.EOF at the end of what was
// written.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	f, l, err := open(r.path, r.max)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	for _, s := range l.segments() {
		if off < s.from {
			return 0, ErrDropped
		}
		if off >= s.to {
			continue
		}
		want := min(int64(len(p)), s.to-off)
		n, err := f.ReadAt(p[:want], s.file+off-s.from)
		if err == nil && int64(n) < int64(len(p)) {
			err = ErrDropped
			if off+int64(n) == l.end() {
				err = io.EOF
			}
		}
		return n, err
	}
	return 0, io.EOF
}

// Size returns the stream length of the log at path, capped at max: the
// offset a Reader would continue from to see only output written after
// now. A missing file has size 0.
func Size(path string, max int64) (int64, error) {
	if m, err := normMax(max); err == nil {
		max = m
	}
	f, l, err := open(path, max)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	_ = f.Close() // read only: nothing to lose
	return l.end(), nil
}

func open(path string, max int64) (*os.File, layout, error) {
	f, err := state.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, layout{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, layout{}, errors.Join(err, f.Close())
	}
	return f, readLayout(f, fi.Size(), max), nil
}

// Capped is a file read within a cap: its first and last bytes and how
// many between them were left out.
type Capped struct {
	Head, Tail []byte
	Dropped    int64
}

// Bytes joins the parts with a marker line where bytes were left out.
func (c Capped) Bytes(max int64) []byte {
	if c.Dropped == 0 {
		return append(append([]byte{}, c.Head...), c.Tail...)
	}
	out := append([]byte{}, c.Head...)
	out = append(out, Marker(c.Dropped, int64(len(c.Head)), max)...)
	return append(out, c.Tail...)
}

// ReadCapped reads a file that is already written without holding more
// than max bytes (0: DefaultMax) of it: the whole file if it fits,
// otherwise the first quarter of max and the last three quarters, as a
// capped log would keep them.
func ReadCapped(path string, max int64) (Capped, error) {
	max, err := normMax(max)
	if err != nil {
		return Capped{}, err
	}
	f, err := state.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return Capped{}, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return Capped{}, err
	}
	size := fi.Size()
	if size <= max {
		b, err := io.ReadAll(io.LimitReader(f, max))
		return Capped{Head: b}, err
	}
	c := Capped{Head: make([]byte, headSize(max)), Tail: make([]byte, max-headSize(max))}
	c.Dropped = size - max
	if _, err := f.ReadAt(c.Head, 0); err != nil {
		return Capped{}, err
	}
	if _, err := f.ReadAt(c.Tail, size-int64(len(c.Tail))); err != nil {
		return Capped{}, err
	}
	return c, nil
}
