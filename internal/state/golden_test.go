package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// goldenRalph is a loop's state.json with every field set, written by
// swarm before the loop state was split into its configuration and its
// progress. Every later swarm must read it and write it back byte for
// byte: key order, number forms (an int stays an int, 0.5 stays 0.5),
// nulls, escaping and indentation are what users' scripts, hand edits and
// swarm.py see. Never regenerate it with new code; add a field by adding
// its line where the new code writes it.
const goldenRalph = "testdata/ralph-state.golden.json"

// goldenName is the loop (and worker) the golden file describes.
const goldenName = "builder"

// installGolden copies the golden file into root as the state of loop
// goldenName, untouched, and returns its bytes.
func installGolden(t *testing.T, root string) []byte {
	t.Helper()
	golden, err := os.ReadFile(goldenRalph)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "ralph", goldenName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), golden, 0o600); err != nil {
		t.Fatal(err)
	}
	return golden
}

// TestRalphStateGolden reads the golden loop state and writes it back:
// through a read-modify-write that changes nothing, and through Load then
// Create into another loop. Both must give the same bytes, with no field
// rejected. waiting_until is written in the local zone, which the golden
// file was written in.
func TestRalphStateGolden(t *testing.T) {
	if !inZone(t, testZone) {
		return
	}
	s, warnings := newStore(t)
	golden := installGolden(t, s.Root)
	rs := s.Ralph(goldenName)
	if _, err := rs.Update(func(*Ralph) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, rs.StatePath()); got != string(golden) {
		t.Errorf("Update rewrote the golden state differently:\n%s", lineDiff(string(golden), got))
	}
	st, err := rs.Load()
	if err != nil {
		t.Fatal(err)
	}
	other := s.Ralph("copy")
	if err := other.Create(st); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, other.StatePath()); got != string(golden) {
		t.Errorf("Load then Create wrote the golden state differently:\n%s", lineDiff(string(golden), got))
	}
	if len(*warnings) > 0 {
		t.Errorf("warnings reading the golden state: %q", *warnings)
	}
}

// TestRalphGoldenHasEveryField keeps the golden file whole: every key the
// loop state writes is in it with a value that is not empty (null, 0,
// false, "", []), so a field whose form changes is caught; and it has no
// key the loop state does not know.
func TestRalphGoldenHasEveryField(t *testing.T) {
	data, err := os.ReadFile(goldenRalph)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	keys := jsonKeys(reflect.TypeFor[Ralph]())
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
		raw, ok := obj[k]
		if !ok {
			t.Errorf("the golden file has no %q", k)
			continue
		}
		switch string(raw) {
		case "null", "0", "false", `""`, "[]", "{}":
			t.Errorf("the golden file's %q is empty (%s): set it", k, raw)
		}
	}
	for k := range obj {
		if !known[k] {
			t.Errorf("the golden file has %q, which Ralph does not know", k)
		}
	}
}

// jsonKeys lists the JSON keys of a struct type's exported fields, those of
// embedded structs included (encoding/json flattens them).
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			keys = append(keys, jsonKeys(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// lineDiff shows the first lines where got differs from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
