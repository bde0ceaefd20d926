package state

import (
	"fmt"
	"regexp"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
var allDigits = regexp.MustCompile(`^[0-9]+$`)

// ValidateName checks a worker name before anything is created or looked
// up by it. Names become file names, branch names and tmux targets, so this
// is a security boundary: no path separators, no "..", no leading dash, no
// whitespace, nothing a tmux target would parse, and not all digits (tmux
// would read it as a window index).
func ValidateName(name string) error {
	if !namePattern.MatchString(name) || allDigits.MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("invalid worker name '%s' (use letters, digits, '.', '_', '-'; max 64)", name)
	}
	return nil
}
