package ralph

import (
	"fmt"
	"strings"
	"testing"
)

// paneScreen draws a w x h pane whose output lines fill its top rows and
// whose other rows are blank, as capture-pane prints it.
func paneScreen(w, h int, output []string) string {
	rows := make([]string, h)
	copy(rows, output)
	for i, r := range rows {
		if len(r) > w {
			rows[i] = r[:w]
		}
	}
	return strings.Join(rows, "\n") + "\n"
}

// An agent's output that is still in the top quarter of the pane moves
// the fingerprint, at 200x50 (worker windows) and at 80x24: the blank
// rows under it must not hide it.
func TestScreenHashSeesOutputInTheTopOfThePane(t *testing.T) {
	for _, size := range []struct{ w, h int }{{200, 50}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			var out []string
			prev := screenHash(paneScreen(size.w, size.h, out))
			for i := 1; i <= size.h/4; i++ {
				out = append(out, fmt.Sprintf("\x1b[2mworking %d\x1b[0m", i))
				h := screenHash(paneScreen(size.w, size.h, out))
				if h == prev {
					t.Fatalf("line %d of %d printed, fingerprint unchanged", i, size.h)
				}
				prev = h
			}
		})
	}
}

func TestScreenHashCoversTheLastTwentyNonBlankLines(t *testing.T) {
	var out []string
	for i := 0; i < 30; i++ {
		out = append(out, fmt.Sprintf("line %d", i), "", "   ")
	}
	base := screenHash(paneScreen(200, 200, out))
	// Escapes and trailing blank rows are not part of it.
	if screenHash("\x1b[1m"+paneScreen(200, 200, out)+"\n\n\n") != base {
		t.Fatal("escape or trailing blank rows changed the fingerprint")
	}
	// Line 10 is the 20th non-blank line from the end: covered.
	changed := append([]string(nil), out...)
	changed[30] = "line 10 redrawn"
	if screenHash(paneScreen(200, 200, changed)) == base {
		t.Fatal("a change in the 20th non-blank line from the end was not seen")
	}
	// Line 9 is the 21st: not covered.
	changed = append([]string(nil), out...)
	changed[27] = "line 9 redrawn"
	if screenHash(paneScreen(200, 200, changed)) != base {
		t.Fatal("the fingerprint covers more than 20 non-blank lines")
	}
}
