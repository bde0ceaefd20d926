package main

// Flag values that validate themselves while the command line is parsed, so
// a bad value is a usage error (exit 2) that names the flag, before any
// command runs or touches the state root.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/swarmtools/swarm/internal/duration"
)

// fixError is a flag value error whose text says which values to use; it
// prints as "invalid --flag 'value' (use ...)", or for a value outside a
// fixed set (choice) "invalid choice for --flag: 'value' (use ...)", the
// words swarm.py's argparse uses.
type fixError struct {
	use    string
	choice bool
}

func (e *fixError) Error() string { return "use " + e.use }

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// enumValue is a string flag that takes one of a fixed set of words.
type enumValue struct {
	p       *string
	allowed []string
}

func (v *enumValue) String() string { return *v.p }
func (v *enumValue) Type() string   { return "string" }

func (v *enumValue) Set(s string) error {
	for _, a := range v.allowed {
		if s == a {
			*v.p = s
			return nil
		}
	}
	return &fixError{use: orList(v.allowed), choice: true}
}

// enumVar registers a flag that takes one of allowed; def is its default.
func enumVar(fs *pflag.FlagSet, p *string, name, def string, allowed []string, usage string) {
	*p = def
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
}

// noMax marks an intValue without an upper bound.
const noMax = -1

// intValue is an int flag with a range.
type intValue struct {
	p        *int
	min, max int // max noMax: unbounded
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "int" }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < v.min || (v.max != noMax && n > v.max) {
		if v.max == noMax {
			return &fixError{use: fmt.Sprintf("a whole number, at least %d", v.min)}
		}
		return &fixError{use: fmt.Sprintf("a whole number from %d to %d", v.min, v.max)}
	}
	*v.p = n
	return nil
}

// intVar registers an int flag that accepts min..max (max noMax: no limit).
func intVar(fs *pflag.FlagSet, p *int, name string, def, min, max int, usage string) {
	*p = def
	fs.Var(&intValue{p: p, min: min, max: max}, name, usage)
}

// intVarP is intVar with a one-letter shorthand.
func intVarP(fs *pflag.FlagSet, p *int, name, short string, def, min, max int, usage string) {
	*p = def
	fs.VarP(&intValue{p: p, min: min, max: max}, name, short, usage)
}

// durationValue is a duration flag as swarm accepts it: "90" (seconds),
// "90s", "30m", "1h30m", "500ms" (internal/duration), at least min.
type durationValue struct {
	p   *time.Duration
	min time.Duration
}

func (v *durationValue) Type() string { return "duration" }

// String shows the value the way a user would type it: "3m", "1s", "0".
func (v *durationValue) String() string {
	d := *v.p
	switch {
	case d == 0:
		return "0"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func (v *durationValue) Set(s string) error {
	d, err := duration.Parse(s)
	if err != nil {
		return err
	}
	if d < v.min {
		return &fixError{use: "at least " + (&durationValue{p: &v.min}).String()}
	}
	*v.p = d
	return nil
}

// durationVar registers a duration flag of at least min.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def, min time.Duration, usage string) {
	*p = def
	fs.Var(&durationValue{p: p, min: min}, name, usage)
}

// flagError turns pflag's parse errors into swarm's usage errors: a bad
// value names the flag and the value, "invalid --prompt-mode 'pipe' (use
// type, stdin or arg)" or "invalid --max-time '5x': invalid duration '5x'".
func flagError(err error) error {
	var inv *pflag.InvalidValueError
	if !errors.As(err, &inv) {
		return usagef("%w", err)
	}
	name := "--" + inv.GetFlag().Name
	var fix *fixError
	if errors.As(err, &fix) && fix.choice {
		return choiceError(name, inv.GetValue(), fix.use)
	}
	if errors.As(err, &fix) {
		return usagef("invalid %s '%s' (%w)", name, inv.GetValue(), fix)
	}
	if inv.GetFlag().Value.Type() == "bool" {
		return usagef("invalid %s '%s' (use true or false)", name, inv.GetValue())
	}
	return usagef("invalid %s '%s': %w", name, inv.GetValue(), errors.Unwrap(err))
}

// choiceError is the usage error of a value outside a flag's choices.
func choiceError(flag, value, use string) error {
	return usagef("invalid choice for %s: '%s' (use %s)", flag, value, use)
}

// sizeValue is a byte size flag: "52428800", "50M", "50MiB", "1G", "512K"
// (K, M, G are powers of 1024, as in "50 MiB"), at least min.
type sizeValue struct {
	p   *int64
	min int64
}

func (v *sizeValue) Type() string { return "size" }

// String shows the value in the largest whole unit: "50MiB", "1GiB".
func (v *sizeValue) String() string {
	n := *v.p
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

var sizeUnits = map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}

func (v *sizeValue) Set(s string) error {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(t)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if err != nil || !ok || n > math.MaxInt64/unit || n*unit < v.min {
		return &fixError{use: fmt.Sprintf("a size such as 50MiB or 1G, at least %d bytes", v.min)}
	}
	*v.p = n * unit
	return nil
}

func sizeVar(fs *pflag.FlagSet, p *int64, name string, def, min int64, usage string) {
	*p = def
	fs.Var(&sizeValue{p: p, min: min}, name, usage)
}

// costValue is a budget in US dollars: "5", "0.50", "$2.5" (at least 0;
// 0 is none).
type costValue struct{ p *float64 }

func (v *costValue) Type() string { return "usd" }

func (v *costValue) String() string { return strconv.FormatFloat(*v.p, 'f', -1, 64) }

func (v *costValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return &fixError{use: "an amount of US dollars, e.g. 5 or 0.50"}
	}
	*v.p = f
	return nil
}

// costVar registers a dollar budget flag (0: none).
func costVar(fs *pflag.FlagSet, p *float64, name, usage string) {
	fs.Var(&costValue{p: p}, name, usage)
}

// tokensValue is a number of tokens: "2000000", "500k", "2M" (k and M
// are thousands and millions, as token counts are said).
type tokensValue struct{ p *int64 }

func (v *tokensValue) Type() string { return "tokens" }

func (v *tokensValue) String() string { return strconv.FormatInt(*v.p, 10) }

func (v *tokensValue) Set(s string) error {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1000000, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return &fixError{use: "a whole number of tokens, e.g. 2000000, 500k or 2M"}
	}
	*v.p = n * mult
	return nil
}

// tokensVar registers a token budget flag (0: none).
func tokensVar(fs *pflag.FlagSet, p *int64, name, usage string) {
	fs.Var(&tokensValue{p: p}, name, usage)
}
