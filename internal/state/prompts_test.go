package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPromptCopies(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	old, err := s.WritePromptCopy("a", []byte("old"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.WritePromptCopy("a.b", []byte("other loop"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.WritePromptCopy("a", []byte("new"))
	if err != nil || cur == old {
		t.Fatalf("second copy %q %v (first %q)", cur, err, old)
	}
	if data, _ := os.ReadFile(old); string(data) != "old" {
		t.Errorf("a new copy changed the old one: %q", data)
	}
	s.RemovePromptCopies("a", cur)
	for path, want := range map[string]bool{old: false, cur: true, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s exists %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if _, err := s.WritePromptCopy("../x", nil); err == nil {
		t.Error("a bad loop name was taken")
	}
}
