package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// An agent's events file (ralph/NAME/output/iteration-NNNN.events.jsonl)
// holds one JSON line per event the agent reported through its hooks
// (swarm _event, docs/agents.md); the loop reads it as it grows. Many
// short-lived hook processes append to it, so each line goes in one
// O_APPEND write, and the file is capped: an agent that runs thousands of
// tools cannot fill the disk.

// Caps of an events file and of one line in it.
const (
	// MaxEventsFile caps an events file. Routine events (a tool about to
	// run) stop at MaxEventsFile-eventsReserve; the reserve is for the
	// events that end or hold a turn (AppendEvent's urgent), so a turn
	// of many tools still reports its end.
	MaxEventsFile = 4 << 20
	eventsReserve = 256 << 10
	// MaxRoutineEvents is where routine events stop.
	MaxRoutineEvents = MaxEventsFile - eventsReserve
	// MaxEventLine caps one line (an agent's last message is cut to fit
	// before the line is made).
	MaxEventLine = 64 << 10
)

// ErrEventsFull is returned by AppendEvent when the line does not fit in
// the file's cap.
var ErrEventsFull = errors.New("the events file is full")

// AppendEvent appends line (one JSON object, without its newline) to the
// events file at path, created 0600 if missing, never through a symbolic
// link and only to a regular file of the user's (OpenFile). A line that
// would take the file past its cap is refused with ErrEventsFull; urgent
// lines may use the last eventsReserve bytes, routine ones may not.
func AppendEvent(path string, line []byte, urgent bool) (err error) {
	if len(line) == 0 || len(line) >= MaxEventLine || bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("cannot write %s: an event line must be one line of at most %d bytes", path, MaxEventLine-1)
	}
	f, err := OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, filePerm)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }() // a failed close may have lost the line
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	limit := int64(MaxEventsFile)
	if !urgent {
		limit = MaxRoutineEvents
	}
	if fi.Size()+int64(len(line))+1 > limit {
		return fmt.Errorf("%w (%s, %d bytes)", ErrEventsFull, path, fi.Size())
	}
	// One write: lines from concurrent hooks never interleave.
	if _, err := f.Write(append(line[:len(line):len(line)], '\n')); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// ReadEvents returns the complete lines of the events file at path from
// byte offset off on (at most maxEventsRead bytes of them), and the offset
// after the last one returned. A missing file holds no lines; a line still
// being written is left for the next read.
func ReadEvents(path string, off int64) (lines [][]byte, next int64, err error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, off, nil
		}
		return nil, off, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if fi, err := f.Stat(); err == nil && fi.Size() < off {
		// The file was replaced or cut (a new session's): read it from
		// its start, never from the middle of a line.
		off = 0
	}
	buf := make([]byte, maxEventsRead)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, off, err
	}
	data := buf[:n]
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, off, nil
	}
	for _, l := range bytes.Split(data[:end], []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, off + int64(end) + 1, nil
}

// FileStamp is what changes when a file is written: its size and its
// modification time (a capped log rewritten to the same size has a new
// time). The zero FileStamp is a missing or irregular file.
type FileStamp struct {
	Size int64
	Mod  time.Time
}

// StampFile stamps the file at path: one lstat, no open, for a watch that
// looks every 100 ms whether the agent wrote (its output log).
func StampFile(path string) FileStamp {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return FileStamp{}
	}
	return FileStamp{Size: fi.Size(), Mod: fi.ModTime()}
}

// maxEventsRead bounds one ReadEvents: the rest is read by the next.
const maxEventsRead = 1 << 20

// EventsSize is the size of the events file at path (0 when missing): a
// stat, no read, for a watch that looks often whether it grew.
func EventsSize(path string) int64 { return StampFile(path).Size }
