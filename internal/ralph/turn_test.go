package ralph

import (
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// A continuation of the same session (--same-session) is a new turn: the
// session is the same value, where the output stands carries over, and
// every other field of the turn starts at its zero value, whatever it was
// in the turn before. A field added to turn later is fresh in a
// continuation without anyone remembering to reset it.
func TestNextTurnIsFreshButForWhereTheOutputStands(t *testing.T) {
	t.Parallel()
	prev := &turn{session: &session{}}
	v := reflect.ValueOf(prev).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Name != "session" {
			fillNonZero(t, v.Field(i))
		}
	}
	started := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	next := prev.next(started, "continue")
	if next.session != prev.session {
		t.Fatal("the continuation has a session of its own")
	}
	if next.iter != prev.iter+1 || next.prompt != "continue" || !next.started.Equal(started) {
		t.Fatalf("iteration %d prompt %q started %v", next.iter, next.prompt, next.started)
	}
	if next.off != prev.off || next.baseTurns != prev.baseTurns {
		t.Fatalf("output offset %d, base turns %d; want %d, %d carried over", next.off, next.baseTurns, prev.off, prev.baseTurns)
	}
	carried := map[string]bool{"session": true, "iter": true, "started": true, "prompt": true, "off": true, "baseTurns": true, "lastChange": true}
	nv := reflect.ValueOf(next).Elem()
	for i := 0; i < nv.NumField(); i++ {
		if name := nv.Type().Field(i).Name; !carried[name] && !nv.Field(i).IsZero() {
			t.Errorf("%s carried over into the continuation", name)
		}
	}
	if !next.lastChange.Equal(started) {
		t.Errorf("the continuation's screen last changed at %v, not when it started", next.lastChange)
	}
}

// fillNonZero sets an unexported field to a value other than its zero.
func fillNonZero(t *testing.T, f reflect.Value) {
	t.Helper()
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int64:
		f.SetInt(7)
	case reflect.String:
		f.SetString("x")
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	case reflect.Struct:
		if f.Type() == reflect.TypeOf(time.Time{}) {
			f.Set(reflect.ValueOf(time.Unix(1, 0)))
			return
		}
		if f.NumField() == 0 {
			t.Fatalf("no non-zero value for %s", f.Type())
		}
		fillNonZero(t, f.Field(f.NumField()-1))
	default:
		t.Fatalf("no non-zero value for %s", f.Type())
	}
}
