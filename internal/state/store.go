package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// ErrNotFound is returned for a worker that has no record.
var ErrNotFound = errors.New("worker not found")

// Store is the worker registry under one state root.
type Store struct {
	Root string
	// Warn receives warnings such as a corrupt state file being reset.
	// Nil discards them.
	Warn func(msg string)

	notesOnce sync.Once
	notes     *notices
}

// NewStore returns the registry under root.
func NewStore(root string, warn func(string)) *Store {
	return &Store{Root: root, Warn: warn}
}

func (s *Store) statePath() string { return filepath.Join(s.Root, "state.json") }
func (s *Store) lockPath() string  { return filepath.Join(s.Root, "state.lock") }

// LogsDir is where process workers' stdout and stderr logs live.
func (s *Store) LogsDir() string { return filepath.Join(s.Root, "logs") }

func (s *Store) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
	}
}

// shared returns what this store and its RalphStores have already warned
// about, so one command warns once.
func (s *Store) shared() *notices {
	s.notesOnce.Do(func() { s.notes = &notices{} })
	return s.notes
}

// Load returns a snapshot of the registry. It takes no lock (writes are
// atomic renames, so a reader sees a whole file) and never changes the
// state: listing it must not. What cannot be used is left out, with a
// warning, for the next Update to deal with: an invalid record, or all of a
// corrupt file, which is backed up at once (state.json.corrupted, as
// swarm.py's ls does) so its content is safe whatever happens next; once
// per content for the life of the store, so a monitor reading it every tick
// does not look through the backups each time.
func (s *Store) Load() (*Registry, error) { return s.LoadEarly(nil) }

// LoadEarly is Load; early, when set, is first called with the first
// record of the file that has a tmux window, found by a quick look before
// the file is decoded whole: a listing asks tmux about that worker's
// server meanwhile (worker.Manager.List). On a corrupt file early may see
// a record Load then leaves out.
func (s *Store) LoadEarly(early func(*Worker)) (*Registry, error) {
	data, err := s.read()
	if err != nil {
		return nil, err
	}
	if early != nil {
		if w, ok := firstWindowRecord(data); ok {
			early(w)
		}
	}
	return s.decode(data), nil
}

// read returns state.json's content, nil when there is none.
func (s *Store) read() ([]byte, error) {
	if err := CheckRoot(s.Root); err != nil {
		return nil, err
	}
	data, _, err := readIfExists(s.statePath())
	return data, err
}

// decode is Load's reading of data, with its warnings.
func (s *Store) decode(data []byte) *Registry {
	reg, bad, err := decodeRegistry(data)
	if err != nil {
		kept := "could not back it up"
		if name, berr := s.shared().keepCorruptOnce(s.statePath(), data); berr == nil {
			kept = "backed up to " + name
		}
		s.shared().warnOnce(s.Warn, data, fmt.Sprintf("corrupt state file %s (%s), read as empty; the next change resets it", s.statePath(), kept))
		return &Registry{}
	}
	for _, b := range bad {
		s.shared().warnOnce(s.Warn, data, fmt.Sprintf("ignoring invalid %s in %s: %s", b.what, s.statePath(), b.reason))
	}
	return reg
}

// Update runs fn on the current registry while holding the state lock and
// writes the result back atomically if fn returns nil. No other swarm
// process can write between the read and the write. A corrupt file is
// backed up and replaced, and invalid records are moved to the sidecar
// (state.json.rejected), only when the write happens: a failed update
// changes nothing.
func (s *Store) Update(fn func(*Registry) error) error {
	if err := MakeDir(s.Root, s.Root); err != nil {
		return err
	}
	return withLock(s.lockPath(), func() error {
		data, _, err := readIfExists(s.statePath())
		if err != nil {
			return err
		}
		reg, bad, derr := decodeRegistry(data)
		if derr != nil {
			reg = &Registry{}
		}
		if err := fn(reg); err != nil {
			return err
		}
		notes, err := s.setAside(data, derr != nil, bad)
		if err != nil {
			return err
		}
		if err := s.write(reg); err != nil {
			return err
		}
		for _, n := range notes {
			s.warn(n)
		}
		sweepStaleTemps(s.statePath())
		return nil
	})
}

// setAside keeps what the coming write drops: a corrupt file's content as a
// backup, invalid records in the sidecar. It returns the warnings to give
// once the write has succeeded.
func (s *Store) setAside(data []byte, corrupt bool, bad []rejected) ([]string, error) {
	if corrupt {
		if _, err := keepCorrupt(s.statePath(), data); err != nil {
			return nil, fmt.Errorf("corrupt state file %s, and backing it up failed: %w", s.statePath(), err)
		}
		return []string{"corrupt state file, resetting"}, nil
	}
	if err := moveRejected(s.statePath(), bad); err != nil {
		return nil, err
	}
	var notes []string
	for _, b := range bad {
		notes = append(notes, fmt.Sprintf("moved invalid %s from %s to %s: %s", b.what, s.statePath(), s.statePath()+rejectedSuffix, b.reason))
	}
	return notes, nil
}

// Get returns a copy of the named worker's record: the one Load and then
// Registry.Find would return, found decoding only the records that can be
// it (findRecord), so a command about one worker does not decode all of
// them. A file that is not valid JSON, or a name no record can have, is
// read as Load reads it, with its warnings; a valid file's invalid
// records other than the worker's are not looked at, nor warned about.
func (s *Store) Get(name string) (*Worker, error) {
	data, err := s.read()
	if err != nil {
		return nil, err
	}
	var w *Worker
	ok := false
	if ValidateName(name) == nil {
		w, ok = findRecord(data, name)
	}
	if !ok {
		w = s.decode(data).Find(name)
	}
	if w == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return w, nil
}

// decodeRegistry reads state.json: {"workers": [...]}, a bare list (some
// swarm.py versions), or an empty file. It fails (errCorrupt) only when the
// file as a whole is not such a document. A record that is invalid on its
// own is returned in bad and the others load normally: one broken record
// must not cost the whole registry. Of two records with one name the first
// is kept, the one Find has always returned.
func decodeRegistry(data []byte) (*Registry, []rejected, error) {
	if reg, ok := decodeRegistryAtOnce(data); ok {
		return reg, nil, nil
	}
	return decodeRecords(data)
}

// decodeRegistryAtOnce decodes a registry all of whose records are usable;
// ok is false when one is not (or the file is not a registry), and
// decodeRecords, which sets such records aside, decides. The file is
// checked once (validJSON) and its records found (recordSpans, as Get
// finds one) before each is decoded: encoding/json over the whole file
// and then its list scanned it twice before decoding it (500 workers:
// 5.9 -> 5.2 ms, BenchmarkDecodeRegistry). Decoding the records on both
// processors of the 2-core machine gained nothing measurable.
func decodeRegistryAtOnce(data []byte) (*Registry, bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Registry{}, true
	}
	if !validJSON(data) {
		return nil, false
	}
	spans, ok := recordSpans(data)
	if !ok {
		return nil, false
	}
	var workers []Worker
	if len(spans) > 0 {
		workers = make([]Worker, len(spans))
	}
	seen := make(map[string]bool, len(workers))
	for i, raw := range spans {
		w := &workers[i]
		if unmarshalWorker(raw, w) != nil || checkWorker(*w) != nil || seen[w.Name] {
			return nil, false
		}
		seen[w.Name] = true
	}
	return &Registry{Workers: workers}, true
}

// decodeRecords decodes state.json record by record (decodeRegistry).
func decodeRecords(data []byte) (*Registry, []rejected, error) {
	raws, err := registryRecords(data)
	if err != nil {
		return nil, nil, err
	}
	reg := &Registry{}
	var bad []rejected
	seen := map[string]int{}
	for i, raw := range raws {
		w, name, err := decodeWorker(raw)
		if j, dup := seen[name]; err == nil && dup {
			err = fmt.Errorf("duplicate name (record %d has it too)", j+1)
		}
		if err != nil {
			bad = append(bad, rejected{what: recordLabel(i, name), reason: err.Error(), raw: raw})
			continue
		}
		seen[name] = i
		reg.Workers = append(reg.Workers, w)
	}
	return reg, bad, nil
}

// registryRecords splits state.json into its records, still encoded.
func registryRecords(data []byte) ([]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	list := data
	switch {
	case len(data) == 0:
		return nil, nil
	case data[0] == '{':
		var top struct {
			Workers json.RawMessage `json:"workers"`
		}
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("%w: %w", errCorrupt, err)
		}
		list = bytes.TrimSpace(top.Workers)
		if len(list) == 0 || bytes.Equal(list, []byte("null")) {
			return nil, nil
		}
	case data[0] != '[':
		return nil, fmt.Errorf("%w: neither an object nor a list", errCorrupt)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list, &raws); err != nil {
		return nil, fmt.Errorf("%w: no list of workers: %w", errCorrupt, err)
	}
	return raws, nil
}

// decodeWorker decodes one record and checks it can be used: it has a
// valid name (names become paths and tmux targets) and values that will
// survive being written back. It returns the name, or for a record that
// does not decode, whatever name it seems to carry (for the warning).
func decodeWorker(raw json.RawMessage) (Worker, string, error) {
	var w Worker
	if err := unmarshalWorker(raw, &w); err != nil {
		return w, probeName(raw), err
	}
	return w, w.Name, checkWorker(w)
}

// checkWorker reports why a decoded record cannot be used, or nil.
func checkWorker(w Worker) error {
	switch {
	case w.Name == "":
		return errors.New("no name")
	case !timeWritable(w.Started.Time):
		return fmt.Errorf("started is out of range (%s)", w.Started.Time)
	}
	return ValidateName(w.Name)
}

// probeName returns the "name" of a record that did not decode, if it is a
// string. Its own decoding error is the one already reported.
func probeName(raw json.RawMessage) string {
	var probe struct {
		Name any `json:"name"`
	}
	_ = json.Unmarshal(raw, &probe) // its decoding error is the one already reported (above)
	name, _ := probe.Name.(string)
	return name
}

func (s *Store) write(reg *Registry) error {
	if reg.Workers == nil {
		reg.Workers = []Worker{}
	}
	for i := range reg.Workers {
		normalize(&reg.Workers[i])
	}
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.statePath(), append(data, '\n'))
}
