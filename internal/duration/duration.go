// Package duration parses the durations swarm accepts on its command line
// and formats durations and ages the way swarm prints them.
//
// Input accepts a bare number of seconds ("90") as well as Go-style unit
// strings ("90s", "30m", "4h", "1h30m", "2h30m15s"), because the Python tool
// swarm.py accepted both and scripts use both.
package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse parses s as a duration. A bare number is seconds. Negative values are
// rejected. The error text is the one swarm prints: "invalid duration 'x'".
func Parse(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("invalid duration '%s'", s)
	}
	if n, err := strconv.ParseFloat(t, 64); err == nil {
		if n < 0 || n > 1e9 {
			return 0, fmt.Errorf("invalid duration '%s'", s)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration '%s'", s)
	}
	return d, nil
}

// Seconds converts a float number of seconds (as loop states and figures
// keep them) to a duration.
func Seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// Format renders d for humans, the one form of ralph ls, ralph status and
// swarm top: "42s", "3m 42s", "4h 0m", "2d 3h".
// Durations under a second round to "0s".
func Format(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, (s%3600)/60)
	default:
		return fmt.Sprintf("%dd %dh", s/86400, (s%86400)/3600)
	}
}

// Compact renders d the way iteration log lines do: "5m42s", "42s", "1h2m3s".
func Compact(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = -s
	}
	h, m, sec := s/3600, (s%3600)/60, s%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%dm%ds", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%dm%ds", m, sec)
	default:
		return fmt.Sprintf("%ds", sec)
	}
}

// Age renders d as the single largest unit, as the ls table shows it:
// "42s", "5m", "3h", "2d".
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return fmt.Sprintf("%dh", s/3600)
	default:
		return fmt.Sprintf("%dd", s/86400)
	}
}

// Words renders d like Go's String but without zero-value noise, for messages
// such as "Heartbeat started for W (every 4h, expires in 24h)": "4h", "30m",
// "1h30m", "90s" becomes "1m30s".
func Words(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
