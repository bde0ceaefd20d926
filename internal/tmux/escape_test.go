package tmux

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// parseArgvModel is tmux 3.3's cmd_parse_from_arguments: how the server
// splits an argv into commands and unescapes it. An element ending in ';'
// ends the command (the rest of the element, if any, is its last
// argument) unless the ';' follows a backslash, which is then dropped.
func parseArgvModel(argv []string) [][]string {
	var cmds [][]string
	var cmd []string
	for _, a := range argv {
		end := false
		if strings.HasSuffix(a, ";") {
			a = a[:len(a)-1]
			if strings.HasSuffix(a, `\`) {
				a = a[:len(a)-1] + ";"
			} else {
				end = true
			}
		}
		if !end || a != "" {
			cmd = append(cmd, a)
		}
		if end {
			cmds = append(cmds, cmd)
			cmd = nil
		}
	}
	if len(cmd) > 0 {
		cmds = append(cmds, cmd)
	}
	return cmds
}

// expandFormatModel is tmux 3.3's format_expand1 for strings that expand
// to themselves: literal text, "##" (one '#'), "#," and "#}", "#[" and
// runs of '#' before '[' (kept as they are), '#' before any other
// non-letter (kept). It reports false for anything that would expand or
// that tmux reads past (#{...}, #(...), #X for a letter, a trailing '#').
func expandFormatModel(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '#' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 == len(s) {
			return "", false
		}
		switch ch := s[i+1]; {
		case ch == '#':
			j := i + 2
			for j < len(s) && s[j] == '#' {
				j++
			}
			if j < len(s) && s[j] == '[' {
				b.WriteString(s[i : j+1])
				i = j + 1
				continue
			}
			b.WriteByte('#')
		case ch == ',' || ch == '}':
			b.WriteByte(ch)
		case ch == '(' || ch == '{' || isLetter(ch):
			return "", false
		default:
			b.WriteByte('#')
			b.WriteByte(ch)
		}
		i += 2
	}
	return b.String(), true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// expandTimeFormatModel is format_expand_time: strftime ("%%" is '%',
// any other conversion reports false), then expandFormatModel.
func expandTimeFormatModel(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || s[i+1] != '%' {
			return "", false
		}
		b.WriteByte('%')
		i++
	}
	return expandFormatModel(b.String())
}

func TestEscapeArg(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"x":         "x",
		"x;":        `x\;`,
		";":         `\;`,
		`x\;`:       `x\\;`,
		`\\;`:       `\\\;`,
		";;":        `;\;`,
		"a;b":       "a;b",
		"#{x};":     `#{x}\;`,
		"{}":        "{}",
		"$HOME":     "$HOME",
		"x; ":       "x; ",
		"ünï;":      `ünï\;`,
		"run-shell": "run-shell",
	} {
		if got := escapeArg(in); got != want {
			t.Errorf("escapeArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeFormat(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		"/p/C#Sharp":     "/p/C##Sharp",
		"d#(touch x)":    "d##(touch x)",
		"#{pane_id}":     "##{pane_id}",
		"x#":             "x##",
		"###":            "######",
		"#[fg=red]":      "#[fg=red]",
		"##[x":           "##[x",
		"a#b#[c##[d###e": "a##b#[c##[d######e",
		"%Y $HOME {} ;":  "%Y $HOME {} ;",
		"#,#}":           "##,##}",
		"日本#語":           "日本##語",
	} {
		if got := escapeFormat(in); got != want {
			t.Errorf("escapeFormat(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escapeTimeFormat("%Y #S 100%"); got != "%%Y ##S 100%%" {
		t.Errorf("escapeTimeFormat = %q", got)
	}
}

func TestBuildArgsSeparatesOnlyCommands(t *testing.T) {
	cmds := [][]string{
		{"send-keys", "-l", "--", "b;"},
		{},
		{"new-window", "--", "prog", "x;", "run-shell", "touch pwned"},
		{"display-message", ";"},
	}
	got := buildArgs(cmds)
	want := []string{"send-keys", "-l", "--", `b\;`, ";",
		"new-window", "--", "prog", `x\;`, "run-shell", "touch pwned", ";",
		"display-message", `\;`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("buildArgs = %q\nwant %q", got, want)
	}
	if parsed := parseArgvModel(got); !reflect.DeepEqual(parsed, [][]string{cmds[0], cmds[2], cmds[3]}) {
		t.Errorf("tmux would read %q", parsed)
	}
	c := &Client{Socket: "sock"}
	if args := c.Args([]string{"kill-window", "-t", "@1"}); strings.Join(args, " ") != "-L sock kill-window -t @1" {
		t.Errorf("Args = %q", args)
	}
}

func TestDirectCommandAndPipeCommand(t *testing.T) {
	if got := directCommand([]string{"a", "b"}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("two elements changed: %q", got)
	}
	if got := directCommand([]string{"/p/d$(x)"}); !reflect.DeepEqual(got, []string{"sh", "-c", execDirect, "/p/d$(x)"}) {
		t.Errorf("one element: %q", got)
	}
	got := pipeCommand(nil, "/h/a#b %Y/it's")
	if got != `exec cat >> '/h/a##b %%Y/it'\''s'` {
		t.Errorf("pipeCommand = %s", got)
	}
	if via := pipeCommand([]string{"/bin/sw#arm", "_logpipe", "--max", "100"}, "/h/o;x"); via != `exec '/bin/sw##arm' '_logpipe' '--max' '100' '/h/o;x'` {
		t.Errorf("pipeCommand via = %s", via)
	}
	if back, ok := expandTimeFormatModel(got); !ok || back != `exec cat >> '/h/a#b %Y/it'\''s'` {
		t.Errorf("tmux would run %q", back)
	}
	if ShellQuote("it's a path") != `'it'\''s a path'` {
		t.Errorf("quote = %s", ShellQuote("it's a path"))
	}
}

func TestCheckSessionName(t *testing.T) {
	for _, ok := range []string{"swarm-0123abcd", "s#S", "s;", "##[x", "-n", "{}", "ünï 日本", "a b", "%Y", "=x", "a$", "a$1", "@1", "client-x"} {
		if err := CheckSessionName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a:b", "a.b", `a\b`, "$1", "a$HOME", "a${x}", "a$_", "pts/1", "/dev/pts/1", "client-12", "a\tb", "a\nb", "\xff", "a\u0085b", "a\x7f"} {
		err := CheckSessionName(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "invalid session name '") {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

func TestSocketWithSlashRefused(t *testing.T) {
	c := &Client{Socket: "../../tmp/x", Bin: "tmux"}
	if _, err := c.Run(nil, "list-sessions"); err == nil || !strings.Contains(err.Error(), "invalid tmux socket name") {
		t.Errorf("err = %v", err)
	}
}

// FuzzEscapeArgs: whatever the elements, tmux reads back exactly the
// commands built, with the separators where we put them.
func FuzzEscapeArgs(f *testing.F) {
	for _, s := range []string{"", ";", "x;", `x\;`, `\\;`, ";;", `\`, "run-shell", "a b;"} {
		f.Add(s, s+";")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		cmds := [][]string{{"send-keys", a, b}, {"new-window", "--", b, a}, {"kill-window", a + ";"}}
		if got := parseArgvModel(buildArgs(cmds)); !reflect.DeepEqual(got, cmds) {
			t.Fatalf("built %q, tmux reads %q", buildArgs(cmds), got)
		}
	})
}

// FuzzEscapeFormat: whatever the string, tmux's format expansion (with and
// without time) of its escaped form gives it back, and runs nothing.
func FuzzEscapeFormat(f *testing.F) {
	for _, s := range []string{"", "#", "##[", "#[x", "a#(touch x)", "#{pane_id}", "%Y%", "###[##", "#,#}", "C#Sharp;x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, ok := expandFormatModel(escapeFormat(s)); !ok || got != s {
			t.Fatalf("escapeFormat(%q) = %q expands to %q (%v)", s, escapeFormat(s), got, ok)
		}
		if got, ok := expandTimeFormatModel(escapeTimeFormat(s)); !ok || got != s {
			t.Fatalf("escapeTimeFormat(%q) = %q expands to %q (%v)", s, escapeTimeFormat(s), got, ok)
		}
	})
}

// The byte loops answer as the regexps they replaced (compiled here, in
// the test, not at every start of swarm).
func TestSessionNameChecksAsRegexps(t *testing.T) {
	client := regexp.MustCompile(`^client-[0-9]+$`)
	dollar := regexp.MustCompile(`\$[A-Za-z_{]`)
	for _, s := range []string{"", "client-", "client-1", "client-42", "client-4a", "xclient-4", "client-٣", "Client-1", "client--1",
		"$", "a$", "$a", "x$Z", "$_", "${", "$1", "$$", "a$-", "$é", "é$a"} {
		if got, want := isClientName(s), client.MatchString(s); got != want {
			t.Errorf("isClientName(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := hasDollarName(s), dollar.MatchString(s); got != want {
			t.Errorf("hasDollarName(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}

func FuzzSessionNameChecks(f *testing.F) {
	client := regexp.MustCompile(`^client-[0-9]+$`)
	dollar := regexp.MustCompile(`\$[A-Za-z_{]`)
	for _, s := range []string{"client-1", "$a", "x${", "client-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isClientName(s) != client.MatchString(s) || hasDollarName(s) != dollar.MatchString(s) {
			t.Fatalf("%q: isClientName %v hasDollarName %v; regexps %v %v", s, isClientName(s), hasDollarName(s), client.MatchString(s), dollar.MatchString(s))
		}
	})
}
