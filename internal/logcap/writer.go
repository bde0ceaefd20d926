// Package logcap keeps log files bounded. A capped log keeps the first
// part of the output (how the agent started) and the most recent part (how
// it is doing, and the completion tag it printed last), with one marker
// line between them saying how much was dropped:
//
//	<head>\n[swarm: N bytes of output dropped here; the log keeps ...]\n<tail>
//
// The file never exceeds the cap. It is cut by writing the head, a new
// marker and the most recent output to a temporary file and renaming it
// over the log, so a crash leaves the old or the new file, each within the
// cap, and a reader that opens the log sees one consistent file. Readers
// that follow the log while it is written use a Reader, which counts
// offsets in the stream written (not in the file) and so neither misses
// nor repeats bytes across a cut.
package logcap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/swarmtools/swarm/internal/state"
)

// Writer appends to a log file, capping it. It must be the file's only
// writer. Memory use is constant: the most recent output is kept in the
// file itself and copied from it (copy_file_range) when the file is cut.
type Writer struct {
	path string
	max  int64
	keep int64
	f    *os.File
	l    layout
}

// tmpPath is where a cut is prepared; a crash may leave it behind, and the
// next Open removes it.
func tmpPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".logcap-tmp")
}

// Open opens (creating it if needed) the log at path for appending, capped
// at max bytes (0: DefaultMax). A file already over the cap, written by
// something else, is cut at once.
func Open(path string, max int64) (*Writer, error) {
	max, err := normMax(max)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(tmpPath(path)) // a crashed cut's, if any: one left makes the next cut's O_EXCL open fail, which is reported
	// Never through a symbolic link, and only a regular file of the
	// user's: a link planted at a log would have its output appended to
	// (or its target cut) wherever it points.
	f, err := state.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	w := &Writer{path: path, max: max, keep: keepSize(max), f: f}
	w.l = readLayout(f, fi.Size(), max)
	if w.l.size > max {
		if err := w.cut(nil); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
	return w, nil
}

// Write appends p, cutting the file first when p does not fit. It reports
// all of p written when the part of it that is kept is written: bytes that
// are dropped at once never reach the file.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		var err error
		switch {
		case int64(len(p)) <= w.max-w.l.size:
			err = w.append(p)
			p = nil
		case w.l.marker == 0 && w.l.size < w.l.head:
			// The head is not full yet: it takes the first bytes.
			k := w.l.head - w.l.size
			err = w.append(p[:k])
			p = p[k:]
		default:
			err = w.cut(p)
			p = nil
		}
		if err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

func (w *Writer) append(p []byte) error {
	k, err := w.f.WriteAt(p, w.l.size)
	w.l.size += int64(k)
	return err
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// cut replaces the file by its head, a marker and the last bytes of what
// follows the head, pending included: the tail already in the file, then
// pending. The new file is built aside and renamed over the log.
func (w *Writer) cut(pending []byte) (err error) {
	l := w.l
	tailAt := l.head + l.marker
	oldTail := l.size - tailAt
	total := oldTail + int64(len(pending))
	skip := w.alignedSkip(tailAt, oldTail, pending, max(0, total-w.keep))
	next := layout{head: l.head, dropped: l.dropped + skip}
	marker := Marker(next.dropped, l.head, w.max)
	next.marker = int64(len(marker))

	tmp, err := state.OpenFile(tmpPath(w.path), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tmp.Close(), os.Remove(tmp.Name()))
		}
	}()
	if err = copyRange(tmp, w.f, 0, l.head); err != nil {
		return err
	}
	if _, err = io.WriteString(tmp, marker); err != nil {
		return err
	}
	if skip < oldTail {
		if err = copyRange(tmp, w.f, tailAt+skip, oldTail-skip); err != nil {
			return err
		}
	}
	if _, err = tmp.Write(pending[max(0, skip-oldTail):]); err != nil {
		return err
	}
	next.size = l.head + next.marker + total - skip
	if err = os.Rename(tmp.Name(), w.path); err != nil {
		return err
	}
	_ = w.f.Close() // the file renamed over: what it held is in tmp now
	w.f, w.l = tmp, next
	return nil
}

// copyRange copies n bytes of src from off to dst's current offset, in the
// kernel where it can (io.CopyN of a file reaches copy_file_range).
func copyRange(dst, src *os.File, off, n int64) error {
	if _, err := src.Seek(off, io.SeekStart); err != nil {
		return err
	}
	k, err := io.CopyN(dst, src, n)
	if err == io.EOF {
		err = fmt.Errorf("log file shrank while being cut: %d of %d bytes", k, n)
	}
	return err
}

// alignedSkip moves the cut point skip (in the bytes after the head: the
// file's tail from tailAt, then pending) to just past a line end within
// alignWindow, so the kept tail starts at a line; it keeps at least three
// quarters of what it was to keep.
func (w *Writer) alignedSkip(tailAt, oldTail int64, pending []byte, skip int64) int64 {
	window := min(int64(alignWindow), w.keep/4)
	buf := make([]byte, 0, window)
	if skip < oldTail {
		b := make([]byte, min(window, oldTail-skip))
		k, _ := w.f.ReadAt(b, tailAt+skip)
		buf = append(buf, b[:k]...)
	}
	if rest := window - int64(len(buf)); rest > 0 {
		from := max(0, skip+int64(len(buf))-oldTail)
		if from < int64(len(pending)) {
			buf = append(buf, pending[from:min(int64(len(pending)), from+rest)]...)
		}
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		return skip + int64(i) + 1
	}
	return skip
}

// Pipe copies r into the log at path, capped at max bytes (0:
// DefaultMax), until r ends: the body of `swarm _logpipe`, the target of
// tmux pipe-pane and the sink of a process worker's stdout and stderr.
// Each chunk is written as it arrives, so readers see output live. If the
// log cannot be opened or written, Pipe keeps reading and discarding:
// a full disk must not stop the worker with a broken pipe. The first such
// error is returned at the end.
func Pipe(r io.Reader, path string, max int64) error {
	w, openErr := Open(path, max)
	if openErr != nil {
		_, err := io.Copy(io.Discard, r)
		return errors.Join(openErr, err)
	}
	var first error
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil && first == nil {
				first = werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			first = errors.Join(first, err)
			break
		}
	}
	return errors.Join(first, w.Close())
}
