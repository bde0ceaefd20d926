package state

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// A duration in a state file is a number of seconds: a float where a
// fraction can be (written as encoding/json writes a float64: 120, 0.5),
// an int where swarm.py has an int. Reading and writing back keeps the
// text.
func TestSecondsRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want time.Duration
	}{
		{"0", 0}, {"0.5", 500 * time.Millisecond}, {"1", time.Second}, {"90.25", 90250 * time.Millisecond},
		{"120", 2 * time.Minute}, {"5400", 90 * time.Minute}, {"0.001", time.Millisecond},
		{"1e-9", time.Nanosecond}, {"-1", -time.Second}, {"1000000000", 1e9 * time.Second},
		{"8640000", 100 * 24 * time.Hour},
	}
	for _, c := range cases {
		var s Seconds
		if err := json.Unmarshal([]byte(c.text), &s); err != nil || s.Duration != c.want {
			t.Errorf("Seconds %s read as %v, %v; want %v", c.text, s.Duration, err, c.want)
			continue
		}
		if out, err := json.Marshal(s); err != nil || string(out) != c.text {
			t.Errorf("Seconds %s written back as %s, %v", c.text, out, err)
		}
	}
	whole := []struct {
		text string
		want time.Duration
	}{{"0", 0}, {"1", time.Second}, {"180", 3 * time.Minute}, {"-5", -5 * time.Second}, {"9000000000", 9e9 * time.Second}}
	for _, c := range whole {
		var s WholeSeconds
		if err := json.Unmarshal([]byte(c.text), &s); err != nil || s.Duration != c.want {
			t.Errorf("WholeSeconds %s read as %v, %v; want %v", c.text, s.Duration, err, c.want)
			continue
		}
		if out, err := json.Marshal(s); err != nil || string(out) != c.text {
			t.Errorf("WholeSeconds %s written back as %s, %v", c.text, out, err)
		}
	}
	// A fraction in memory is dropped, as the int it was stored in did.
	if out, _ := json.Marshal(WholeSeconds{1500 * time.Millisecond}); string(out) != "1" {
		t.Errorf("WholeSeconds 1.5s written as %s, want 1", out)
	}
	if n := (WholeSeconds{90 * time.Second}).Int(); n != 90 {
		t.Errorf("Int() = %d", n)
	}
}

// What an int or a float64 field refuses, the duration fields refuse, and
// what no time.Duration holds too; null leaves the value alone.
func TestSecondsRefuses(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`"90"`, `true`, `[]`, `{}`, `1e300`, `-1e300`, `9223372037`} {
		var s Seconds
		if err := json.Unmarshal([]byte(text), &s); err == nil {
			t.Errorf("Seconds accepted %s as %v", text, s.Duration)
		}
	}
	for _, text := range []string{`"90"`, `true`, `90.5`, `90.0`, `1e3`, `9223372037`, `-9223372037`} {
		var s WholeSeconds
		if err := json.Unmarshal([]byte(text), &s); err == nil {
			t.Errorf("WholeSeconds accepted %s as %v", text, s.Duration)
		}
	}
	s, w := Seconds{time.Second}, WholeSeconds{time.Second}
	if json.Unmarshal([]byte("null"), &s) != nil || json.Unmarshal([]byte("null"), &w) != nil ||
		s.Duration != time.Second || w.Duration != time.Second {
		t.Errorf("null changed the values: %v %v", s, w)
	}
}

// A fraction in inactivity_timeout (an int in swarm.py's file) is an
// invalid field, set aside like any other, with the message encoding/json
// gives an int field.
func TestRalphFractionalInactivityTimeoutIsSetAside(t *testing.T) {
	t.Parallel()
	s, warnings := newStore(t)
	rs := s.Ralph("loop")
	if err := os.MkdirAll(rs.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, rs.StatePath(), `{"worker_name": "loop", "prompt_file": "/p", "max_iterations": 3, "inactivity_timeout": 90.5, "max_time": 60}`)
	st, err := rs.Load()
	if err != nil || st.InactivityTimeout.Duration != 0 || st.MaxTime.Duration != time.Minute || st.MaxIterations != 3 {
		t.Fatalf("Load = %+v, %v", st, err)
	}
	checkWarnings(t, warnings, `ignoring invalid field "inactivity_timeout" of ralph state for 'loop': json: cannot unmarshal number 90.5 into Go struct field Ralph.inactivity_timeout of type int`)
}

// Every field of the loop state has its place in the file's key order.
func TestRalphKeyOrderHasEveryField(t *testing.T) {
	t.Parallel()
	keys := jsonKeys(reflect.TypeFor[Ralph]())
	order := slices.Clone(ralphKeyOrder)
	slices.Sort(keys)
	slices.Sort(order)
	if !slices.Equal(keys, order) {
		t.Errorf("ralphKeyOrder and Ralph's fields differ:\n order %s\nfields %s", strings.Join(order, " "), strings.Join(keys, " "))
	}
}
