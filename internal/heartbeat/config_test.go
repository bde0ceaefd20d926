package heartbeat

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	c, warn, err := Parse(Flags{Interval: "4h", Expire: "24h", Message: "continue"}, false)
	if err != nil || warn != "" || c.Interval != 4*time.Hour || c.Expire != 24*time.Hour || c.Message != "continue" {
		t.Fatalf("Parse = %+v %q %v", c, warn, err)
	}
	if got := StartedMessage("builder", c); got != "Heartbeat started for builder (every 4h, expires in 24h)" {
		t.Errorf("StartedMessage = %q", got)
	}
	if got := SpawnedMessage(c); got != "heartbeat started (every 4h, expires in 24h)" {
		t.Errorf("SpawnedMessage = %q", got)
	}
	c, _, _ = Parse(Flags{Interval: "1h30m", Message: "go"}, false)
	if got := StartedMessage("b", c); got != "Heartbeat started for b (every 1h30m, no expiration)" {
		t.Errorf("StartedMessage = %q", got)
	}
	c, _, _ = Parse(Flags{Interval: "500ms", Expire: "3", Message: "go"}, false)
	if got := SpawnedMessage(c); got != "heartbeat started (every 500ms, expires in 3s)" {
		t.Errorf("SpawnedMessage = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		f     Flags
		spawn bool
		want  string
	}{
		{Flags{Interval: "abc", Message: "m"}, false, "invalid interval 'abc'"},
		{Flags{Interval: "0", Message: "m"}, false, "invalid interval '0'"},
		{Flags{Interval: "", Message: "m"}, false, "invalid interval ''"},
		{Flags{Interval: "-5m", Message: "m"}, false, "invalid interval '-5m'"},
		{Flags{Interval: "4h", Expire: "x", Message: "m"}, false, "invalid expire 'x'"},
		{Flags{Interval: "4h", Expire: "0s", Message: "m"}, false, "invalid expire '0s'"},
		{Flags{Interval: "abc", Message: "m"}, true, "invalid heartbeat interval 'abc'"},
		{Flags{Interval: "4h", Expire: "x", Message: "m"}, true, "invalid heartbeat-expire 'x'"},
		{Flags{Interval: "4h"}, false, "heartbeat message cannot be empty"},
	}
	for _, c := range cases {
		_, _, err := Parse(c.f, c.spawn)
		var he *Error
		if !errors.As(err, &he) || he.Kind != KindInvalid || err.Error() != c.want || he.Bare() {
			t.Errorf("Parse(%+v, %v) = %v, want %q", c.f, c.spawn, err, c.want)
		}
	}
}

func TestParseShortIntervalWarning(t *testing.T) {
	t.Parallel()
	if _, w, _ := Parse(Flags{Interval: "30s", Message: "m"}, false); w != "very short interval (30s), consider using at least 1m" {
		t.Errorf("warning %q", w)
	}
	if _, w, _ := Parse(Flags{Interval: "59", Message: "m"}, true); w != "very short heartbeat interval (59), consider using at least 1m" {
		t.Errorf("spawn warning %q", w)
	}
	if _, w, _ := Parse(Flags{Interval: "1m", Message: "m"}, false); w != "" {
		t.Errorf("1m warned: %q", w)
	}
}

func TestErrorBare(t *testing.T) {
	t.Parallel()
	if !noHeartbeat("w").(*Error).Bare() || noHeartbeat("w").Error() != "No heartbeat found for w" {
		t.Error("No heartbeat found is printed bare, as swarm.py")
	}
}
