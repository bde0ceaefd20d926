package logcap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testMax = 1 << 10

// stream is deterministic output: numbered lines of varying length, so a
// byte's value tells where in the stream it came from.
func stream(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d %s\n", i, strings.Repeat("x", i%37))
	}
	return b.Bytes()[:n]
}

// chunks cuts s into pieces of 1..maxChunk bytes.
func chunks(s []byte, maxChunk int, seed int64) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	var out [][]byte
	for len(s) > 0 {
		k := min(len(s), 1+rng.Intn(maxChunk))
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// checkFile asserts the capped file is head + one marker + the stream's
// end, within the cap, and returns the bytes dropped.
func checkFile(t *testing.T, path string, written []byte, max int64) int64 {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(file)) > max {
		t.Fatalf("file is %d bytes, cap %d", len(file), max)
	}
	if int64(len(written)) <= max {
		if !bytes.Equal(file, written) {
			t.Fatalf("uncapped file differs from what was written")
		}
		return 0
	}
	head := headSize(max)
	if !bytes.Equal(file[:head], written[:head]) {
		t.Fatalf("head not kept: %q", file[:head])
	}
	if n := bytes.Count(file, []byte("[swarm: ")); n != 1 {
		t.Fatalf("%d markers", n)
	}
	dropped, mlen, ok := parseMarker(file[head:], head, max)
	if !ok {
		t.Fatalf("no marker after the head: %q", file[head:min(int64(len(file)), head+200)])
	}
	tail := file[head+mlen:]
	if int64(len(written)) != head+dropped+int64(len(tail)) {
		t.Fatalf("marker says %d dropped; head %d + tail %d + dropped != %d written", dropped, head, len(tail), len(written))
	}
	if !bytes.HasSuffix(written, tail) {
		t.Fatalf("tail is not the end of the output: %q", tail)
	}
	if int64(len(tail)) < keepSize(max)*3/4 {
		t.Fatalf("tail only %d bytes", len(tail))
	}
	return dropped
}

func TestWriterCapsKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	for _, maxChunk := range []int{1, 7, 100, 900, 5000} {
		path := filepath.Join(t.TempDir(), "out.log")
		w, err := Open(path, testMax)
		if err != nil {
			t.Fatal(err)
		}
		data := stream(50_000)
		var written []byte
		for _, c := range chunks(data, maxChunk, int64(maxChunk)) {
			if n, err := w.Write(c); err != nil || n != len(c) {
				t.Fatalf("Write = %d, %v", n, err)
			}
			written = append(written, c...)
			if fi, _ := os.Stat(path); fi.Size() > testMax {
				t.Fatalf("chunks of %d: file grew to %d", maxChunk, fi.Size())
			}
		}
		w.Close()
		if dropped := checkFile(t, path, written, testMax); dropped == 0 {
			t.Errorf("chunks of %d: nothing dropped", maxChunk)
		}
		if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte(data[len(data)-20:])) {
			t.Errorf("chunks of %d: last bytes lost", maxChunk)
		}
	}
}

// readerCheck follows a Reader and asserts each read returns exactly the
// stream bytes after its last offset, less a dropped range that the file
// no longer holds.
type readerCheck struct {
	t      *testing.T
	r      *Reader
	stream []byte
	head   int64
}

func (c *readerCheck) read() []byte {
	c.t.Helper()
	off0, lost0 := c.r.Offset(), c.r.Lost()
	got, err := c.r.ReadNew()
	if err != nil {
		c.t.Fatal(err)
	}
	lost := c.r.Lost() - lost0
	want := c.stream[off0:c.r.Offset()]
	if lost > 0 {
		gap := max(off0, c.head)
		want = append(append([]byte{}, c.stream[off0:gap]...), c.stream[gap+lost:c.r.Offset()]...)
	}
	if !bytes.Equal(got, want) {
		c.t.Fatalf("read at %d (lost %d): got %q, want %q", off0, lost, got, want)
	}
	return got
}

// A reader that keeps up sees every byte exactly once, across cuts.
func TestReaderKeepingUpSeesEveryByteOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	w, err := Open(path, testMax)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data := stream(40_000)
	c := &readerCheck{t: t, r: NewReader(path, testMax), stream: data, head: headSize(testMax)}
	var seen []byte
	for _, ch := range chunks(data, 200, 1) { // under 3/4 of what a cut keeps
		w.Write(ch)
		seen = append(seen, c.read()...)
	}
	if !bytes.Equal(seen, data) || c.r.Lost() != 0 {
		t.Fatalf("reader saw %d of %d bytes, lost %d", len(seen), len(data), c.r.Lost())
	}
	if n, _ := Size(path, testMax); n != int64(len(data)) {
		t.Errorf("Size = %d, want %d", n, len(data))
	}
}

// A reader that falls behind skips what was dropped, never repeats, and
// always catches up with the newest byte.
func TestReaderFallingBehindSkipsOnlyDroppedBytes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	w, _ := Open(path, testMax)
	defer w.Close()
	data := stream(60_000)
	c := &readerCheck{t: t, r: NewReader(path, testMax), stream: data, head: headSize(testMax)}
	written := 0
	for i, ch := range chunks(data, 300, 2) {
		w.Write(ch)
		written += len(ch)
		if i%7 == 0 {
			c.read()
			if c.r.Offset() != int64(written) {
				t.Fatalf("reader at %d, %d written", c.r.Offset(), written)
			}
		}
	}
	c.read()
	if c.r.Lost() == 0 {
		t.Error("a slow reader lost nothing: the test did not cut under it")
	}
	checkFile(t, path, data, testMax)
}

// Writer and reader in parallel, through Pipe: the reader polls while
// cuts happen and must end with the final line, never seeing a file over
// the cap or bytes out of place.
func TestPipeWithLiveReader(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	data := append(stream(300_000), []byte("<promise>COMPLETE</promise>\n")...)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Pipe(pr, path, testMax) }()
	go func() {
		for _, ch := range chunks(data, 3000, 3) {
			pw.Write(ch)
		}
		pw.Close()
	}()
	c := &readerCheck{t: t, r: NewReader(path, testMax), stream: data, head: headSize(testMax)}
	var last []byte
	finished := false
	for c.r.Offset() < int64(len(data)) {
		if fi, err := os.Stat(path); err == nil && fi.Size() > testMax {
			t.Fatalf("file at %d bytes", fi.Size())
		}
		if got := c.read(); len(got) > 0 {
			last = got
		}
		if !finished {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				finished = true
			default:
			}
		}
	}
	if !bytes.HasSuffix(last, []byte("<promise>COMPLETE</promise>\n")) {
		t.Fatalf("last read %q", last)
	}
	if !finished {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	checkFile(t, path, data, testMax)
}

// A file over the cap (written by `cat >>` before swarm capped logs) is cut
// when opened; an already capped file is continued, keeping its head and
// counting on from its marker.
func TestOpenExistingFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	data := stream(20_000)
	os.WriteFile(path, data[:10_000], 0o600)
	w, err := Open(path, testMax)
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, data[:10_000], testMax)
	w.Write(data[10_000:15_000])
	w.Close()
	w, _ = Open(path, testMax)
	w.Write(data[15_000:])
	w.Close()
	checkFile(t, path, data, testMax)
	if n, _ := Size(path, testMax); n != int64(len(data)) {
		t.Errorf("Size = %d, want %d", n, len(data))
	}
}

// A crash during a cut leaves the temporary file; the log itself is the
// old or the new one, and the next Open clears the leftover.
func TestLeftoverFromACrashedCutIsRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	os.WriteFile(tmpPath(path), bytes.Repeat([]byte("z"), 5000), 0o600)
	w, err := Open(path, testMax)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := os.Stat(tmpPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover kept: %v", err)
	}
	data := stream(5000)
	w.Write(data)
	checkFile(t, path, data, testMax)
}

// Output that looks like a marker is output unless it is the exact marker
// at the head's end.
func TestLookalikeMarkerIsOutput(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	head := headSize(testMax)
	fake := []byte(strings.Repeat("h", int(head)) + Marker(5, head+1, testMax) + "after\n")
	os.WriteFile(path, fake, 0o600)
	r := NewReader(path, testMax)
	if got, _ := r.ReadNew(); !bytes.Equal(got, fake) {
		t.Fatalf("read %q", got)
	}
	fake2 := []byte(strings.Repeat("h", int(head)-1) + Marker(5, head, testMax))
	os.WriteFile(path, fake2, 0o600)
	if n, _ := Size(path, testMax); n != int64(len(fake2)) {
		t.Fatalf("misplaced marker taken as one: Size %d", n)
	}
}

func TestReaderEdges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.log")
	r := NewReader(path, testMax)
	if got, err := r.ReadNew(); got != nil || err != nil {
		t.Fatalf("missing file: %q %v", got, err)
	}
	if n, err := Size(path, testMax); n != 0 || err != nil {
		t.Fatalf("Size(missing) = %d %v", n, err)
	}
	os.WriteFile(path, []byte("hello\n"), 0o600)
	r.ReadNew()
	os.WriteFile(path, []byte("new\n"), 0o600) // truncated by someone else
	if got, _ := r.ReadNew(); string(got) != "new\n" {
		t.Fatalf("after truncation: %q", got)
	}
	if _, err := Open(path, MinMax-1); err == nil {
		t.Error("cap below MinMax accepted")
	}
}

func TestReaderReadAt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	w, _ := Open(path, testMax)
	data := stream(10_000)
	w.Write(data)
	w.Close()
	r := NewReader(path, testMax)
	head := headSize(testMax)
	buf := make([]byte, 50)
	if n, err := r.ReadAt(buf, head-20); n != 20 || !errors.Is(err, ErrDropped) || !bytes.Equal(buf[:n], data[head-20:head]) {
		t.Fatalf("ReadAt end of head = %d %v %q", n, err, buf[:n])
	}
	if _, err := r.ReadAt(buf, head+1); !errors.Is(err, ErrDropped) {
		t.Fatalf("ReadAt dropped = %v", err)
	}
	n, err := r.ReadAt(buf, int64(len(data))-10)
	if n != 10 || err != io.EOF || !bytes.Equal(buf[:n], data[len(data)-10:]) {
		t.Fatalf("ReadAt end = %d %v %q", n, err, buf[:n])
	}
}

func TestReadCapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "check.out")
	data := stream(10_000)
	os.WriteFile(path, data, 0o600)
	c, err := ReadCapped(path, testMax)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Head, data[:testMax/4]) || !bytes.Equal(c.Tail, data[len(data)-testMax*3/4:]) || c.Dropped != int64(len(data)-testMax) {
		t.Fatalf("ReadCapped: head %d tail %d dropped %d", len(c.Head), len(c.Tail), c.Dropped)
	}
	if b := c.Bytes(testMax); bytes.Count(b, []byte("[swarm: ")) != 1 || !bytes.HasSuffix(b, data[len(data)-100:]) {
		t.Fatalf("Bytes = %q", b)
	}
	os.WriteFile(path, data[:500], 0o600)
	if c, _ := ReadCapped(path, testMax); !bytes.Equal(c.Bytes(testMax), data[:500]) || c.Dropped != 0 {
		t.Fatalf("small file: %+v", c)
	}
}

// Pipe into a log that cannot be opened still drains its input, so the
// worker writing to it is not killed by a broken pipe.
func TestPipeDrainsWhenTheLogCannotBeOpened(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing-dir", "out.log")
	r := &countingReader{r: bytes.NewReader(stream(100_000))}
	if err := Pipe(r, path, testMax); err == nil {
		t.Fatal("no error")
	}
	if r.n != 100_000 {
		t.Fatalf("drained %d bytes", r.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzWriter drives the writer with arbitrary write sizes and caps and
// checks the file's invariants after each write.
func FuzzWriter(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 255, 7}, uint16(0))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, uint16(3000))
	f.Fuzz(func(t *testing.T, sizes []byte, extra uint16) {
		max := MinMax + int64(extra)
		path := filepath.Join(t.TempDir(), "out.log")
		w, err := Open(path, max)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		data := stream(len(sizes) * 40 * 255)
		off := 0
		for _, s := range sizes {
			k := int(s) * 40
			w.Write(data[off : off+k])
			off += k
		}
		checkFile(t, path, data[:off], max)
	})
}
