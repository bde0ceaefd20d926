package proc

import (
	"bytes"
	"os"
	"strconv"
)

// WithEnv returns the processes whose environment, as they were started,
// holds KEY=VALUE: a spawn that puts a fresh token in a worker's
// environment before starting it can find the worker (and what it
// started, which inherits the token) even if the spawn died before it
// recorded the pid. Each is identified before its environment is read and
// confirmed after, so a pid reused meanwhile is not returned. Only
// processes whose environment this user may read are seen; without /proc
// (macOS) none are.
func WithEnv(key, value string) []Target {
	all, ok := scan()
	if !ok {
		return nil
	}
	want := []byte(key + "=" + value)
	var out []Target
	for _, st := range all {
		if st.start == 0 || st.dead() {
			continue
		}
		t := targetOf(st)
		data, err := os.ReadFile("/proc/" + strconv.Itoa(st.pid) + "/environ")
		if err != nil || !hasEntry(data, want) || !t.Exists() {
			continue
		}
		out = append(out, t)
	}
	return out
}

// hasEntry reports whether environ (NUL-separated entries) holds entry.
func hasEntry(environ, entry []byte) bool {
	for _, e := range bytes.Split(environ, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}
