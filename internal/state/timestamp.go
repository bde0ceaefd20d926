package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Timestamp is a point in time stored the way swarm.py stores worker and loop
// times (datetime.now().isoformat()): local wall-clock time without a zone,
// "2026-11-26T02:08:33.809004", or without the fraction when the microseconds
// are zero. swarm.py subtracts these from the naive datetime.now(), so a zone
// suffix would make it raise TypeError. Reading also accepts RFC 3339, which
// earlier swarm versions wrote.
//
// A zone-less value is ambiguous in the hour a DST change repeats; swarm.py
// has the same limit, and compatibility with its files matters more.
type Timestamp struct{ time.Time }

// UTCTimestamp is a point in time stored the way swarm.py stores
// last_screen_change and heartbeat times (datetime.now(timezone.utc)
// .isoformat()): UTC with "+00:00", "2026-11-26T01:08:33.809004+00:00".
// swarm.py reads a zone-less value in those fields as UTC, which is wrong by
// the local offset, so these fields must carry the zone.
type UTCTimestamp struct{ time.Time }

// ZonedTimestamp is a point in time in a field swarm added, which no
// swarm.py reader has to parse: RFC 3339 in local time with its zone,
// microseconds (none when 0), "2026-11-26T02:08:33.809004+05:30", so a
// script reads the instant without guessing the zone. Reading accepts
// what Timestamp accepts.
type ZonedTimestamp struct{ time.Time }

// zonedLayout is RFC 3339 with at most microseconds, trailing zeros cut.
const zonedLayout = "2006-01-02T15:04:05.999999Z07:00"

// MarshalJSON writes RFC 3339 with the local zone, or null for the zero
// time.
func (t ZonedTimestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Local().Format(zonedLayout))
}

// UnmarshalJSON accepts what Timestamp accepts.
func (t *ZonedTimestamp) UnmarshalJSON(b []byte) error {
	v, err := unmarshalTime(b)
	*t = ZonedTimestamp{v}
	return err
}

// Now returns the current time as a Timestamp.
func Now() Timestamp { return Timestamp{time.Now()} }

// NowUTC returns the current time as a UTCTimestamp.
func NowUTC() UTCTimestamp { return UTCTimestamp{time.Now()} }

var pythonLayouts = []string{
	"2006-01-02T15:04:05.999999999", // first: what swarm and swarm.py write
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05",
}

// ParseTimestamp parses any of the layouts swarm and swarm.py write. A value
// without a zone is local time.
func ParseTimestamp(s string) (Timestamp, error) {
	for _, layout := range pythonLayouts {
		var t time.Time
		var err error
		if layout == time.RFC3339Nano {
			t, err = time.Parse(layout, s)
		} else {
			t, err = time.ParseInLocation(layout, s, time.Local)
		}
		if err == nil {
			return Timestamp{t}, nil
		}
	}
	return Timestamp{}, fmt.Errorf("invalid timestamp %q", s)
}

// isoformat renders t as Python's datetime.isoformat() does for a datetime
// in t's location: microseconds (truncated, as Python keeps only
// microseconds), and no fraction at all when they are zero. Older Pythons'
// fromisoformat (before 3.11) accept only exactly these forms.
func isoformat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// PythonLocal renders t as swarm.py writes worker and loop times: local
// time, no zone.
func PythonLocal(t time.Time) string { return isoformat(t.Local()) }

// PythonUTC renders t as swarm.py writes last_screen_change and heartbeat
// times: UTC with "+00:00".
func PythonUTC(t time.Time) string { return isoformat(t.UTC()) + "+00:00" }

// MarshalJSON writes local time without zone, or null for the zero time.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(PythonLocal(t.Time))
}

// UnmarshalJSON accepts null, RFC 3339, Python isoformat, or a Unix number.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	v, err := unmarshalTime(b)
	*t = Timestamp{v}
	return err
}

// MarshalJSON writes UTC with "+00:00", or null for the zero time.
func (t UTCTimestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(PythonUTC(t.Time))
}

// UnmarshalJSON accepts what Timestamp accepts; a value without a zone is
// taken as local time (what swarm writes elsewhere), not as UTC.
func (t *UTCTimestamp) UnmarshalJSON(b []byte) error {
	v, err := unmarshalTime(b)
	*t = UTCTimestamp{v}
	return err
}

// unmarshalTime decodes null or "" (the zero time), a Unix number, or a
// string in one of the layouts of ParseTimestamp.
func unmarshalTime(b []byte) (time.Time, error) {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) || len(b) == 0 {
		return time.Time{}, nil
	}
	if b[0] != '"' {
		var f float64
		if err := json.Unmarshal(b, &f); err != nil {
			return time.Time{}, err
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return time.Time{}, err
	}
	if s == "" {
		return time.Time{}, nil
	}
	p, err := ParseTimestamp(s)
	return p.Time, err
}

// Human renders local time as "YYYY-MM-DD HH:MM:SS", or "-" when unset.
func (t Timestamp) Human() string { return human(t.Time) }

// Human renders local time as "YYYY-MM-DD HH:MM:SS", or "-" when unset.
func (t UTCTimestamp) Human() string { return human(t.Time) }

func human(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
