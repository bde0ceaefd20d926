package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/swarmtools/swarm/internal/ready"
)

// FuzzJudge: a screen is whatever an agent (or a program under it) printed,
// so every profile must judge any bytes without panicking, quote only
// screen text as the deciding line, and count turns it can see.
func FuzzJudge(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && len(b) < 64<<10 {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "❯ ", "● API Error: 529\n❯ ", "You've hit your session limit · resets 9am (UTC)", "\x1b[31m✻ Thinking…\x1b[0m (esc to interrupt)", "\xff\xfe❯"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, screen string) {
		for _, name := range Names() {
			p, _ := Lookup(name)
			v := p.Judge(screen, now)
			if v.Turns < 0 {
				t.Fatalf("%s: negative turn count %d", name, v.Turns)
			}
			if v.Line != "" && utf8.ValidString(screen) && !strings.Contains(ready.StripANSI(screen), firstLine(v.Line)) {
				t.Fatalf("%s: deciding line %q is not on the screen", name, v.Line)
			}
			p.Ready(screen)
			p.Stuck(screen)
			p.FatalIn(screen)
		}
	})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
