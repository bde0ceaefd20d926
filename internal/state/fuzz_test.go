package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The seed corpora are in testdata/fuzz/<target>/, which plain `go test`
// runs: empty, invalid and duplicate names, values of the wrong type,
// times out of range, a bare list, records that are not objects, a legacy
// delivered_prompt, and garbage.

// encodeRegistry is what Store.write puts in the file.
func encodeRegistry(t *testing.T, reg *Registry) []byte {
	c := &Registry{Workers: append([]Worker{}, reg.Workers...)}
	for i := range c.Workers {
		normalize(&c.Workers[i])
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatalf("cannot encode what was decoded: %v", err)
	}
	return data
}

// checkRejected checks that set-aside parts can go to the sidecar.
func checkRejected(t *testing.T, bad []rejected) {
	for _, b := range bad {
		if !json.Valid(b.raw) || b.what == "" || b.reason == "" {
			t.Fatalf("rejected part cannot be kept: %+v", b)
		}
		if _, err := json.Marshal(sidecarEntry{What: b.what, Reason: b.reason, Record: b.raw}); err != nil {
			t.Fatalf("sidecar line: %v", err)
		}
	}
}

func FuzzDecodeRegistry(f *testing.F) {
	f.Add([]byte(`{"workers":[{"name":"a","started":"2024-01-15T10:30:00"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, bad, err := decodeRegistry(data)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error is not errCorrupt: %v", err)
			}
			// A corrupt file reads as empty: Get finds nothing in it.
			checkFindRecord(t, data, &Registry{}, nil)
			return
		}
		checkRejected(t, bad)
		// The one-pass decoding, where it answers, answers as the
		// record-by-record one does.
		if fast, ok := decodeRegistryAtOnce(data); ok {
			slow, slowBad, err := decodeRecords(data)
			if err != nil || len(slowBad) != 0 || !reflect.DeepEqual(fast.Workers, slow.Workers) && len(fast.Workers)+len(slow.Workers) > 0 {
				t.Fatalf("one pass: %+v; record by record: %+v, %+v, %v", fast.Workers, slow.Workers, slowBad, err)
			}
		}
		raws, _ := registryRecords(data)
		checkFindRecord(t, data, reg, raws)
		if len(reg.Workers)+len(bad) != len(raws) {
			t.Fatalf("%d records, %d loaded and %d set aside", len(raws), len(reg.Workers), len(bad))
		}
		seen := map[string]bool{}
		for _, w := range reg.Workers {
			if ValidateName(w.Name) != nil || seen[w.Name] {
				t.Fatalf("accepted record named %q", w.Name)
			}
			seen[w.Name] = true
		}
		// What loads is written back and loads again, unchanged from the
		// first write on: no record turns invalid by being saved.
		once := encodeRegistry(t, reg)
		reg2, bad2, err := decodeRegistry(once)
		if err != nil || len(bad2) != 0 || len(reg2.Workers) != len(reg.Workers) {
			t.Fatalf("written registry reads back as %v, %+v, %v:\n%s", reg2, bad2, err, once)
		}
		if twice := encodeRegistry(t, reg2); !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the file:\n%s\n---\n%s", once, twice)
		}
	})
}

// checkFindRecord checks that findRecord, where it answers, finds the
// record decodeRegistry and then Registry.Find find, for every name a
// record has or seems to have.
func checkFindRecord(t *testing.T, data []byte, reg *Registry, raws []json.RawMessage) {
	t.Helper()
	names := []string{"a", "b"}
	for _, w := range reg.Workers {
		names = append(names, w.Name)
	}
	for _, raw := range raws {
		names = append(names, probeName(raw))
	}
	for _, name := range names {
		if ValidateName(name) != nil {
			continue
		}
		got, ok := findRecord(data, name)
		if !ok {
			continue
		}
		if want := reg.Find(name); !reflect.DeepEqual(got, want) {
			t.Fatalf("findRecord(%q) = %+v, decodeRegistry finds %+v", name, got, want)
		}
	}
}

// encodeRalph is what RalphStore.write puts in the file.
func encodeRalph(t *testing.T, st *Ralph) []byte {
	c := *st
	if c.IterationDurations == nil {
		c.IterationDurations = []float64{}
	}
	if c.Checks == nil {
		c.Checks = []string{}
	}
	if c.TasksDone == nil {
		c.TasksDone = []TaskDone{}
	}
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		t.Fatalf("cannot encode what was decoded: %v", err)
	}
	return data
}

func FuzzDecodeRalph(f *testing.F) {
	f.Add([]byte(`{"worker_name":"w","prompt_file":"/p","max_iterations":3,"status":"running"}`))
	fb := &Ralph{LoopConfig: LoopConfig{WorkerName: "w", PromptFile: "/p", MaxIterations: 7, Checks: []string{"make test"}},
		LoopProgress: LoopProgress{Status: RalphRunning}}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, bad, err := decodeRalph(data, nil)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error is not errCorrupt: %v", err)
			}
			return
		}
		checkRejected(t, bad)
		if _, bad2, err := decodeRalph(data, fb); err != nil || len(bad2) != len(bad) {
			t.Fatalf("with a fallback: %d set aside (%v), without: %d", len(bad2), err, len(bad))
		}
		once := encodeRalph(t, st)
		if strings.Contains(string(once), `"`+legacyDeliveredKey+`"`) {
			t.Fatalf("the prompt is written into the state:\n%s", once)
		}
		st2, bad2, err := decodeRalph(once, nil)
		if err != nil || len(bad2) != 0 {
			t.Fatalf("written state reads back as %+v, %v:\n%s", bad2, err, once)
		}
		if twice := encodeRalph(t, st2); !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the file:\n%s\n---\n%s", once, twice)
		}
	})
}
