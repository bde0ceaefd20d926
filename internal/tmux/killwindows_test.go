package tmux

import (
	"slices"
	"sync/atomic"
	"testing"
)

// KillWindows removes every window it is given in one call under one hold
// of Exclusive; a window already gone costs the chain, not the others.
func TestKillWindowsInOneCall(t *testing.T) {
	c := server(t)
	var holds atomic.Int32
	c.Exclusive = func() func() { holds.Add(1); return func() {} }
	var ids []string
	for _, n := range []string{"a", "b", "c", "keep"} {
		id, err := c.NewWindow(WindowSpec{Session: "s", Name: n, Command: []string{"sleep", "600"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	left := func() []string {
		t.Helper()
		panes, err := c.ListPanes()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range panes {
			names = append(names, p.WindowName)
		}
		slices.Sort(names)
		return names
	}
	if errs := c.KillWindows(ids[:2]); len(errs) != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("KillWindows: %v", errs)
	}
	if got := left(); !slices.Equal(got, []string{"c", "keep"}) || holds.Load() != 1 {
		t.Fatalf("windows left %v after %d holds", got, holds.Load())
	}
	// One gone already (a) in the middle: the chain stops there, and the
	// others are removed one by one.
	if errs := c.KillWindows([]string{ids[0], ids[2]}); len(errs) != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("KillWindows with one gone: %v", errs)
	}
	if got := left(); !slices.Equal(got, []string{"keep"}) {
		t.Fatalf("windows left %v", got)
	}
}
