package state

import (
	"regexp"
	"strings"
	"testing"
)

// The name rule as it was written before the byte loop replaced it: the
// loop must accept exactly what these accept.
var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	allDigits   = regexp.MustCompile(`^[0-9]+$`)
)

func regexpValid(name string) bool {
	return namePattern.MatchString(name) && !allDigits.MatchString(name) && name != "." && name != ".."
}

func TestValidateName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"Z", true}, {"7", false}, {"w-1.b_c", true}, {"12a", true}, {"a12", true},
		{"1234", false}, {"0", false}, {"1.2", true}, {"1-2", true},
		{"", false}, {"-x", false}, {".", false}, {"..", false}, {".hidden", false}, {"_x", false},
		{"a..b", true}, {"a.", true}, {"a-", true}, {"a_", true},
		{"a/b", false}, {"../x", false}, {"a\n", false}, {"\na", false}, {"a\x00", false}, {"a b", false},
		{"x:y", false}, {"#{pane_id}", false}, {"@1", false}, {"%1", false}, {"$x", false}, {"é", false}, {"aé", false},
		{"a\xff", false}, {"a~", false}, {"a+b", false},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false}, {strings.Repeat("9", 64), false},
		{strings.Repeat("9", 63) + "x", true}, {"x" + strings.Repeat("9", 63), true}, {"x" + strings.Repeat("9", 64), false},
	}
	for _, c := range cases {
		err := ValidateName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if regexpValid(c.name) != c.ok {
			t.Errorf("bad case %q: the regexp says %v", c.name, !c.ok)
		}
		if err != nil && err.Error() != "invalid worker name '"+c.name+"' (use letters, digits, '.', '_', '-'; max 64)" {
			t.Errorf("ValidateName(%q) message: %v", c.name, err)
		}
	}
}

// FuzzValidateNameRegexp: the byte loop accepts exactly what the regexps
// it replaced accept.
func FuzzValidateNameRegexp(f *testing.F) {
	for _, s := range []string{"a", "w-1.b_c", "-x", ".", "..", "1234", "12a", "a\n", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidateName(name) == nil, regexpValid(name); got != want {
			t.Fatalf("ValidateName(%q) accepts=%v, the regexp %v", name, got, want)
		}
	})
}
