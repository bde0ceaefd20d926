package logcap

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Buffer holds what ReadCapped reads back from a file of the whole
// output, whatever the sizes of the writes: head, tail and dropped count.
func TestBufferMatchesReadCapped(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 100, testMax / 4, testMax, testMax + 1, 3 * testMax, 50 * testMax} {
		for _, chunk := range []int{1, 7, 300, 5 * testMax} {
			data := stream(n)
			b, err := NewBuffer(testMax)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chunks(data, chunk, int64(n+chunk)) {
				if k, err := b.Write(c); k != len(c) || err != nil {
					t.Fatalf("write = %d, %v", k, err)
				}
			}
			path := filepath.Join(t.TempDir(), "all")
			os.WriteFile(path, data, 0o600)
			want, err := ReadCapped(path, testMax)
			if err != nil {
				t.Fatal(err)
			}
			got := b.Capped()
			if !bytes.Equal(got.Bytes(testMax), want.Bytes(testMax)) || got.Dropped != want.Dropped {
				t.Errorf("n=%d chunk=%d: buffer holds %d+%d bytes, dropped %d; want %d+%d, dropped %d",
					n, chunk, len(got.Head), len(got.Tail), got.Dropped, len(want.Head), len(want.Tail), want.Dropped)
			}
			if int64(len(got.Head)+len(got.Tail)) > testMax {
				t.Errorf("n=%d chunk=%d: buffer holds %d bytes, over the cap", n, chunk, len(got.Head)+len(got.Tail))
			}
		}
	}
}

// Limit passes the first n bytes, says once that the rest is dropped, and
// reports every write whole.
func TestLimit(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := Limit(&out, 10, "hook")
	for _, s := range []string{"12345", "6789", "abc", strings.Repeat("z", 1000)} {
		if k, err := w.Write([]byte(s)); k != len(s) || err != nil {
			t.Fatalf("write %q = %d, %v", s, k, err)
		}
	}
	want := "123456789a\n[swarm: hook: output cut here; the rest is dropped]\n"
	if out.String() != want {
		t.Errorf("out = %q, want %q", out.String(), want)
	}
}

// The log sink (swarm _logpipe, the target of pipe-pane and of process
// workers' output) never writes through a symbolic link planted at its
// log: the output is drained and dropped, the link's target untouched
// (issue 16, item 2).
func TestPipeNeverFollowsASymlink(t *testing.T) {
	t.Parallel()
	for _, exists := range []bool{false, true} {
		dir := t.TempDir()
		victim := filepath.Join(dir, "victim")
		if exists {
			os.WriteFile(victim, []byte("precious\n"), 0o600)
		}
		log := filepath.Join(dir, "out.log")
		os.Symlink(victim, log)
		r := &countingReader{r: bytes.NewReader(stream(10_000))}
		if err := Pipe(r, log, testMax); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("err = %v", err)
		}
		if r.n != 10_000 {
			t.Errorf("drained %d bytes", r.n)
		}
		data, err := os.ReadFile(victim)
		if exists && string(data) != "precious\n" || !exists && err == nil {
			t.Errorf("target holds %q (%v)", data, err)
		}
		if _, err := Open(log, testMax); err == nil {
			t.Errorf("Open through the link worked")
		}
		if _, err := ReadCapped(log, testMax); err == nil && exists {
			t.Errorf("ReadCapped read through the link")
		}
	}
}
