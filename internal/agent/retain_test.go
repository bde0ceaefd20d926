package agent

import (
	"regexp"
	"runtime"
	"testing"
	"time"
)

// Patterns handed to a profile (a loop's --limit-pattern and
// --ready-pattern) are not kept once the caller drops them: a
// long-running monitor that compiles them again must not accumulate
// anything per compiled pattern (a process-wide prefilter cache keyed by
// pattern used to keep every one).
func TestHandedPatternsAreNotKept(t *testing.T) {
	collected := make(chan struct{})
	func() {
		limit := regexp.MustCompile(`(?i)quota gone`)
		readyRe := regexp.MustCompile(`(?i)all set`)
		runtime.SetFinalizer(limit, func(*regexp.Regexp) { close(collected) })
		for _, name := range Names() {
			p, _ := Lookup(name)
			if v := p.Judge("QUOTA GONE, come back later\n", now, limit); v.State != Limited {
				t.Errorf("%s: extra limit not seen: %+v", name, v)
			}
			p.Ready("All set\n", readyRe)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("a --limit-pattern regexp is still referenced after the judgement: something keeps it")
		}
	}
}
