package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// errCorrupt marks a file that cannot be read at all (not JSON, or not the
// shape of the file): it is backed up and reset. A file that parses but has
// invalid parts is not corrupt: those parts are set aside (see rejected).
var errCorrupt = errors.New("corrupt state file")

// rejectedSuffix names the sidecar of a state file: invalid records (or, in
// ralph state, invalid fields) are moved there, one JSON object per line,
// appended, never rewritten. A sidecar rather than a key in state.json:
// swarm.py rewrites state.json with only "workers", so anything else in it
// would be lost at its next write, and it never touches other files.
const rejectedSuffix = ".rejected"

// rejected is a part of a state file that is invalid on its own: a worker
// record without a usable name, with a duplicate name or with values of the
// wrong type, or a ralph state field of the wrong type. Readers leave it
// out and go on; the next locked write moves it to the sidecar, so nothing
// a user or swarm.py wrote is lost.
type rejected struct {
	what   string          // "worker record 3 (name \"x\")", "field \"max_iterations\""
	reason string          // why it is invalid
	raw    json.RawMessage // the record, or {"field": value}
}

// sidecarEntry is one line of a .rejected sidecar.
type sidecarEntry struct {
	RejectedAt ZonedTimestamp  `json:"rejected_at"`
	File       string          `json:"file"`
	What       string          `json:"what"`
	Reason     string          `json:"reason"`
	Record     json.RawMessage `json:"record"`
}

// moveRejected appends the rejected parts of the file at path to its
// sidecar. The sidecar is written (and flushed) before the caller rewrites
// the file without them, so a crash in between leaves a part in both
// places, never in neither. Call it with the file's lock held.
func moveRejected(path string, bad []rejected) error {
	if len(bad) == 0 {
		return nil
	}
	at := ZonedTimestamp{time.Now()}
	lines := make([][]byte, 0, len(bad))
	for _, b := range bad {
		var rec bytes.Buffer
		if err := json.Compact(&rec, b.raw); err != nil {
			// Not reachable: raw was cut from a document that parsed.
			return fmt.Errorf("cannot set aside %s of %s: %w", b.what, path, err)
		}
		line, err := json.Marshal(sidecarEntry{RejectedAt: at, File: filepath.Base(path), What: b.what, Reason: b.reason, Record: rec.Bytes()})
		if err != nil {
			return err
		}
		lines = append(lines, append(line, '\n'))
	}
	return appendLines(path+rejectedSuffix, true, lines...)
}

// recordLabel names worker record i (0-based) for a warning: by position,
// which always exists, and by name when it has one (quoted: it may hold
// anything, terminal escapes included).
func recordLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("worker record %d", i+1)
	}
	return fmt.Sprintf("worker record %d (name %q)", i+1, name)
}

// timeWritable reports whether t survives being written and read back:
// swarm.py's isoformat has four-digit years only (Python's MINYEAR to
// MAXYEAR), in local time and in UTC. A record holding another time (a
// hand-written Unix number, say) would load now and fail after the next
// write, so it is set aside at once instead.
func timeWritable(t time.Time) bool {
	if t.IsZero() {
		return true
	}
	for _, v := range []time.Time{t, t.Local(), t.UTC()} {
		if v.Year() < 1 || v.Year() > 9999 {
			return false
		}
	}
	return true
}
