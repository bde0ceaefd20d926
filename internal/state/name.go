package state

import "fmt"

// maxNameLen is the longest worker name.
const maxNameLen = 64

// ValidateName checks a worker name before anything is created or looked
// up by it. Names become file names, branch names and tmux targets, so this
// is a security boundary: no path separators, no "..", no leading dash, no
// whitespace, nothing a tmux target would parse, and not all digits (tmux
// would read it as a window index).
//
// The rule is ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ and not ^[0-9]+$, checked
// byte by byte: that regexp compiles to some 60 KB in 861 allocations (the
// {0,63}), which every command paid at start-up (name_test.go proves the
// loop equal to it).
func ValidateName(name string) error {
	if !validName(name) || name == "." || name == ".." {
		return fmt.Errorf("invalid worker name '%s' (use letters, digits, '.', '_', '-'; max 64)", name)
	}
	return nil
}

// validName: 1 to 64 bytes, a letter or digit first, then letters,
// digits, '.', '_' or '-', and not digits only.
func validName(name string) bool {
	if len(name) == 0 || len(name) > maxNameLen || !isAlnum(name[0]) {
		return false
	}
	digitsOnly := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
		if c < '0' || c > '9' {
			digitsOnly = false
		}
	}
	return !digitsOnly
}

// isAlnum: an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
