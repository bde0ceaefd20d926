package prefilter

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The filter never rejects a text its pattern matches (folding included),
// and does reject texts lacking the pattern's literals.
func TestFilter(t *testing.T) {
	cases := []struct {
		expr     string
		match    []string
		rejected []string // texts the filter alone rules out
	}{
		{`(?i)esc to interrupt`, []string{"(ESC TO INTERRUPT)", "eſc to interrupt", "Esc to interrupt"}, []string{"❯ ", "escape"}},
		{`(?i)kelvin`, []string{"\u212aelvin", "KELVIN"}, []string{"kelvi"}},
		{`^[●⏺]\s+API Error`, []string{"● API Error: 529", "⏺  API Error"}, []string{"● api error", "no error"}},
		{`(?i)usage limit reached|limit reached\s*[∙·•|]\s*resets?|weekly limit reached`, []string{"Usage limit reached", "limit reached · resets 3pm", "WEEKLY LIMIT REACHED"}, []string{"limit", "nothing"}},
		{`(?i)^\s*[✻✶✳✢✽*·]\s+.*(…|retrying in \d+\s*s)`, []string{"✻ Thinking…", "· Retrying in 3s"}, []string{"Thinking", "plain"}},
		{`^[\s│]*❯(\s|\x{00a0}|$)`, []string{"❯ ", "│ ❯"}, []string{"> "}},
		{`(?i)(?:5|five)-hour limit reached`, []string{"5-hour limit reached", "FIVE-HOUR LIMIT REACHED"}, []string{"5-hour limit"}},
		{`x*y?`, []string{"", "anything"}, nil},            // no literal: always runs
		{`a{0,3}b`, []string{"b", "aab"}, []string{"aaa"}}, // the optional part gives none
		{`\d+\. \S`, []string{"1. Yes"}, []string{"Yes"}},
		{`(?is)running in bypass permissions mode.*no, exit`, []string{"Running in Bypass Permissions mode\n1. No, exit"}, []string{"bypass"}},
		{`(?i)déjà vu`, []string{"DÉJÀ VU"}, []string{"deja vu"}},
	}
	for _, c := range cases {
		re := regexp.MustCompile(c.expr)
		for _, s := range c.match {
			if !re.MatchString(s) {
				t.Fatalf("bad case: %q does not match %q", c.expr, s)
			}
			if !matchString(re, s) {
				t.Errorf("%q: filter rejected matching %q", c.expr, s)
			}
		}
		for _, s := range c.rejected {
			if set := NewSet(re); set.mayMatch(re, NewText(s)) {
				t.Errorf("%q: filter let %q through (filter %+v)", c.expr, s, set.filterFor(re))
			}
		}
	}
}

// FindIndex agrees with regexp's.
func TestFindIndex(t *testing.T) {
	re := regexp.MustCompile(`(?i)select login method:`)
	text := "Welcome\nSelect login method:\n❯ 1. Claude account"
	set := NewSet(re)
	got, want := set.FindIndex(re, NewText(text)), re.FindStringIndex(text)
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("FindIndex = %v, want %v", got, want)
	}
	if set.FindIndex(re, NewText("Welcome")) != nil {
		t.Fatal("FindIndex found a match in text without the literal")
	}
}

// FuzzFilter: for any pattern and text, the filtered match is regexp's.
func FuzzFilter(f *testing.F) {
	seeds := [][2]string{
		{`(?i)esc to interrupt`, "eſc TO interrupt"},
		{`(?i)[a-c]k|z{2,}`, "B\u212a"},
		{`^[●⏺]\s+API Error`, "⏺ API Error"},
		{`(?i)(?:5|five)-hour`, "FIVE-HOUR"},
		{`(?i)\x{212a}`, "k"},
		{`(?i)ǅ`, "ǆ"},
		{`a+?b{1,2}(c|d)`, "abbd"},
		{`\xff`, "\xff"},
		{`(?i)σ`, "ς"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, text string) {
		re, err := regexp.Compile(expr)
		if err != nil || len(expr) > 200 {
			return
		}
		want := re.MatchString(text)
		if got := matchString(re, text); got != want {
			t.Fatalf("MatchString(%q, %q) = %v, regexp says %v (filter %+v)", expr, text, got, want, NewSet(re).filterFor(re))
		}
		// The same through a shared Text, as the screen judges use it.
		tx := NewText(strings.Clone(text))
		if got := NewSet(re).Match(re, tx); got != want {
			t.Fatalf("Match(%q) on a shared Text = %v, want %v", expr, got, want)
		}
	})
}

// hasCase covers every rune simple folding maps elsewhere, so skipping the
// others loses nothing.
func TestHasCaseCoversFolding(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) != r && !hasCase(r) {
			t.Fatalf("U+%04X folds to U+%04X but is not marked cased", r, unicode.SimpleFold(r))
		}
	}
}

// matchString is Match for one string, re in a set of its own.
func matchString(re *regexp.Regexp, s string) bool {
	return NewSet(re).Match(re, NewText(s))
}

// A pattern outside the set, and a nil set, run unfiltered: the answer is
// regexp's, and the set keeps nothing of the pattern.
func TestOutsideTheSet(t *testing.T) {
	in, out := regexp.MustCompile(`(?i)usage limit`), regexp.MustCompile(`(?i)quota`)
	set := NewSet(in, nil, in)
	if len(set.filters) != 1 {
		t.Fatalf("set holds %d filters, want 1", len(set.filters))
	}
	for _, s := range []*Set{set, nil} {
		if !s.Match(out, NewText("QUOTA gone")) || s.Match(out, NewText("fine")) {
			t.Errorf("set %v: unfiltered match differs from regexp's", s)
		}
		if !s.Match(in, NewText("Usage Limit")) || s.FindIndex(in, NewText("no")) != nil {
			t.Errorf("set %v: filtered match differs from regexp's", s)
		}
	}
	if len(set.filters) != 1 {
		t.Fatalf("matching a pattern outside the set added it: %d filters", len(set.filters))
	}
}
