package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Get finds the record Load and then Registry.Find would, in every shape
// of state.json decodeRegistry reads.
func TestGetFindsWhatLoadFinds(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"object":            `{"workers": [{"name": "a", "status": "running"}, {"name": "b", "cmd": ["x"]}]}`,
		"bare list":         `[{"name": "a"}, 5, null, {"name": "b", "tags": ["t"]}]`,
		"duplicates":        `{"workers": [{"name": "b", "status": "first"}, {"name": "b", "status": "second"}]}`,
		"invalid first":     `{"workers": [{"name": "b", "pid": "not a number"}, {"name": "b", "status": "valid"}]}`,
		"escaped name":      `{"workers": [{"name": "\u0062", "status": "escaped"}]}`,
		"name in a value":   `{"workers": [{"name": "a", "tags": ["b"]}, {"name": "b", "status": "mine"}]}`,
		"key in any case":   `{"WorKers": [{"name": "b"}]}`,
		"key escaped":       `{"w\u006frkers": [{"name": "b"}]}`,
		"last key wins":     `{"workers": [{"name": "a"}], "workers": [{"name": "b", "status": "last"}]}`,
		"first key only":    `{"workers": [{"name": "b"}], "Workers": [{"name": "a"}]}`,
		"other keys":        `{"version": {"x": [1, "]"]}, "workers": [{"name": "b", "env": {"K": "\"}"}}]}`,
		"workers null":      `{"workers": null}`,
		"no workers":        `{"other": 1}`,
		"empty":             ``,
		"white space":       " \n\t ",
		"empty list":        `[]`,
		"truncated":         `{"workers": [{"name": "b"}, {"name": "c"`,
		"trailing garbage":  `{"workers": [{"name": "b"}]} x`,
		"top-level number":  `5`,
		"top-level null":    `null`,
		"workers a string":  `{"workers": "b"}`,
		"record of a list":  `{"workers": [["b"], {"name": "b", "status": "ok"}]}`,
		"name out of range": `{"workers": [{"name": "b", "started": 1e13}, {"name": "b", "status": "ok"}]}`,
	}
	for label, content := range files {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			for _, name := range []string{"a", "b", "c", "../b"} {
				fast, slow := NewStore(t.TempDir(), nil), NewStore(t.TempDir(), nil)
				for _, s := range []*Store{fast, slow} {
					writeFile(t, filepath.Join(s.Root, "state.json"), content)
				}
				got, err := fast.Get(name)
				reg, lerr := slow.Load()
				if lerr != nil {
					t.Fatal(lerr)
				}
				want := reg.Find(name)
				if want == nil {
					if !errors.Is(err, ErrNotFound) || got != nil {
						t.Errorf("Get(%q) = %+v, %v; Load finds none", name, got, err)
					}
					continue
				}
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("Get(%q) = %+v, %v; Load finds %+v", name, got, err, want)
				}
			}
		})
	}
}

// Get decodes the worker's record, not the others: an invalid record of
// another worker is neither looked at nor warned about (Load warns).
func TestGetReadsOneRecord(t *testing.T) {
	t.Parallel()
	s, warnings := newStore(t)
	var records []string
	for i := 0; i < 50; i++ {
		records = append(records, fmt.Sprintf(`{"name": "w%d", "status": "running"}`, i))
	}
	records = append(records, `{"name": "typed", "pid": "not a number"}`)
	writeFile(t, filepath.Join(s.Root, "state.json"), `{"workers": [`+strings.Join(records, ",\n")+`]}`)
	w, err := s.Get("w7")
	if err != nil || w.Name != "w7" || w.Status != "running" {
		t.Fatalf("Get(w7) = %+v, %v", w, err)
	}
	if len(*warnings) != 0 {
		t.Fatalf("Get(w7) warned about another record: %q", *warnings)
	}
	// A corrupt file is read as Load reads it: warned about, backed up.
	writeFile(t, filepath.Join(s.Root, "state.json"), `{"workers": [{"name": "w7"}`)
	if _, err := s.Get("w7"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(w7) of a corrupt file: %v", err)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "corrupt state file") {
		t.Fatalf("warnings = %q", *warnings)
	}
}

// firstWindowRecord gives the first decodable record with a tmux window,
// whatever comes before it.
func TestFirstWindowRecord(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ data, want string }{
		{`{"workers": [{"name": "p", "pid": 5}, {"name": "t", "tmux": {"session": "s", "window": "t"}}]}`, "t"},
		{`[5, {"name": "t", "tmux": {"session": "s", "window": "t"}}]`, "t"},
		{`{"workers": [{"name": "p", "pid": 5}]}`, ""},
		{`{"workers": [{"name": "t", "tmux": {"session": "s", "window": "t"}`, ""},
		{``, ""},
	} {
		w, ok := firstWindowRecord([]byte(c.data))
		if got := ""; ok {
			got = w.Name
			if got != c.want {
				t.Errorf("firstWindowRecord(%s) = %q, want %q", c.data, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("firstWindowRecord(%s): none, want %q", c.data, c.want)
		}
	}
}

// validJSON answers as json.Valid does.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{``, ` `, `{}`, `[]`, `{"a":1}`, `[1,2,]`, `{"a" 1}`, `"\u00e9"`, `"\u00g9"`, `"a` + "\x01" + `"`,
		`-0.5e+10`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nulll`, `[{"a":[true,false,null]}]`, "\xff", `"\xff"`, `{"a":1,}`,
		`[` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth+1), strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", data, got, want)
		}
	})
}

// On valid JSON, recordSpans finds the records encoding/json finds
// (registryRecords), and fails where it finds no list of workers: with
// duplicate, escaped and any-case "workers" keys, strings holding quotes,
// backslashes and brackets, and values of every kind around them.
func FuzzRecordSpans(f *testing.F) {
	for _, s := range []string{``, `[]`, `{}`, `null`, `5`, `"x"`, `[1, "a", {"b": [2]}, null]`,
		`{"workers": [{"name": "a"}], "workers": [{"name": "b"}]}`,
		`{"workers": "x", "workers": [{"name": "b"}]}`,
		`{"workers": [{"name": "b"}], "workers": "x"}`,
		`{"workers": [{"name": "b"}], "workers": null}`,
		`{"WorKers": [1], "w\u006frkers": [2, 3]}`,
		`{"other": {"workers": [9]}, "workers": [{"k": "a\\"}, {"k": "a\"]}"}, {"k": "\\\"["}]}`,
		`{"workers": {"name": "a"}}`, `{"workers": 5}`, `{"workers": []}`, ` [ { } , [ ] ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			recordSpans(data) // it must not fail or loop: what it says is not asked
			return
		}
		want, err := registryRecords(data)
		got, ok := recordSpans(data)
		if ok != (err == nil) {
			t.Fatalf("recordSpans(%q) ok %v; encoding/json: %v", data, ok, err)
		}
		if len(got) != len(want) {
			t.Fatalf("recordSpans(%q): %d records, encoding/json finds %d", data, len(got), len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("recordSpans(%q) record %d: %q, encoding/json: %q", data, i, got[i], want[i])
			}
		}
	})
}

// BenchmarkGet500 reads one record of a registry of 500 workers, with
// the parts of it apart:
//
//	go test -run XXX -bench Get500 ./internal/state
func BenchmarkGet500(b *testing.B) {
	s := NewStore(b.TempDir(), nil)
	err := s.Update(func(r *Registry) error {
		for i := 0; i < 500; i++ {
			r.Workers = append(r.Workers, Worker{Name: fmt.Sprintf("w%d", i), Status: StatusRunning, Cmd: []string{"claude", "--flag"},
				Started: Now(), Cwd: "/home/user/project", Tags: []string{"t"},
				Tmux:     &TmuxInfo{Session: "swarm-0123abcd", Window: fmt.Sprintf("w%d", i), Socket: "swarm"},
				Metadata: map[string]any{"tmux_window_id": fmt.Sprintf("@%d", i), "tmux_window_token": "0123456789abcdef0123456789abcdef"}})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	data, err := s.read()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Get", func(b *testing.B) {
		for range b.N {
			if _, err := s.Get("w250"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for range b.N {
			s.read()
		}
	})
	b.Run("validJSON", func(b *testing.B) {
		for range b.N {
			validJSON(data)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for range b.N {
			json.Valid(data)
		}
	})
	b.Run("recordSpans", func(b *testing.B) {
		for range b.N {
			recordSpans(data)
		}
	})
	b.Run("Load", func(b *testing.B) {
		for range b.N {
			s.Load()
		}
	})
}
