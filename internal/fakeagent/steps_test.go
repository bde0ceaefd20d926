package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSteps(t *testing.T) {
	tests := []struct {
		script string
		want   []step
	}{
		{"exit 0", []step{{"exit", "0"}}},
		{"", nil},
		{" print a b ; write  x;;quiet; ", []step{{"print", "a b"}, {"write", " x"}, {"quiet", ""}}},
		{`print a\;b;exit 3`, []step{{"print", "a;b"}, {"exit", "3"}}},
		// An escaped backslash before ";" does not escape the separator.
		{`print a\\;print b`, []step{{"print", `a\\`}, {"print", "b"}}},
		{`print a\\\;b`, []step{{"print", `a\\;b`}}},
		// Other escapes are left for expand.
		{`print \n\t\e{n}`, []step{{"print", `\n\t\e{n}`}}},
		{"spin forever;spin 1s;sleep 10ms;exit", []step{{"spin", "forever"}, {"spin", "1s"}, {"sleep", "10ms"}, {"exit", ""}}},
		{"touch f;rm f;env HOME;child p;ignore-term;wait;echo;cwd",
			[]step{{"touch", "f"}, {"rm", "f"}, {"env", "HOME"}, {"child", "p"}, {"ignore-term", ""}, {"wait", ""}, {"echo", ""}, {"cwd", ""}}},
	}
	for _, tt := range tests {
		got, err := parseSteps(tt.script)
		if err != nil {
			t.Errorf("parseSteps(%q): %v", tt.script, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSteps(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
}

func TestParseStepsErrors(t *testing.T) {
	tests := []struct{ script, want string }{
		{"print ok;bogus 1", `unknown step "bogus"`},
		{"Print x", `unknown step "Print"`},
		{"sleep", `step "sleep"`},
		{"sleep soon", `step "sleep"`},
		{"spin never", `step "spin"`},
		{"exit x", `bad exit code "x"`},
		{"exit 256", `bad exit code "256"`},
		{"touch", `step "touch" needs an argument`},
		{"quiet now", `step "quiet" takes no argument`},
	}
	for _, tt := range tests {
		_, err := parseSteps(tt.script)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseSteps(%q) error = %v, want it to contain %q", tt.script, err, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"WHO": "world", "EMPTY": "", "TRICKY": "{n}\\n"}
	getenv := func(k string) string { return env[k] }
	tests := []struct{ in, want string }{
		{`plain`, "plain"},
		{`a\nb\tc\ed\\e`, "a\nb\tc\x1bd\\e"},
		{`\x\`, `\x\`}, // unknown escape and trailing backslash stay literal
		{`iter {n}/{n}`, "iter 7/7"},
		{`hi {env:WHO}!`, "hi world!"},
		{`[{env:EMPTY}][{env:UNSET}]`, "[][]"},
		{`{env:TRICKY}`, "{n}\\n"}, // values are not expanded again
		{`{nope} {env:X`, "{nope} {env:X"},
		{`\{n}`, `\7`},
	}
	for _, tt := range tests {
		if got := expand(tt.in, 7, getenv); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSelectSteps(t *testing.T) {
	script := []step{{"print", "default"}}
	var iters iterFlags
	for _, v := range []string{"3+=print three-plus", "2=print two", "5+=print five-plus", "5=print five", "7=print seven-old", "7=print seven"} {
		if err := iters.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	for i := range iters {
		var err error
		if iters[i].steps, err = parseSteps(iters[i].script); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int]string{
		1: "default",
		2: "two",        // exact
		3: "three-plus", // N+ applies to N itself
		4: "three-plus", // and later ones
		5: "five",       // exact beats N+, even with an N+ for the same N
		6: "five-plus",  // the larger N+ wins
		7: "seven",      // the last of two equal specs wins
		8: "five-plus",
	}
	for n, w := range want {
		got := selectSteps(script, iters, n)
		if len(got) != 1 || got[0].arg != w {
			t.Errorf("iteration %d: got %q, want %q", n, got, w)
		}
	}

	// Order of the flags does not matter for precedence.
	var rev iterFlags
	for _, v := range []string{"5=print five", "5+=print five-plus", "3+=print three-plus"} {
		_ = rev.Set(v)
	}
	for i := range rev {
		rev[i].steps, _ = parseSteps(rev[i].script)
	}
	for n, w := range map[int]string{5: "five", 6: "five-plus", 4: "three-plus"} {
		if got := selectSteps(script, rev, n); got[0].arg != w {
			t.Errorf("reversed, iteration %d: got %q, want %q", n, got, w)
		}
	}
}

func TestIterSpecErrors(t *testing.T) {
	for _, v := range []string{"print x", "x=print", "0=print x", "-1+=print x", "+=exit 1"} {
		var f iterFlags
		if err := f.Set(v); err == nil {
			t.Errorf("Set(%q) succeeded, want an error", v)
		}
	}
	var f iterFlags
	if err := f.Set("2+=print a=b"); err != nil || f[0].n != 2 || !f[0].orLater || f[0].script != "print a=b" {
		t.Errorf("Set(2+=print a=b) = %v, %+v", err, f)
	}
}
