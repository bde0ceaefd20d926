package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	good := map[string]time.Duration{
		"90":       90 * time.Second,
		"90s":      90 * time.Second,
		"30m":      30 * time.Minute,
		"4h":       4 * time.Hour,
		"1h30m":    90 * time.Minute,
		"2h30m15s": 2*time.Hour + 30*time.Minute + 15*time.Second,
		"0.5":      500 * time.Millisecond,
		"200ms":    200 * time.Millisecond,
		" 5 ":      5 * time.Second,
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-5", "5x", "1h-3m", "-1s", "1e12"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded; want error", in)
		} else if want := "invalid duration '" + in + "'"; err.Error() != want {
			t.Errorf("Parse(%q) error %q; want %q", in, err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := map[time.Duration]string{
		0:                                 "0s",
		42 * time.Second:                  "42s",
		3*time.Minute + 42*time.Second:    "3m 42s",
		4 * time.Hour:                     "4h 0m",
		49 * time.Hour:                    "2d 1h",
		1400 * time.Millisecond:           "1s",
		5*time.Minute + 12*time.Second:    "5m 12s",
		-(3*time.Minute + 42*time.Second): "3m 42s",
	}
	for in, want := range cases {
		if got := Format(in); got != want {
			t.Errorf("Format(%v) = %q; want %q", in, got, want)
		}
	}
}

func TestCompactAgeWords(t *testing.T) {
	if got := Compact(5*time.Minute + 42*time.Second); got != "5m42s" {
		t.Errorf("Compact = %q", got)
	}
	if got := Compact(3 * time.Second); got != "3s" {
		t.Errorf("Compact = %q", got)
	}
	if got := Compact(time.Hour + 2*time.Minute + 3*time.Second); got != "1h2m3s" {
		t.Errorf("Compact = %q", got)
	}
	ages := map[time.Duration]string{42 * time.Second: "42s", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 50 * time.Hour: "2d", -time.Second: "0s"}
	for in, want := range ages {
		if got := Age(in); got != want {
			t.Errorf("Age(%v) = %q; want %q", in, got, want)
		}
	}
	words := map[time.Duration]string{4 * time.Hour: "4h", 30 * time.Minute: "30m", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 24 * time.Hour: "24h"}
	for in, want := range words {
		if got := Words(in); got != want {
			t.Errorf("Words(%v) = %q; want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"90", "1h30m", "", "-1", "0.5", "9999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err == nil && d < 0 {
			t.Fatalf("Parse(%q) = %v, negative", s, d)
		}
	})
}
