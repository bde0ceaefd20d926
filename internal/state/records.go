package state

import (
	"bytes"
	"encoding/json"
)

// A command about one worker (status, kill, peek, ...) needs one record,
// and a listing wants to ask tmux about the workers' server while their
// records are decoded: both find records in state.json without decoding
// it whole. recordSpans splits the file into its records as
// decodeRegistry finds them; it scans bytes (strings and nesting only),
// which is exact on a file that is valid JSON (Get checks that first) and
// never fails or loops on one that is not.

// recordSpans returns the records of the list of workers in data, still
// encoded: the elements of a top-level list, or of the last member of a
// top-level object whose key is "workers" as encoding/json matches a
// field's name (any case). ok is false when data is no such document
// (decodeRegistry then decides what it is).
func recordSpans(data []byte) (records [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i == len(data) {
		return nil, true
	}
	switch data[i] {
	case '{':
		return workersMember(data, i)
	case '[':
		records, _, ok = arrayElements(data, i)
		return records, ok
	}
	return nil, false
}

// workersMember returns the elements of the last "workers" member of the
// object at data[i] (none when it has none, or it is null). Each member's
// value is passed over once: the list's elements as they are found.
func workersMember(data []byte, i int) (records [][]byte, ok bool) {
	list := true // the last "workers" member is a list, or null (or none)
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		end, ok := skipValue(data, i)
		if !ok || data[i] != '"' {
			return nil, false
		}
		key := data[i:end]
		i = skipSpace(data, end)
		if i == len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		if !isWorkersKey(key) {
			end, ok = skipValue(data, i)
		} else if i < len(data) && data[i] == '[' {
			records, end, ok = arrayElements(data, i)
			list = true
		} else {
			// null is no records; anything else is no list of workers
			// (unless a later member is).
			records = nil
			end, ok = skipValue(data, i)
			list = ok && bytes.Equal(data[i:end], []byte("null"))
		}
		if !ok {
			return nil, false
		}
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if !list || i == len(data) {
		return nil, false
	}
	return records, true
}

// isWorkersKey reports whether an encoded key names Registry's workers
// field for encoding/json: "workers" in any case, escapes decoded.
func isWorkersKey(key []byte) bool {
	var s string
	if bytes.IndexByte(key, '\\') < 0 {
		s = string(key[1 : len(key)-1])
	} else if json.Unmarshal(key, &s) != nil {
		return false
	}
	return bytes.EqualFold([]byte(s), []byte("workers"))
}

// arrayElements returns the elements of the array at data[i], still
// encoded, and the end of the array.
func arrayElements(data []byte, i int) (out [][]byte, end int, ok bool) {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end, ok := skipValue(data, i)
		if !ok {
			return nil, end, false
		}
		out = append(out, data[i:end])
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if i == len(data) {
		return nil, i, false
	}
	return out, i + 1, true
}

// skipValue returns the end of the JSON value at data[i].
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		return skipNested(data, i)
	}
	// A number or a literal; a byte that ends one cannot start one, and
	// is no value: the callers' loops go on only past a value, so they
	// end on any input (a file like [1, x}] once kept ls looping).
	start := i
	for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != ']' && data[i] != '}' && data[i] != ':' {
		i++
	}
	return i, i > start
}

// skipString returns the end of the string at data[i] (its quote). The
// quote that ends it is the first one after an even run of backslashes:
// found by bytes.IndexByte, which reads many bytes at a time.
func skipString(data []byte, i int) (int, bool) {
	from := i + 1
	for from < len(data) {
		q := bytes.IndexByte(data[from:], '"')
		if q < 0 {
			break
		}
		q += from
		escapes := 0
		for j := q - 1; j >= from && data[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return q + 1, true
		}
		from = q + 1
	}
	return len(data), false
}

// nestedStop marks the bytes skipNested stops at; it passes over the
// others (white space, numbers, literals, commas, colons) one table look
// each.
var nestedStop = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipNested returns the end of the object or array at data[i].
func skipNested(data []byte, i int) (int, bool) {
	depth := 0
	for i < len(data) {
		if !nestedStop[data[i]] {
			i++
			continue
		}
		switch data[i] {
		case '"':
			end, ok := skipString(data, i)
			if !ok {
				return end, false
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return i, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// findRecord returns the first record of data that decodes to a usable
// record named name, as Load and then Registry.Find would find it,
// decoding only the records that can be it: a record whose bytes hold
// neither the quoted name nor an escape cannot decode to a valid name.
// ok is false when data is not valid JSON, or not a registry: Load must
// read it (and warn, and back it up).
func findRecord(data []byte, name string) (w *Worker, ok bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, true
	}
	if !validJSON(data) {
		return nil, false
	}
	records, ok := recordSpans(data)
	if !ok {
		return nil, false
	}
	quoted := []byte(`"` + name + `"`)
	for _, raw := range records {
		if !bytes.Contains(raw, quoted) && bytes.IndexByte(raw, '\\') < 0 {
			continue
		}
		if rec, n, err := decodeWorker(raw); err == nil && n == name {
			return &rec, true
		}
	}
	return nil, true
}

// firstWindowRecord returns the first record in data that decodes and
// has a tmux window, looking at no more than a few records: the listing's
// guess of which tmux server to ask while the file is decoded (LoadEarly).
func firstWindowRecord(data []byte) (*Worker, bool) {
	records, ok := recordSpans(data)
	if !ok {
		return nil, false
	}
	for _, raw := range records[:min(len(records), maxEarlyRecords)] {
		if w, _, err := decodeWorker(raw); err == nil && w.Tmux != nil {
			return &w, true
		}
	}
	return nil, false
}

// maxEarlyRecords bounds firstWindowRecord's look: process workers first
// in the file make no guess worth decoding many records for.
const maxEarlyRecords = 8

// validJSON reports what json.Valid reports, about four times as fast:
// Get checks the whole file before it trusts recordSpans, and at 500
// workers json.Valid alone was most of its time. FuzzValidJSON holds the
// two to the same answers.
func validJSON(data []byte) bool {
	v := validator{data: data}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(data)
}

// maxJSONDepth is encoding/json's nesting limit: deeper is invalid.
const maxJSONDepth = 10000

// validator checks JSON as encoding/json's scanner does.
type validator struct {
	data []byte
	i    int
}

func (v *validator) space() { v.i = skipSpace(v.data, v.i) }

// peek is the byte at the cursor, 0 at the end (never valid there).
func (v *validator) peek() byte {
	if v.i < len(v.data) {
		return v.data[v.i]
	}
	return 0
}

func (v *validator) value(depth int) bool {
	switch c := v.peek(); {
	case c == '{' || c == '[':
		return v.nested(c, depth+1)
	case c == '"':
		return v.str()
	case c == '-' || '0' <= c && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

// nested checks an object or an array whose opening byte is open.
func (v *validator) nested(open byte, depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	v.i++
	v.space()
	if v.peek() == closing {
		v.i++
		return true
	}
	for {
		if open == '{' {
			if v.peek() != '"' || !v.str() {
				return false
			}
			if v.space(); v.peek() != ':' {
				return false
			}
			v.i++
			v.space()
		}
		if !v.value(depth) {
			return false
		}
		v.space()
		switch v.peek() {
		case ',':
			v.i++
			v.space()
		case closing:
			v.i++
			return true
		default:
			return false
		}
	}
}

// str checks a string: no control byte, valid escapes.
func (v *validator) str() bool {
	for v.i++; v.i < len(v.data); v.i++ {
		switch c := v.data[v.i]; {
		case c == '"':
			v.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if v.i++; v.i == len(v.data) {
				return false
			}
			switch v.data[v.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 0; k < 4; k++ {
					if v.i++; v.i == len(v.data) || !isHex(v.data[v.i]) {
						return false
					}
				}
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// number checks -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (v *validator) number() bool {
	if v.peek() == '-' {
		v.i++
	}
	switch c := v.peek(); {
	case c == '0':
		v.i++
	case '1' <= c && c <= '9':
		v.digits()
	default:
		return false
	}
	if v.peek() == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if c := v.peek(); c == 'e' || c == 'E' {
		v.i++
		if c := v.peek(); c == '+' || c == '-' {
			v.i++
		}
		return v.digits()
	}
	return true
}

// digits skips one or more digits.
func (v *validator) digits() bool {
	start := v.i
	for v.i < len(v.data) && '0' <= v.data[v.i] && v.data[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}

func (v *validator) literal(word string) bool {
	if !bytes.HasPrefix(v.data[v.i:], []byte(word)) {
		return false
	}
	v.i += len(word)
	return true
}
