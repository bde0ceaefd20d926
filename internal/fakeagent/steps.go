package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// step is one parsed step of a script: its word and its raw argument.
// Placeholders and escapes in the argument are expanded only when the step
// runs, because {n} and {env:NAME} are not known while flags are validated.
type step struct {
	word string
	arg  string
}

// argKind says what argument a step word takes; validation uses it so that
// a typo in a test's script fails loudly at start instead of half-way through.
type argKind int

const (
	argNone         argKind = iota // no argument allowed
	argText                        // optional text, expanded when run
	argTextRequired                // required text, expanded when run
	argDuration                    // time.ParseDuration
	argSpin                        // a duration or "forever"
	argExitCode                    // optional integer 0..255, default 0
)

var stepWords = map[string]argKind{
	"print":       argText,
	"write":       argText,
	"sleep":       argDuration,
	"quiet":       argNone,
	"spin":        argSpin,
	"exit":        argExitCode,
	"touch":       argTextRequired,
	"rm":          argTextRequired,
	"env":         argTextRequired,
	"child":       argTextRequired,
	"ignore-term": argNone,
	"wait":        argNone,
	"echo":        argNone,
	"cwd":         argNone,
}

// splitSteps splits a script at unescaped semicolons. "\;" becomes a literal
// ";"; every other backslash sequence is kept as is for expand, so that "\\;"
// is an escaped backslash followed by a separator.
func splitSteps(s string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == ';':
			cur.WriteByte(';')
			i++
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(c)
			cur.WriteByte(s[i+1])
			i++
		case c == ';':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// parseSteps parses and validates a script. Empty steps (";;" or a trailing
// ";") are skipped.
func parseSteps(script string) ([]step, error) {
	var steps []step
	for _, raw := range splitSteps(script) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		word, arg, hasArg := strings.Cut(raw, " ")
		kind, ok := stepWords[word]
		if !ok {
			return nil, fmt.Errorf("unknown step %q", word)
		}
		if err := checkArg(word, kind, arg, hasArg); err != nil {
			return nil, err
		}
		steps = append(steps, step{word: word, arg: arg})
	}
	return steps, nil
}

func checkArg(word string, kind argKind, arg string, hasArg bool) error {
	switch kind {
	case argNone:
		if hasArg {
			return fmt.Errorf("step %q takes no argument", word)
		}
	case argTextRequired:
		if arg == "" {
			return fmt.Errorf("step %q needs an argument", word)
		}
	case argDuration:
		if _, err := time.ParseDuration(arg); err != nil {
			return fmt.Errorf("step %q: %w", word, err)
		}
	case argSpin:
		if arg == "forever" {
			return nil
		}
		if _, err := time.ParseDuration(arg); err != nil {
			return fmt.Errorf("step %q: want a duration or forever: %w", word, err)
		}
	case argExitCode:
		if _, err := exitCode(arg); err != nil {
			return fmt.Errorf("step %q: %w", word, err)
		}
	}
	return nil
}

// exitCode parses the argument of an exit step; no argument means 0.
func exitCode(arg string) (int, error) {
	if arg == "" {
		return 0, nil
	}
	code, err := strconv.Atoi(arg)
	if err != nil || code < 0 || code > 255 {
		return 0, fmt.Errorf("bad exit code %q", arg)
	}
	return code, nil
}

var escapes = map[byte]string{'n': "\n", 't': "\t", 'e': "\x1b", '\\': "\\"}

// expand replaces the escapes \n \t \e \\ and the placeholders {n} and
// {env:NAME} in a text argument, in one pass so that expanded values are not
// expanded again. Anything unrecognised is kept literally.
func expand(s string, n int, getenv func(string) string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			if repl, ok := escapes[s[i+1]]; ok {
				b.WriteString(repl)
				i++
				continue
			}
		}
		if c == '{' {
			rest := s[i:]
			if strings.HasPrefix(rest, "{n}") {
				b.WriteString(strconv.Itoa(n))
				i += len("{n}") - 1
				continue
			}
			if strings.HasPrefix(rest, "{env:") {
				if end := strings.IndexByte(rest, '}'); end > 0 {
					b.WriteString(getenv(rest[len("{env:"):end]))
					i += end
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// iterSpec is one --iter flag: the steps for iteration n, or for n and every
// later iteration when orLater is set.
type iterSpec struct {
	n       int
	orLater bool
	script  string
	steps   []step
}

// iterFlags collects repeated --iter flags. Set only checks the "N=" or "N+="
// prefix; the steps are parsed after flag.Parse so that an unknown step gets
// the same error message and exit code wherever it was written.
type iterFlags []iterSpec

func (f *iterFlags) String() string { return fmt.Sprint(len(*f), " iteration overrides") }

func (f *iterFlags) Set(v string) error {
	spec, err := parseIterSpec(v)
	if err != nil {
		return err
	}
	*f = append(*f, spec)
	return nil
}

func parseIterSpec(v string) (iterSpec, error) {
	key, script, ok := strings.Cut(v, "=")
	if !ok {
		return iterSpec{}, fmt.Errorf("want N=STEPS or N+=STEPS, got %q", v)
	}
	spec := iterSpec{script: script}
	if strings.HasSuffix(key, "+") {
		spec.orLater = true
		key = strings.TrimSuffix(key, "+")
	}
	n, err := strconv.Atoi(key)
	if err != nil || n < 1 {
		return iterSpec{}, fmt.Errorf("bad iteration number in %q", v)
	}
	spec.n = n
	return spec, nil
}

// selectSteps picks the steps for iteration n: an exact N= spec wins, then
// the N+= spec with the largest N not above n, then the default script.
// Among equal specs the last one given wins, like a repeated flag would.
func selectSteps(script []step, iters []iterSpec, n int) []step {
	chosen := script
	exact := false
	best := 0 // N of the chosen N+= spec; 0 means none yet
	for _, it := range iters {
		switch {
		case !it.orLater && it.n == n:
			chosen, exact = it.steps, true
		case it.orLater && !exact && it.n <= n && it.n >= best:
			chosen, best = it.steps, it.n
		}
	}
	return chosen
}
