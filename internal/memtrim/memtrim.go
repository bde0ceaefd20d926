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

import "runtime/debug"

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
