package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Timestamp is a point in time stored as RFC 3339 with zone. It also reads
// the zone-less ISO 8601 that Python's datetime.isoformat() writes (taken as
// local time), so records written by swarm.py load unchanged.
type Timestamp struct{ time.Time }

// Now returns the current time as a Timestamp.
func Now() Timestamp { return Timestamp{time.Now()} }

var pythonLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05",
}

// ParseTimestamp parses any of the layouts swarm and swarm.py write.
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

// MarshalJSON writes RFC 3339 with zone, or null for the zero time.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Format(time.RFC3339Nano))
}

// UnmarshalJSON accepts null, RFC 3339, Python isoformat, or a Unix number.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) || len(b) == 0 {
		*t = Timestamp{}
		return nil
	}
	if b[0] != '"' {
		var f float64
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		sec := int64(f)
		*t = Timestamp{time.Unix(sec, int64((f-float64(sec))*1e9))}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		*t = Timestamp{}
		return nil
	}
	p, err := ParseTimestamp(s)
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// Human renders local time as "YYYY-MM-DD HH:MM:SS", or "-" when unset.
func (t Timestamp) Human() string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
