package state

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	// The zone tests need zone data even on a machine without tzdata.
	_ "time/tzdata"
)

// testZone is a zone whose offset has minutes (+05:30) and no DST, so a
// bug that drops or doubles the offset cannot hide behind a whole hour.
const (
	testZone       = "Asia/Kolkata"
	testZoneOffset = 5*3600 + 30*60
)

const zoneChildEnv = "SWARM_STATE_TEST_ZONE_CHILD"

// inZone runs the calling test again in a child process whose TZ is zone,
// because time.Local is fixed when a process starts and changing it in this
// process would race with other tests. It returns true in the child, which
// runs the test body; the parent relays the child's verdict and returns
// false.
func inZone(t *testing.T, zone string) bool {
	t.Helper()
	if os.Getenv(zoneChildEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TZ="+zone, zoneChildEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("child with TZ=%s:\n%s", zone, out)
	if err != nil {
		t.Fatalf("child with TZ=%s failed: %v", zone, err)
	}
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Skip("skipped in the child (see its output above)")
	}
	return false
}

// instant is 2026-11-26 02:08:33.809004999 in +05:30.
var instant = time.Date(2026, 11, 25, 20, 38, 33, 809004999, time.UTC)

func TestTimestampWritesPythonForm(t *testing.T) {
	if !inZone(t, testZone) {
		return
	}
	if _, off := time.Now().Zone(); off != testZoneOffset {
		t.Fatalf("TZ=%s gave offset %d", testZone, off)
	}
	cases := []struct {
		name string
		v    any
		want string
	}{
		// Python keeps microseconds: the nanoseconds are cut, not rounded.
		{"local", Timestamp{instant}, `"2026-11-26T02:08:33.809004"`},
		// datetime.isoformat() writes no fraction when microsecond == 0.
		{"local whole second", Timestamp{instant.Truncate(time.Second).Add(999)}, `"2026-11-26T02:08:33"`},
		{"local small fraction", Timestamp{instant.Truncate(time.Second).Add(5 * time.Microsecond)}, `"2026-11-26T02:08:33.000005"`},
		{"local from another zone", Timestamp{instant.In(time.FixedZone("x", -7*3600))}, `"2026-11-26T02:08:33.809004"`},
		{"local zero", Timestamp{}, `null`},
		{"utc", UTCTimestamp{instant}, `"2026-11-25T20:38:33.809004+00:00"`},
		{"utc whole second", UTCTimestamp{instant.Truncate(time.Second)}, `"2026-11-25T20:38:33+00:00"`},
		{"utc zero", UTCTimestamp{}, `null`},
		// swarm's own fields: RFC 3339, local time with its zone.
		{"zoned", ZonedTimestamp{instant}, `"2026-11-26T02:08:33.809004+05:30"`},
		{"zoned whole second", ZonedTimestamp{instant.Truncate(time.Second)}, `"2026-11-26T02:08:33+05:30"`},
		{"zoned from another zone", ZonedTimestamp{instant.UTC()}, `"2026-11-26T02:08:33.809004+05:30"`},
		{"zoned zero", ZonedTimestamp{}, `null`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.name, got, err, c.want)
		}
	}
}

func TestTimestampRoundTrip(t *testing.T) {
	if !inZone(t, testZone) {
		return
	}
	want := instant.Truncate(time.Microsecond)
	for _, v := range []any{&Timestamp{instant}, &UTCTimestamp{instant}, &ZonedTimestamp{instant}} {
		data, _ := json.Marshal(v)
		var back struct{ A Timestamp }
		var backUTC struct{ A UTCTimestamp }
		doc := []byte(`{"A":` + string(data) + `}`)
		if err := json.Unmarshal(doc, &back); err != nil || !back.A.Equal(want) {
			t.Errorf("%s read as Timestamp: %v (%v), want %v", data, back.A, err, want)
		}
		if err := json.Unmarshal(doc, &backUTC); err != nil || !backUTC.A.Equal(want) {
			t.Errorf("%s read as UTCTimestamp: %v (%v), want %v", data, backUTC.A, err, want)
		}
	}
	// What swarm.py and earlier swarm versions wrote still reads.
	for in, w := range map[string]time.Time{
		`"2026-11-26T02:08:33.809004"`:       want,
		`"2026-11-26T02:08:33"`:              want.Truncate(time.Second),
		`"2026-11-25T20:38:33.809004+00:00"`: want,
		`"2026-11-25T20:38:33.809004999Z"`:   instant,
		`"2026-11-26T02:08:33.809004+05:30"`: want,
		`""`:                                 {},
		`null`:                               {},
	} {
		var ts UTCTimestamp
		if err := json.Unmarshal([]byte(in), &ts); err != nil || !ts.Equal(w) {
			t.Errorf("%s: %v (%v), want %v", in, ts.Time, err, w)
		}
	}
}

func TestPythonHelpers(t *testing.T) {
	// Zone-independent: PythonUTC does not depend on time.Local.
	if got := PythonUTC(instant); got != "2026-11-25T20:38:33.809004+00:00" {
		t.Errorf("PythonUTC = %s", got)
	}
	if got := PythonLocal(instant); got != instant.Local().Format("2006-01-02T15:04:05.000000") {
		t.Errorf("PythonLocal = %s", got)
	}
	if got := (UTCTimestamp{}).Human(); got != "-" {
		t.Errorf("zero Human = %q", got)
	}
}

// A loop state keeps swarm.py's forms in swarm.py's fields and writes the
// fields swarm added in RFC 3339 with the zone, which time.RFC3339 parses
// back to the same instant.
func TestLoopStateTimestampForms(t *testing.T) {
	if !inZone(t, testZone) {
		return
	}
	at := instant.Truncate(time.Microsecond)
	st := Ralph{LoopProgress: LoopProgress{Started: Timestamp{at}, LastIterationStart: Timestamp{at}, LastIterationEnd: Timestamp{at},
		LastScreenChange: UTCTimestamp{at}, WaitingUntil: ZonedTimestamp{at}}}
	data, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(data, &got)
	want := map[string]string{
		"started":                "2026-11-26T02:08:33.809004",
		"last_iteration_started": "2026-11-26T02:08:33.809004",
		"last_iteration_ended":   "2026-11-26T02:08:33.809004",
		"last_screen_change":     "2026-11-25T20:38:33.809004+00:00",
		"waiting_until":          "2026-11-26T02:08:33.809004+05:30",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %s", k, got[k], w)
		}
	}
	if p, err := time.Parse(time.RFC3339, got["waiting_until"].(string)); err != nil || !p.Equal(at) {
		t.Errorf("waiting_until does not parse as RFC 3339: %v (%v)", p, err)
	}
}
