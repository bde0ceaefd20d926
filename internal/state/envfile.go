package state

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Env files carry a tmux window's environment (--env values, often
// secrets) from swarm to the command's wrapper (swarm _exec), which reads
// and removes the file before it runs the command. Given to tmux as -e,
// the values would stay in the session's environment, inherited by every
// later window of the session, and on the argv of the tmux client (and of
// the server it starts, for the server's life), which other users read in
// ps. A file under the state root is private (0600 in a 0700 directory)
// and exists only until the command starts.

// envDirName is the directory of env files under the root.
const envDirName = "env"

// MaxEnvFile bounds an env file: the kernel would refuse a larger
// environment anyway (its argument and environment limit).
const MaxEnvFile = 4 << 20

// envFileStale is the age after which an env file that no wrapper took
// (its spawn killed between writing it and starting the window) is swept:
// a wrapper takes its file within milliseconds of tmux starting it.
const envFileStale = 10 * time.Minute

// EnvDir is the directory of env files.
func (s *Store) EnvDir() string { return filepath.Join(s.Root, envDirName) }

// WriteEnvFile writes env (KEY=VAL entries) to a new private file and
// returns its path, for TakeEnvFile. Entries are NUL-separated: neither a
// key nor a value can hold a NUL. Files left over from spawns that died
// are swept first.
func (s *Store) WriteEnvFile(env []string) (string, error) {
	for _, e := range env {
		if strings.IndexByte(e, 0) >= 0 {
			return "", errors.New("an environment entry holds a NUL byte")
		}
	}
	dir := s.EnvDir()
	if err := makeDir(dir); err != nil {
		return "", err
	}
	sweepEnvFiles(dir, time.Now().Add(-envFileStale))
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	path := filepath.Join(dir, hex.EncodeToString(id[:])+".env")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, filePerm)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(strings.Join(env, "\x00"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errors.Join(err, os.Remove(path))
	}
	return path, nil
}

// sweepEnvFiles removes env files last changed before cutoff.
func sweepEnvFiles(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".env") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, e.Name())) // left for the next sweep
		}
	}
}

// TakeEnvFile reads the env file at path and removes it: its entries
// exist only in the process that took them. Only a regular file of this
// user, private to it and not a symlink, is read, and at most MaxEnvFile
// bytes of it.
func TakeEnvFile(path string) ([]string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if err := checkEnvFile(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEnvFile+1))
	// Its entries must not outlive this process on disk: a file that
	// stays is an error, not a command started beside it.
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("cannot remove %s: %w", path, rerr))
	}
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEnvFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxEnvFile)
	}
	if len(data) == 0 {
		return nil, nil
	}
	return strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00"), nil
}

// checkEnvFile refuses what swarm would not have written: anything but a
// regular file, another user's file, or one others could read or write.
func checkEnvFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %04o (want 0600)", fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not by this user", st.Uid)
	}
	return nil
}
