package hint

import (
	"errors"
	"fmt"
	"testing"
)

func TestHint(t *testing.T) {
	base := errors.New("worker 'w1' already exists")
	err := Wrap(base, "swarm clean %s, or --replace", "w1")
	if err.Error() != base.Error() {
		t.Fatalf("message changed: %q", err)
	}
	if !errors.Is(err, base) {
		t.Fatal("cause lost")
	}
	wrapped := fmt.Errorf("spawn: %w", err)
	if got := Of(wrapped); got != "swarm clean w1, or --replace" {
		t.Fatalf("hint = %q", got)
	}
	if Of(base) != "" || Wrap(nil, "x") != nil {
		t.Fatal("no hint expected")
	}
	if e := Errorf("do this", "bad %d", 1); e.Error() != "bad 1" || Of(e) != "do this" {
		t.Fatalf("Errorf: %v / %q", e, Of(e))
	}
}
