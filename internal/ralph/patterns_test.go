package ralph

import (
	"testing"
)

// A loop's --limit-pattern and --ready-pattern are compiled once for the
// loop, not again for every iteration.
func TestUserPatternsCompiledOncePerLoop(t *testing.T) {
	l := newFakeLoop(t, nil, Options{LimitPatterns: []string{`(?i)quota gone`}, ReadyPatterns: []string{`all set`}})
	w, err := l.m.Get("w")
	if err != nil {
		t.Fatal(err)
	}
	first := l.e.newSession(l.state(), w, 1)
	second := l.e.newSession(l.state(), w, 2)
	if len(first.limits) != 1 || len(first.readyExtra) != 1 {
		t.Fatalf("patterns not compiled: %v %v", first.limits, first.readyExtra)
	}
	if second.limits[0] != first.limits[0] || second.readyExtra[0] != first.readyExtra[0] {
		t.Error("the loop's patterns were compiled again for its second iteration")
	}
}
