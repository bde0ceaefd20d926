package remote

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// shellArgv runs the command line through sh -c, as the remote user's
// shell runs ssh's command, with a printer in front of it, and returns the
// words the shell made of it.
func shellArgv(t testing.TB, argv []string) []string {
	t.Helper()
	line := `printf '%s\0' ` + Command(argv)
	if len(argv) == 0 {
		return nil
	}
	out, err := exec.Command("sh", "-c", line).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	words := strings.Split(string(bytes.TrimSuffix(out, []byte{0})), "\x00")
	return words
}

func TestCommandSurvivesTheShell(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		argv []string
	}{
		{"plain", []string{"swarm", "ls"}},
		{"spaces", []string{"a b", "  lead", "trail  "}},
		{"quotes", []string{"it's", "'", "''", `"double"`, `'\''`}},
		{"dollar", []string{"$HOME", "${PATH}", "$(id)", "`id`"}},
		{"separators", []string{"a;b", "a && b", "a|b", "a>b", "<a", "&"}},
		{"globs", []string{"*", "?", "[a]", "~", "~root"}},
		{"newlines", []string{"a\nb", "\n", "\t", "\r"}},
		{"backslashes", []string{`\`, `\\`, `\n`, `a\`}},
		{"empty", []string{"", "x", ""}},
		{"dash", []string{"-n", "--", "-e"}},
		{"utf8", []string{"héllo", "日本", "\x80\xff"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := shellArgv(t, tc.argv)
			if !equal(got, tc.argv) {
				t.Errorf("sh -c %s\n got %q\nwant %q", Command(tc.argv), got, tc.argv)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzCommand: for any argv (no NUL: no argument can hold one), the shell
// gives back the same words.
func FuzzCommand(f *testing.F) {
	f.Add("swarm", "peek", "it's $HOME; rm -rf ~")
	f.Add("'", `'\''`, "\n")
	f.Add("", "`x`", "$(x)")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{a, b, c}
		for _, s := range argv {
			if strings.IndexByte(s, 0) >= 0 {
				t.Skip("an argument cannot hold NUL")
			}
		}
		if got := shellArgv(t, argv); !equal(got, argv) {
			t.Errorf("sh -c %s\n got %q\nwant %q", Command(argv), got, argv)
		}
	})
}
