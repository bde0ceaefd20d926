// Command trimpie calls memtrim.Trim in a position-independent build,
// whose type descriptors and itabs the dynamic loader relocated into a
// read-only mapping (GNU_RELRO), and then uses them: TestTrimInAPIEBuild
// runs it. Dropped, those pages read back unrelocated and the program
// crashes at its next allocation.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"

	"github.com/swarmtools/swarm/internal/memtrim"
)

type named interface{ name() string }

type worker struct{ n string }

func (w worker) name() string { return w.n }

func main() {
	if err := memtrim.Trim(); err != nil {
		fmt.Fprintln(os.Stderr, "trim:", err)
		os.Exit(1)
	}
	m := map[string]any{}
	var all []named
	for i := range 1000 {
		w := worker{fmt.Sprintf("w%d", i)}
		m[w.n] = w
		all = append(all, w)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name() < all[j].name() })
	runtime.GC()
	fmt.Println("ok", len(m), all[0].name())
}
