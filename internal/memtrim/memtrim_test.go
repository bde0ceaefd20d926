package memtrim

import (
	"runtime/debug"
	"testing"
)

func TestKeepHeapSmall(t *testing.T) {
	t.Setenv("GOGC", "")
	previous := debug.SetGCPercent(100)
	defer debug.SetGCPercent(previous)
	KeepHeapSmall()
	if got := debug.SetGCPercent(100); got != smallHeapGCPercent {
		t.Fatalf("GOGC after KeepHeapSmall: %d, want %d", got, smallHeapGCPercent)
	}
	// The user's $GOGC is the user's.
	t.Setenv("GOGC", "200")
	KeepHeapSmall()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC after KeepHeapSmall with $GOGC set: %d, want it left (100)", got)
	}
}
