// Package prefilter runs a regular expression only on text that holds one
// of the literals every match of it must contain.
//
// Agent screens are judged every poll against dozens of case-insensitive
// patterns, line by line. Go's regexp cannot use its literal fast path for
// (?i) patterns, so most of that time went to backtracking over lines that
// could never match (BenchmarkJudge in internal/agent: about 6x faster
// with the filters; docs/development.md has the figures). A filter is
// derived from the pattern's syntax tree, once per pattern of a Set, and
// never rejects text the pattern matches: case folding is compared the way
// regexp folds (Unicode simple folding orbits).
package prefilter

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxClassRunes: a character class of at most this many runes counts as a
// set of one-rune literals (such as a bullet [●⏺]); larger ones give no
// literal.
const maxClassRunes = 8

// literal is a string every match contains (one of a filter's set). A fold
// literal is stored case-folded (see foldString) and looked for in the
// case-folded text.
type literal struct {
	s    string
	fold bool
}

// filter is one pattern's literal set; nil lits means no filter (the
// pattern always runs).
type filter struct {
	lits []literal
}

// Set holds the filters of a fixed set of patterns (an agent profile's),
// built once with it and never added to: the filters live as long as the
// set's owner, not the process. A pattern outside the set (a loop's
// --limit-pattern) runs unfiltered, so a long-running monitor keeps
// nothing per pattern it is handed. A nil Set filters nothing.
type Set struct {
	filters map[*regexp.Regexp]*filter
}

// NewSet builds the filters of res (nil entries are skipped).
func NewSet(res ...*regexp.Regexp) *Set {
	s := &Set{filters: make(map[*regexp.Regexp]*filter, len(res))}
	for _, re := range res {
		if re != nil && s.filters[re] == nil {
			s.filters[re] = build(re.String())
		}
	}
	return s
}

// filterFor is re's filter, nil when re is not in the set.
func (s *Set) filterFor(re *regexp.Regexp) *filter {
	if s == nil {
		return nil
	}
	return s.filters[re]
}

func build(expr string) *filter {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return &filter{}
	}
	lits, ok := required(tree.Simplify())
	if !ok {
		return &filter{}
	}
	for _, l := range lits {
		if l.s == "" || strings.ContainsRune(l.s, utf8.RuneError) {
			return &filter{}
		}
	}
	return &filter{lits: lits}
}

// required returns a set of literals one of which every match of re
// contains, or false when re has none (it may match without any).
func required(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return []literal{{foldString(string(re.Rune)), true}}, true
		}
		return []literal{{string(re.Rune), false}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpCharClass:
		return classLiterals(re.Rune)
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	case syntax.OpConcat:
		var best []literal
		for _, sub := range re.Sub {
			if lits, ok := required(sub); ok && better(lits, best) {
				best = lits
			}
		}
		return best, best != nil
	}
	return nil, false
}

// classLiterals expands a small character class (pairs of rune ranges) to
// one-rune literals.
func classLiterals(ranges []rune) ([]literal, bool) {
	var lits []literal
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if len(lits) == maxClassRunes {
				return nil, false
			}
			lits = append(lits, literal{string(r), false})
		}
	}
	return lits, len(lits) > 0
}

// better prefers the set whose shortest literal is longest (fewer chance
// hits), then the smaller set.
func better(a, b []literal) bool {
	if b == nil {
		return true
	}
	sa, sb := shortest(a), shortest(b)
	if sa != sb {
		return sa > sb
	}
	return len(a) < len(b)
}

func shortest(lits []literal) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

// foldRune maps r to the smallest rune of its simple folding orbit, the
// same for every rune (?i) lets match r.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	if !hasCase(r) {
		return r // box drawing, bullets, emoji: most of a screen's other runes
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

// cased marks every rune with a case mapping (unicode.CaseRanges) and
// the rest of its folding orbit (ß, whose orbit holds ẞ): only those fold
// to another rune (a test checks this against unicode.SimpleFold for every
// rune).
var (
	cased     []uint64
	casedOnce sync.Once
)

func hasCase(r rune) bool {
	casedOnce.Do(func() {
		cased = make([]uint64, (unicode.MaxRune+1)/64)
		for _, cr := range unicode.CaseRanges {
			for c := rune(cr.Lo); c <= rune(cr.Hi); c++ {
				for f := unicode.SimpleFold(c); ; f = unicode.SimpleFold(f) {
					cased[f/64] |= 1 << (f % 64)
					if f == c {
						break
					}
				}
			}
		}
	})
	return r >= 0 && r <= unicode.MaxRune && cased[r/64]&(1<<(r%64)) != 0
}

// foldString folds every rune of s (an invalid byte becomes U+FFFD, as
// regexp reads it). ASCII is folded in place of a rune lookup: screens are
// mostly ASCII between their box-drawing characters.
func foldString(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, foldRune(r))
		i += n
	}
	return string(b)
}

// Text is a string prepared for filtering against many patterns: its
// folded form is computed once, when a pattern first needs it.
type Text struct {
	s      string
	folded string
	done   bool
}

// NewText prepares s.
func NewText(s string) *Text { return &Text{s: s} }

// String returns the text.
func (t *Text) String() string { return t.s }

func (t *Text) fold() string {
	if !t.done {
		t.folded, t.done = foldString(t.s), true
	}
	return t.folded
}

// mayMatch reports whether re can match t: false only when re is in the
// set and t lacks every literal re's matches must contain.
func (s *Set) mayMatch(re *regexp.Regexp, t *Text) bool {
	f := s.filterFor(re)
	if f == nil || f.lits == nil {
		return true
	}
	for _, l := range f.lits {
		if l.fold && strings.Contains(t.fold(), l.s) || !l.fold && strings.Contains(t.s, l.s) {
			return true
		}
	}
	return false
}

// Match reports whether re matches t (re.MatchString, skipped when re is
// in the set and t lacks its literals).
func (s *Set) Match(re *regexp.Regexp, t *Text) bool {
	return s.mayMatch(re, t) && re.MatchString(t.s)
}

// FindIndex is re.FindStringIndex on t, skipped when re is in the set and
// t lacks its literals.
func (s *Set) FindIndex(re *regexp.Regexp, t *Text) []int {
	if !s.mayMatch(re, t) {
		return nil
	}
	return re.FindStringIndex(t.s)
}
