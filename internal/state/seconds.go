package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Seconds is a duration that a state file holds as a number of seconds,
// with a fraction when it has one (0.5, 120): what users write and read
// when they edit the file. In memory it is a time.Duration, so code never
// converts.
type Seconds struct{ time.Duration }

// WholeSeconds is a duration that a state file holds as a whole number of
// seconds, where swarm.py writes an int (inactivity_timeout) and where
// swarm always has (ready_timeout): a fraction is dropped when written, and
// a file with a fraction there is refused, as swarm.py's int would be.
type WholeSeconds struct{ time.Duration }

// MarshalJSON writes the seconds as encoding/json writes a float64: 120,
// 0.5, 90.25.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.Seconds())
}

// UnmarshalJSON reads a number of seconds to the nanosecond; null leaves s
// as it is (as it does a float64). A value no time.Duration holds (about
// 292 years) is an error.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	ns := math.Round(f * float64(time.Second))
	if ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return fmt.Errorf("%s seconds is out of range", b)
	}
	s.Duration = time.Duration(ns)
	return nil
}

// Int is the whole seconds, as the file holds them.
func (s WholeSeconds) Int() int { return int(s.Duration / time.Second) }

// MarshalJSON writes the whole seconds, an int.
func (s WholeSeconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.Int())
}

// UnmarshalJSON reads an int of seconds; null leaves s as it is (as it
// does an int). A fraction, or a value no time.Duration holds, is an error.
func (s *WholeSeconds) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	if v := int64(n); v > math.MaxInt64/int64(time.Second) || v < math.MinInt64/int64(time.Second) {
		return fmt.Errorf("%s seconds is out of range", b)
	}
	s.Duration = time.Duration(n) * time.Second
	return nil
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }
