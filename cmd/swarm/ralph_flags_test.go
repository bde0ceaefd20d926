package main

import (
	"regexp"
	"testing"
)

// completionWord accepts exactly what internal/ralph's check,
// ^[A-Za-z0-9_.-]+$, accepts.
func TestCompletionWord(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	for _, s := range []string{"COMPLETE", "done_1.0-x", "a", "", "ALL DONE", "a\n", "é", "a/b", "<promise>", "a\xff", "-", "..."} {
		if got, want := completionWord(s), re.MatchString(s); got != want {
			t.Errorf("completionWord(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
