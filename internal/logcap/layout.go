package logcap

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"sync"
)

// DefaultMax is the cap on a log file when the caller names none: an hour
// of a very chatty agent's recent output, and small next to a disk.
const DefaultMax int64 = 50 << 20

// MinMax is the smallest cap: below it the head, the marker and a useful
// tail do not fit.
const MinMax int64 = 1 << 10

// headDivisor: the head kept at the start of a capped log is a quarter of
// the cap; the rest holds the marker and the most recent output.
const headDivisor = 4

// keepDivisor: a rewrite keeps half of the tail room, so the next rewrite
// is at least that many bytes of output away (the copying is amortized).
const keepDivisor = 2

// alignWindow is how far past the cut a rewrite looks for a line end, so
// the kept tail starts at the beginning of a line when one is near.
const alignWindow = 4 << 10

// markerFormat is the line put where output was dropped. It states the
// head's size, which is where it sits, so a reader can check it found the
// real marker and not output that looks like it.
const markerFormat = "\n[swarm: %d bytes of output dropped here; the log keeps the first %d bytes above and the most recent output below, %d bytes at most]\n"

// markerPattern reads a marker back; compiled on first use (most
// commands never read a capped log).
var markerPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\n\[swarm: (\d+) bytes of output dropped here; the log keeps the first (\d+) bytes above and the most recent output below, (\d+) bytes at most\]\n`)
})

// markerReserve is the longest marker: room a capped file keeps for it.
var markerReserve = int64(len(Marker(math.MaxInt64, math.MaxInt64, math.MaxInt64)))

// Marker returns the line that stands for dropped bytes in a log that
// keeps its first head bytes and is capped at max.
func Marker(dropped, head, max int64) string {
	return fmt.Sprintf(markerFormat, dropped, head, max)
}

// normMax returns the cap to use for max (0 means DefaultMax).
func normMax(max int64) (int64, error) {
	if max == 0 {
		return DefaultMax, nil
	}
	if max < MinMax {
		return 0, fmt.Errorf("log cap %d is below the minimum of %d bytes", max, MinMax)
	}
	return max, nil
}

func headSize(max int64) int64 { return max / headDivisor }

// keepSize is how much of the most recent output a rewrite keeps.
func keepSize(max int64) int64 { return (max - headSize(max) - markerReserve) / keepDivisor }

// layout is where a log file's bytes sit in the stream written to it.
// Stream [0, head) is file [0, head); once capped, stream [head+dropped,
// end) is file [head+marker, size). Before the first cap the whole file is
// the stream as written (marker and dropped are 0).
type layout struct {
	head    int64
	marker  int64 // length of the marker line; 0 when not capped
	dropped int64
	size    int64
}

// end is the stream offset just past the file's last byte.
func (l layout) end() int64 { return l.size - l.marker + l.dropped }

// segment maps a stream range to a file position.
type segment struct{ from, to, file int64 }

// segments are the parts of the stream the file still holds, in order.
func (l layout) segments() []segment {
	if l.marker == 0 {
		return []segment{{0, l.size, 0}}
	}
	return []segment{{0, l.head, 0}, {l.head + l.dropped, l.end(), l.head + l.marker}}
}

// readLayout finds out how f (of the given size) is laid out for a cap
// of max: the marker, if any, is right after the head.
func readLayout(f *os.File, size, max int64) layout {
	l := layout{head: headSize(max), size: size}
	if size <= l.head {
		return l
	}
	buf := make([]byte, min(markerReserve, size-l.head))
	n, _ := f.ReadAt(buf, l.head)
	if dropped, length, ok := parseMarker(buf[:n], l.head, max); ok {
		l.marker, l.dropped = length, dropped
	}
	return l
}

// parseMarker reads a marker at the start of b and returns the bytes it
// says were dropped and its length. It must state the expected head and
// cap and be exactly what Marker writes, so output that merely resembles
// a marker is not taken for one.
func parseMarker(b []byte, head, max int64) (dropped, length int64, ok bool) {
	if !bytes.HasPrefix(b, []byte("\n[swarm: ")) {
		return 0, 0, false
	}
	m := markerPattern().FindSubmatch(b)
	if m == nil {
		return 0, 0, false
	}
	dropped, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil || dropped < 0 || string(m[0]) != Marker(dropped, head, max) {
		return 0, 0, false
	}
	return dropped, int64(len(m[0])), true
}
