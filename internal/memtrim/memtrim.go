// Package memtrim gives back the memory a long-running swarm process
// used only to start.
//
// A ralph monitor lives for hours; its start-up (package initialisation
// of about a hundred packages, the command line, the first spawn)
// touches most of the swarm binary, and the kernel maps 64 KB around
// each page touched (fault-around): a monitor kept ten of its 13 MB of
// resident memory in pages of the binary it never used again, and four
// in a heap that start-up had grown. Trim drops both; what the monitor
// uses afterwards is mapped again at its next use, from the page cache
// (a minor fault), and stays.
package memtrim

import (
	"os"
	"runtime/debug"
)

// Trim returns the heap's free memory to the operating system and, on
// Linux, drops the pages of the executable's read-only mappings (its code
// and read-only data) from the process's page tables. The pages stay in
// the page cache, shared with every other swarm process. Writable
// mappings (the program's variables) are left alone, and so is any
// read-only mapping holding private copies of its pages (relocations of
// a position-independent build, a debugger's breakpoints). It costs a
// garbage collection, a read of /proc/self/smaps (1-4 ms) and minor
// faults afterwards: callers call it after start-up work, not per poll.
func Trim() error {
	debug.FreeOSMemory()
	return dropExecutablePages()
}

// KeepHeapSmall sets the collector's target for a process whose live
// heap is small and that runs for hours (a monitor: a few hundred KB
// live): GOGC 25 instead of 100, unless $GOGC says otherwise. The
// default lets the heap grow to 4 MB (its smallest goal) between
// collections, all of it resident; measured on ten monitors of busy
// agents over 60 s, RSS median 13.0-13.3 MiB with the default, 10.8-11.5
// MiB with 25, CPU within the noise (a collection of such a heap is well
// under a millisecond).
func KeepHeapSmall() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(smallHeapGCPercent)
	}
}

// smallHeapGCPercent is KeepHeapSmall's GOGC.
const smallHeapGCPercent = 25
