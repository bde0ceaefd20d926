package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// PrivateDir makes dir (0700) when missing and checks that it is the
// user's own directory that nobody else can enter: a control socket
// there is a way into every host it is connected to.
func PrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot make %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by another user (uid %d)", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s can be entered by others (mode %04o)", dir, fi.Mode().Perm())
	}
	return nil
}
