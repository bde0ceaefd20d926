package tmux

// How tmux 3.3 reads what we pass it, measured against tmux 3.3a and read
// in its source (cmd-parse.y cmd_parse_from_arguments, format.c
// format_expand1, spawn.c, session.c session_check_name):
//
//   - Every argv element arrives literally: no quoting, no $VAR, ~, {},
//     #{...} or backslash processing, with one exception: an element
//     ending in ';' ends the command there (escapeArg).
//   - Some option values are then expanded as formats, where '#' is
//     special: new-window/new-session/respawn-pane -c (the start
//     directory), new-window/new-session -n (the window name) and
//     new-session -s (the session name) (escapeFormat).
//   - pipe-pane's command is expanded with the time as well, so '%' is
//     special too (strftime), and is then run by /bin/sh -c
//     (escapeTimeFormat after ShellQuote).
//   - -e K=V values, -t targets, -b buffer names, send-keys -l text and
//     the window's command are not expanded; targets are never given to
//     a format, so "=session:" takes the session name as it is.
//
// The only place argv is built is buildArgs: it escapes every element and
// inserts the command separator itself, so data can never become a
// separator and a separator is never escaped into data.

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// separator is the argv element tmux reads as "this command ends, the next
// begins". Only buildArgs emits it.
const separator = ";"

// escapeArg returns s so that tmux passes it on exactly as s.
//
// tmux treats an argv element ending in ';' as the end of a command: the
// ';' is dropped, the rest (if any) becomes the last argument, and the
// next element starts a new command ("x;" "run-shell" "cmd" runs cmd).
// When that ';' is preceded by a backslash, tmux instead drops the
// backslash and keeps the ';' ("x\;" arrives as "x;", `\\;` as `\;`).
// Nothing else in an element is special. So a backslash before a trailing
// ';' is all it takes, and it is right for elements that already end in
// `\;` too: `x\;` is sent as `x\\;` and arrives as `x\;`.
func escapeArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// escapeFormat returns s so that tmux's format expansion (format_single:
// -c, -n, -s) yields exactly s.
//
// In a format, '#' starts an expansion: "#{pane_id}", "#S" (session name),
// "#(cmd)" (runs cmd in a shell). "##" yields one '#'. The exception is a
// run of '#' directly followed by '[': tmux keeps such a run and the '['
// as they are (a style for the status line), so "#[" and "##[" arrive
// unchanged and must not be doubled. Everything else, including '%', '{'
// and '$', is literal in format_single.
func escapeFormat(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '#' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '#' {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) || s[j] != '[' {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// escapeTimeFormat returns s so that format_expand_time (pipe-pane's
// command, display-message) yields exactly s: that expansion runs the
// string through strftime first, where "%%" yields '%' and "%Y" the year,
// and then through the format expansion of escapeFormat.
func escapeTimeFormat(s string) string {
	return escapeFormat(strings.ReplaceAll(s, "%", "%%"))
}

// buildArgs turns commands into one tmux argument list: each element
// escaped with escapeArg, commands separated by the unescaped separator.
// Empty commands are skipped (tmux would reject them).
func buildArgs(cmds [][]string) []string {
	var args []string
	for _, cmd := range cmds {
		if len(cmd) == 0 {
			continue
		}
		if len(args) > 0 {
			args = append(args, separator)
		}
		for _, a := range cmd {
			args = append(args, escapeArg(a))
		}
	}
	return args
}

// execDirect is the script that runs a one-element command without a
// shell parsing it: the element arrives as $0 and is exec'd as is.
const execDirect = `exec "$0"`

// directCommand returns argv for a pane's command that tmux will exec
// directly. tmux runs a command of several elements with execvp, but a
// single element with "$SHELL -c", which would parse it: a program path
// like "/p/d$(touch x)/agent" would run touch. Such a command is handed
// to sh as $0 instead, which it does not parse.
func directCommand(cmd []string) []string {
	if len(cmd) != 1 {
		return cmd
	}
	return []string{"sh", "-c", execDirect, cmd[0]}
}

// pipeCommand is pipe-pane's command writing the pane's output to path,
// through via (argv, path appended) or appended by cat: a shell string
// (tmux runs it with /bin/sh -c) that tmux first expands as a time format,
// so every word is shell-quoted and then format-escaped.
func pipeCommand(via []string, path string) string {
	if len(via) == 0 {
		return escapeTimeFormat("exec cat >> " + ShellQuote(path))
	}
	words := make([]string, 0, len(via)+1)
	for _, w := range append(via, path) {
		words = append(words, ShellQuote(w))
	}
	return escapeTimeFormat("exec " + strings.Join(words, " "))
}

// ShellQuote quotes s for sh as one single-quoted word, inside which sh
// treats every byte literally; a single quote in s ends the quoting, is
// written escaped (\') and the quoting starts again.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isClientName reports whether s is a name tmux gives clients without a
// terminal, "client-" and digits; tty clients are named by their device
// path (contains '/'). A byte loop, not a regexp compiled at start-up.
func isClientName(s string) bool {
	digits, ok := strings.CutPrefix(s, "client-")
	return ok && digits != "" && strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// hasDollarName reports whether s holds what tmux escapes as "\$" in a
// session name: '$' before a letter, '_' or '{'.
func hasDollarName(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if c := s[i+1]; s[i] == '$' && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '{') {
			return true
		}
	}
	return false
}

// CheckSessionName reports whether tmux stores the session name exactly as
// given and an exact target "=name:" finds it and nothing else. tmux
// (session_check_name) replaces ':' and '.' with '_' and escapes '\',
// "$NAME", "${" and non-printable characters in names (so "=name:" would
// miss the session and, in new-window, fail); a leading '$' makes the
// target a session id; and a name that is no session but names a client
// ("/dev/pts/3", "pts/3", "client-42") targets that client's session. '#'
// is fine: NewWindow escapes the name where tmux format-expands it (-s),
// and targets are not expanded.
func CheckSessionName(name string) error {
	reason := ""
	switch {
	case name == "":
		reason = "empty"
	case strings.ContainsAny(name, ":."):
		reason = "no ':' or '.'"
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		reason = "no control characters"
	case strings.Contains(name, `\`):
		reason = `tmux stores '\' as '\\'`
	case strings.HasPrefix(name, "$"):
		reason = "a leading '$' is a session id"
	case hasDollarName(name):
		reason = `tmux stores "$NAME" as "\$NAME"`
	case strings.Contains(name, "/") || isClientName(name):
		reason = "it could name a tmux client"
	default:
		return nil
	}
	return fmt.Errorf("invalid session name '%s' (%s)", name, reason)
}
