package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// legacyDeliveredKey is where swarm kept the delivered prompt in the loop
// state before it had a file of its own.
const legacyDeliveredKey = "delivered_prompt"

// decodeRalph reads ralph/N/state.json. It fails (errCorrupt) only when the
// file is not a JSON object. A field that is invalid on its own (a value of
// the wrong type, a time that cannot be written back) is returned in bad
// and takes fb's value, or zero without fb: one mistyped field, say from a
// hand edit of max_iterations, must not cost the loop its configuration.
func decodeRalph(data []byte, fb *Ralph) (*Ralph, []rejected, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	if obj == nil {
		return nil, nil, fmt.Errorf("%w: not a JSON object", errCorrupt)
	}
	legacy := takeLegacyDelivered(obj)
	st := &Ralph{}
	var bad []rejected
	if err := json.Unmarshal(data, st); err != nil || st.badTime() != "" {
		if st, bad, err = decodeRalphFields(obj, fb); err != nil {
			return nil, nil, err
		}
	}
	st.legacyDelivered = legacy
	return st, bad, nil
}

// takeLegacyDelivered removes delivered_prompt from obj and returns it ("" if
// it is not a string).
func takeLegacyDelivered(obj map[string]json.RawMessage) string {
	raw, ok := obj[legacyDeliveredKey]
	if !ok {
		return ""
	}
	delete(obj, legacyDeliveredKey)
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// decodeRalphFields decodes obj one field at a time to find the invalid
// ones, then decodes the rest, with fb's values in place of the invalid.
// Keys are visited sorted, so the warnings come in a stable order.
func decodeRalphFields(obj map[string]json.RawMessage, fb *Ralph) (*Ralph, []rejected, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var fbObj map[string]json.RawMessage
	var bad []rejected
	for _, k := range keys {
		one, err := json.Marshal(map[string]json.RawMessage{k: obj[k]})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errCorrupt, err)
		}
		if reason := fieldProblem(one); reason != "" {
			bad = append(bad, rejected{what: fmt.Sprintf("field %q", k), reason: reason, raw: one})
			delete(obj, k)
			if fbObj == nil {
				fbObj = fallbackFields(fb)
			}
			if v, ok := fbObj[k]; ok {
				obj[k] = v
			}
		}
	}
	rest, err := json.Marshal(obj)
	st := &Ralph{}
	if err == nil {
		err = json.Unmarshal(rest, st)
	}
	if err != nil {
		// Each remaining field decoded on its own: not reachable unless
		// the fields interact, and then the file is beyond repair.
		return nil, nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return st, bad, nil
}

// fieldProblem says why {"key": value} cannot be a field of the loop state,
// or "" if it can.
func fieldProblem(one []byte) string {
	var probe Ralph
	if err := json.Unmarshal(one, &probe); err != nil {
		return fileFieldError(err).Error()
	}
	if f := probe.badTime(); f != "" {
		return f + " is out of range"
	}
	return ""
}

// fileFieldError words a decoding error by the file's keys alone:
// encoding/json names the embedded struct a field is in
// ("Ralph.LoopConfig.max_iterations"), which is no part of the file and
// was no part of the message before the state was split in two (the
// message is kept in state.json.rejected).
func fileFieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		for _, embedded := range []reflect.Type{reflect.TypeFor[LoopConfig](), reflect.TypeFor[LoopProgress]()} {
			te.Field = strings.TrimPrefix(te.Field, embedded.Name()+".")
		}
	}
	return err
}

// fallbackFields returns fb as a JSON object's fields; none without fb.
func fallbackFields(fb *Ralph) map[string]json.RawMessage {
	if fb == nil {
		return map[string]json.RawMessage{}
	}
	data, err := json.Marshal(fb)
	var obj map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &obj) != nil {
		return map[string]json.RawMessage{}
	}
	return obj
}

// badTime names the first time field that would not survive being written
// and read back, or returns "".
func (st *Ralph) badTime() string {
	fields := []struct {
		key string
		t   time.Time
	}{
		{"started", st.Started.Time},
		{"last_iteration_started", st.LastIterationStart.Time},
		{"last_iteration_ended", st.LastIterationEnd.Time},
		{"last_screen_change", st.LastScreenChange.Time},
	}
	for _, f := range fields {
		if !timeWritable(f.t) {
			return f.key
		}
	}
	return ""
}
