package agent

import (
	"bufio"
	"errors"
	"io"
	"os"
)

// jsonlReader follows a JSON-lines file an agent appends to (Claude
// Code's transcript, a Codex rollout): each Read hands the complete lines
// written since the last one to line, and returns total. A line still
// being written waits for the next Read; a line longer than
// maxJSONLLine is skipped (a huge tool result, never a usage record).
type jsonlReader struct {
	find  func() string // the file's path, "" while unknown
	line  func([]byte)
	total func() Usage

	path string
	off  int64
}

// maxJSONLLine bounds one line held in memory.
const maxJSONLLine = 16 << 20

func (r *jsonlReader) Read() (Usage, error) {
	if r.path == "" {
		r.path = r.find()
		if r.path == "" {
			return r.total(), nil
		}
	}
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return r.total(), nil
	}
	if err != nil {
		return r.total(), err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if _, err := f.Seek(r.off, io.SeekStart); err != nil {
		return r.total(), err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		n, line, err := readLine(br)
		if err != nil {
			break // EOF, or a line not yet complete: read again later
		}
		r.off += n
		if line != nil {
			r.line(line)
		}
	}
	return r.total(), nil
}

// readLine reads one complete line: its length with the newline, and the
// line (nil when it was longer than maxJSONLLine). An error (io.EOF)
// means no complete line is there; nothing is consumed then as far as
// the caller's offset goes.
func readLine(br *bufio.Reader) (int64, []byte, error) {
	var buf []byte
	var n int64
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !long {
			if len(buf)+len(chunk) > maxJSONLLine {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if long {
				return n, nil, nil
			}
			return n, buf[:len(buf)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return 0, nil, err
		}
	}
}
