//go:build !linux

package memtrim

// dropExecutablePages does nothing here: only Linux's /proc/self/maps
// is read to find the executable's mappings.
func dropExecutablePages() error { return nil }
