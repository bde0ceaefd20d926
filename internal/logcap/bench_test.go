package logcap

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkWriter measures throughput through the cap once it is cutting:
// the file is filled to the cap before the timer starts, so every run
// includes its share of cuts (copying the head and the kept tail).
func BenchmarkWriter(b *testing.B) {
	for _, c := range []struct {
		max   int64
		chunk int
	}{
		{DefaultMax, 4 << 10},
		{DefaultMax, 32 << 10},
		{1 << 20, 4 << 10},
	} {
		b.Run(fmt.Sprintf("cap=%dMiB/chunk=%dKiB", c.max>>20, c.chunk>>10), func(b *testing.B) {
			w, err := Open(filepath.Join(b.TempDir(), "out.log"), c.max)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			chunk := stream(c.chunk)
			for written := int64(0); written < c.max; written += int64(len(chunk)) {
				w.Write(chunk)
			}
			b.SetBytes(int64(len(chunk)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := w.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
