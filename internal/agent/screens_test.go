package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The screens of codex, gemini, aider and opencode under testdata/<agent>
// are written after the strings of each CLI's source, not captured (see
// each folder's README.md): these tests pin what the profiles make of
// the layouts those sources draw.

func agentScreen(t *testing.T, agent, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", agent, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// screenCase is one screen and the verdict it must get.
type screenCase struct {
	file  string
	state State
	kind  string        // dialog kind
	line  string        // prefix of Verdict.Line
	turns int           // end-of-turn lines on screen
	reset time.Duration // limits: reset after now (0: none given)
}

func judgeScreens(t *testing.T, p *Profile, agent string, cases []screenCase) {
	t.Helper()
	for _, c := range cases {
		screen := agentScreen(t, agent, c.file)
		v := p.Judge(screen, now)
		if v.State != c.state || v.Kind != c.kind || !strings.HasPrefix(v.Line, c.line) || v.Turns != c.turns {
			t.Errorf("%s/%s: got %+v; want state %q kind %q line %q turns %d", agent, c.file, v, c.state, c.kind, c.line, c.turns)
			continue
		}
		switch c.state {
		case Dialog:
			if v.Hint == "" {
				t.Errorf("%s/%s: a %s without a hint", agent, c.file, v.Kind)
			}
		case Limited:
			want := time.Time{}
			if c.reset > 0 {
				want = now.Add(c.reset)
			}
			if !v.Reset.Equal(want) {
				t.Errorf("%s/%s: reset %s, want %s", agent, c.file, v.Reset, want)
			}
		}
		// Only an idle input box is the moment to type a prompt.
		if got, want := p.Ready(screen), c.state == Idle; got != want && c.state != Error && c.state != Limited {
			t.Errorf("%s/%s: Ready = %v, want %v", agent, c.file, got, want)
		}
	}
}
