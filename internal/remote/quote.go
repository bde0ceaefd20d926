// Package remote runs swarm on other machines through OpenSSH: the ssh
// command line (connection sharing, batch mode, a connect timeout), the
// remote command quoted once for the remote shell, calls with a deadline
// whose exit code, stdout and stderr come back unchanged, and a fan-out
// that asks many hosts at once without opening more than a few sessions
// on any one connection.
//
// There is no protocol of swarm's own: the remote side is the swarm binary
// installed on the host, run with the same command line a user would type
// there.
package remote

import "strings"

// Quote returns s quoted for a POSIX shell: between single quotes, where
// nothing is special; a single quote in s closes them, is written escaped
// (backslash, quote), and reopens them. The remote shell turns it back
// into exactly s, whatever s holds: spaces, $, ;, backquotes, newlines.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is argv as one command line for a POSIX shell: each word quoted
// (Quote) and the words separated by spaces. ssh hands its command to the
// remote user's shell as one string, so this is the one place arguments
// are quoted, and they are quoted exactly once.
func Command(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}
