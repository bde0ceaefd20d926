package main

import (
	"encoding/json"
	"testing"
)

// A host's lost and not-started workers read as the host marked them:
// ls --all-hosts' table says stopped(lost) and stopped(not-started) for
// them as the host's own ls does (issue 27 item 2: a --no-run loop says
// it has not started, wherever it is listed).
func TestHostRowsKeepLostAndNotStarted(t *testing.T) {
	for _, c := range []struct{ row, want string }{
		{`{"name":"a","status":"stopped","cmd":["x"],"started":"2026-11-28T10:00:00","tmux":{"session":"s","window":"a","socket":null},"lost":true}`, "stopped(lost)"},
		{`{"name":"b","status":"stopped","cmd":["x"],"started":"2026-11-28T10:00:00","tmux":{"session":"s","window":"b","socket":null},"not_started":true}`, "stopped(not-started)"},
		{`{"name":"c","status":"stopped","cmd":["x"],"started":"2026-11-28T10:00:00","pid":7,"exit_code":3}`, "stopped(3)"},
	} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.row), &obj); err != nil {
			t.Fatal(err)
		}
		if got := workerCells(liveOf(obj))[1]; got != c.want {
			t.Errorf("%s: status cell %q, want %q", c.row, got, c.want)
		}
	}
}
