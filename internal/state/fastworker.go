package state

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Listing 500 workers spent most of its own time in encoding/json
// decoding their records (reflection, a validation of each record after
// the file's, a json.Unmarshal inside each timestamp): 3.3-6.6 ms of a
// 19 ms swarm ls. Records are written by swarm or swarm.py in one shape,
// so unmarshalWorker decodes that shape directly and leaves everything
// else to encoding/json: a record the direct path is not sure of (an
// escape in a string, a key it does not know or sees twice, a number it
// would have to convert, anything malformed) is decoded again from
// scratch by json.Unmarshal, so every record decodes to what
// json.Unmarshal gives, and every error is its error.
// FuzzUnmarshalWorker holds the two to the same results.

// unmarshalWorker decodes the record raw into w, which must be zero, as
// json.Unmarshal(raw, w) does.
func unmarshalWorker(raw []byte, w *Worker) error {
	d := recordDecoder{data: raw}
	if d.worker(w) {
		return nil
	}
	*w = Worker{}
	return json.Unmarshal(raw, w)
}

// recordDecoder reads the plain JSON of a record. Each method returns
// false on anything it does not decode exactly as encoding/json would,
// and the caller gives the record to encoding/json.
type recordDecoder struct {
	data []byte
	i    int
}

// workerKeys are Worker's keys, as its JSON tags spell them.
var workerKeys = []string{"name", "status", "cmd", "started", "cwd", "env", "tags", "tmux", "worktree", "pid", "metadata"}

func (d *recordDecoder) worker(w *Worker) bool {
	ok := d.members(workerKeys, func(i int) bool {
		switch workerKeys[i] {
		case "name":
			return d.nullableString(&w.Name)
		case "status":
			return d.nullableString(&w.Status)
		case "cmd":
			return d.strings(&w.Cmd)
		case "started":
			return d.timestamp(&w.Started)
		case "cwd":
			return d.nullableString(&w.Cwd)
		case "env":
			return d.stringMap(&w.Env)
		case "tags":
			return d.strings(&w.Tags)
		case "tmux":
			return d.tmux(&w.Tmux)
		case "worktree":
			return d.worktree(&w.Worktree)
		case "pid":
			return d.pid(&w.PID)
		case "metadata":
			return d.metadata(&w.Metadata)
		}
		return false // every key of workerKeys has its case
	})
	d.space()
	return ok && d.i == len(d.data)
}

func (d *recordDecoder) tmux(p **TmuxInfo) bool {
	if d.null() {
		return true
	}
	t := &TmuxInfo{}
	*p = t
	var socket string // NullString: null is ""
	ok := d.stringFields([]string{"session", "window", "socket"}, &t.Session, &t.Window, &socket)
	t.Socket = NullString(socket)
	return ok
}

func (d *recordDecoder) worktree(p **WorktreeInfo) bool {
	if d.null() {
		return true
	}
	t := &WorktreeInfo{}
	*p = t
	return d.stringFields([]string{"path", "branch", "base_repo"}, &t.Path, &t.Branch, &t.BaseRepo)
}

// stringFields decodes an object of plain strings (or nulls) into the
// fields dst named by names.
func (d *recordDecoder) stringFields(names []string, dst ...*string) bool {
	return d.members(names, func(i int) bool { return d.nullableString(dst[i]) })
}

// members reads an object whose keys are among names (at most 64), each
// at most once, calling value with a key's index to read its value.
// Another key, or one given twice, is left to encoding/json, which
// matches keys in any case and merges a second object into the first.
func (d *recordDecoder) members(names []string, value func(i int) bool) bool {
	var seen uint64
	return d.object(func(key []byte) bool {
		for i, name := range names {
			if string(key) == name {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return value(i)
			}
		}
		return false
	})
}

// timestamp decodes what Timestamp.UnmarshalJSON decodes from a string
// without escapes, or null; a number is left to encoding/json.
func (d *recordDecoder) timestamp(t *Timestamp) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	if !ok {
		return false
	}
	if s == "" {
		return true
	}
	v, err := ParseTimestamp(s)
	*t = v
	return err == nil
}

// pid decodes null, or a JSON number (validator.number) that is an
// integer as encoding/json reads one into an int: no fraction, no
// exponent, in range.
func (d *recordDecoder) pid(p **int) bool {
	if d.null() {
		return true
	}
	check := validator{data: d.data, i: d.i}
	if !check.number() {
		return false
	}
	n, err := strconv.Atoi(string(d.data[d.i:check.i])) // refuses "1.5", "1e3", out of range
	if err != nil {
		return false
	}
	d.i = check.i
	*p = &n
	return true
}

// metadata decodes null or an object whose values are plain strings,
// booleans and nulls as they are, and any other value by encoding/json
// (as it decodes a value into an interface).
func (d *recordDecoder) metadata(p *map[string]any) bool {
	return decodeMap(d, p, d.anyValue)
}

// stringMap decodes null or an object of plain strings.
func (d *recordDecoder) stringMap(p *map[string]string) bool {
	return decodeMap(d, p, d.str)
}

// decodeMap decodes null or an object into *p, each value by value; a
// key given twice keeps the last value, as encoding/json does.
func decodeMap[V any](d *recordDecoder, p *map[string]V, value func() (V, bool)) bool {
	if d.null() {
		return true
	}
	m := map[string]V{}
	*p = m
	return d.object(func(key []byte) bool {
		v, ok := value()
		m[string(key)] = v
		return ok
	})
}

// anyValue decodes a metadata value: see metadata.
func (d *recordDecoder) anyValue() (any, bool) {
	d.space()
	if d.i >= len(d.data) {
		return nil, false
	}
	switch d.data[d.i] {
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.null()
	}
	// Checked at its depth in the record first: json.Unmarshal of the
	// value alone would count its depth from the value, and take a
	// value 9,999 deep that makes the record too deep for encoding/json.
	check := validator{data: d.data, i: d.i}
	var v any
	if !check.value(metadataValueDepth) || json.Unmarshal(d.data[d.i:check.i], &v) != nil {
		return nil, false
	}
	d.i = check.i
	return v, true
}

// metadataValueDepth is the nesting a metadata value sits in: the
// record's object and the metadata's.
const metadataValueDepth = 2

// strings decodes null or a list of plain strings: [] is an empty list,
// not nil, as encoding/json makes it.
func (d *recordDecoder) strings(p *[]string) bool {
	if d.null() {
		return true
	}
	if !d.consume('[') {
		return false
	}
	list := []string{}
	if d.consume(']') {
		*p = list
		return true
	}
	for {
		s, ok := d.str()
		if !ok {
			return false
		}
		list = append(list, s)
		if d.consume(']') {
			*p = list
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// object reads an object, calling member with each key (a plain string)
// once the colon after it is read; member reads the value.
func (d *recordDecoder) object(member func(key []byte) bool) bool {
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return true
	}
	for {
		key, ok := d.plain()
		if !ok || !d.consume(':') || !member(key) {
			return false
		}
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// nullableString decodes a plain string, or null (which leaves *p as it
// is, as encoding/json does).
func (d *recordDecoder) nullableString(p *string) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	*p = s
	return ok
}

func (d *recordDecoder) str() (string, bool) {
	b, ok := d.plain()
	return string(b), ok
}

// plain returns the bytes of a string with no escape and no control
// byte, in valid UTF-8: decoded, it is those bytes. encoding/json
// replaces invalid UTF-8, and unescapes, which is left to it.
func (d *recordDecoder) plain() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start := d.i
	ascii := true
	for ; d.i < len(d.data); d.i++ {
		c := d.data[d.i]
		switch {
		case c == '"':
			b := d.data[start:d.i]
			d.i++
			return b, ascii || utf8.Valid(b)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// null reads null, if it comes next.
func (d *recordDecoder) null() bool { return d.literal("null") }

func (d *recordDecoder) literal(word string) bool {
	d.space()
	end := d.i + len(word)
	if end > len(d.data) || string(d.data[d.i:end]) != word {
		return false
	}
	if end < len(d.data) && !isSpace(d.data[end]) && d.data[end] != ',' && d.data[end] != '}' && d.data[end] != ']' {
		return false // nullx: left to encoding/json to refuse
	}
	d.i = end
	return true
}

func (d *recordDecoder) consume(c byte) bool {
	d.space()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *recordDecoder) space() { d.i = skipSpace(d.data, d.i) }
