// Package sandbox writes the kit of `swarm init --with-sandbox` into a
// project: the files swarm.py's command writes, under the same names, with
// swarm's own content (templates/sandbox).
//
// Writing is idempotent and never loses a user's work: an existing file is
// kept unless Force is set and the file is one of the kit's own scripts;
// PROMPT.md and ORCHESTRATOR.md are the user's to edit and are never
// replaced.
package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/swarmtools/swarm/internal/state"
	kit "github.com/swarmtools/swarm/templates/sandbox"
)

// File is one file of the kit.
type File struct {
	Name string
	// Mode is the permission the file is written with.
	Mode fs.FileMode
	// UserOwned files (the prompt, the runbook) are meant to be edited by
	// the user: Force does not replace them.
	UserOwned bool
}

// Files lists the kit in the order swarm.py writes (and reports) it.
func Files() []File {
	return []File{
		{Name: "sandbox.sh", Mode: 0o755},
		{Name: "Dockerfile.sandbox", Mode: 0o644},
		{Name: "setup-sandbox-network.sh", Mode: 0o755},
		{Name: "teardown-sandbox-network.sh", Mode: 0o755},
		{Name: "ORCHESTRATOR.md", Mode: 0o644, UserOwned: true},
		{Name: "PROMPT.md", Mode: 0o644, UserOwned: true},
	}
}

// Content returns the kit's text of the named file.
func Content(name string) ([]byte, error) { return kit.Files.ReadFile(name) }

// Options change what Write does.
type Options struct {
	// DryRun reports what would be done and writes nothing.
	DryRun bool
	// Force replaces kit scripts and the Dockerfile that differ from the
	// kit (never PROMPT.md or ORCHESTRATOR.md).
	Force bool
}

// Result is what happened to one file.
type Result int

// Results of Write, one per file.
const (
	// Created: the file did not exist and was written.
	Created Result = iota
	// WouldCreate: DryRun, the file does not exist.
	WouldCreate
	// Kept: the file exists and was left alone.
	Kept
	// UpToDate: Force, and the file already is the kit's.
	UpToDate
	// Overwritten: Force, and the file differed from the kit's.
	Overwritten
	// WouldOverwrite: DryRun and Force, the file differs from the kit's.
	WouldOverwrite
)

// Action reports what Write did (or would do) with one file.
type Action struct {
	File   string // name in the project, e.g. "sandbox.sh"
	Path   string // full path
	Result Result
}

// Message is the line swarm prints for the action, on stdout. Created,
// WouldCreate and Kept are swarm.py's exact lines; the others are swarm's
// (swarm.py has no --force for these files).
func (a Action) Message() string {
	switch a.Result {
	case Created:
		return "Created " + a.File
	case WouldCreate:
		return "Would create " + a.File
	case UpToDate:
		return "swarm: " + a.File + " is up to date"
	case Overwritten:
		return "Updated " + a.File
	case WouldOverwrite:
		return "Would update " + a.File
	default:
		return "swarm: " + a.File + " already exists, skipping"
	}
}

func (a Action) String() string { return a.Message() }

// Write puts the kit into dir (the project, normally the current
// directory) and reports, per file in the order of Files, what it did. On
// an error, the files this call created are removed and those it replaced
// are restored, so a failed run changes nothing; the actions up to the
// failure are returned with the error, and with it what could not be put
// back.
func Write(dir string, o Options) ([]Action, error) {
	var actions []Action
	var undo []func() error
	for _, f := range Files() {
		a, u, err := writeOne(dir, f, o)
		if err != nil {
			err = fmt.Errorf("cannot write %s: %w", filepath.Join(dir, f.Name), err)
			var failed []error
			for i := len(undo) - 1; i >= 0; i-- {
				failed = append(failed, undo[i]())
			}
			if uerr := errors.Join(failed...); uerr != nil {
				err = errors.Join(err, fmt.Errorf("and what was written before it could not all be put back: %w", uerr))
			}
			return actions, err
		}
		actions = append(actions, a)
		if u != nil {
			undo = append(undo, u)
		}
	}
	return actions, nil
}

// maxKitFile bounds the read of an existing kit file that --force may
// replace: the kit's own files are a few KB, and the old content is held
// in memory to restore it if the run fails.
const maxKitFile = 1 << 20

// failHook lets tests make the write of a file fail (root, which runs CI,
// can write anywhere, so a read-only directory is no way to do it).
var failHook func(name string) error

// writeOne decides and does what Write does for one file, and returns how
// to undo it (nil when nothing was written).
func writeOne(dir string, f File, o Options) (Action, func() error, error) {
	a := Action{File: f.Name, Path: filepath.Join(dir, f.Name)}
	if failHook != nil {
		if err := failHook(f.Name); err != nil {
			return a, nil, err
		}
	}
	want, err := Content(f.Name)
	if err != nil {
		return a, nil, err
	}
	info, err := os.Lstat(a.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if o.DryRun {
			a.Result = WouldCreate
			return a, nil, nil
		}
		created, err := createNew(a.Path, want, f.Mode)
		if err != nil || !created {
			// Someone else made the file meanwhile: it is theirs.
			a.Result = Kept
			return a, nil, err
		}
		a.Result = Created
		return a, func() error { return os.Remove(a.Path) }, nil
	case err != nil:
		return a, nil, err
	}
	// The file exists: keep it unless Force may replace it. A symlink or
	// anything but a regular file is never followed or replaced.
	if !o.Force || f.UserOwned || !info.Mode().IsRegular() {
		a.Result = Kept
		return a, nil, nil
	}
	// Read as it was found: a regular file, not through a link put there
	// since, and bounded (it is kept in memory to undo a failed run).
	old, err := state.ReadRegular(a.Path, maxKitFile)
	if err != nil {
		return a, nil, err
	}
	if bytes.Equal(old, want) && info.Mode().Perm() == f.Mode {
		a.Result = UpToDate
		return a, nil, nil
	}
	if o.DryRun {
		a.Result = WouldOverwrite
		return a, nil, nil
	}
	if err := replace(a.Path, want, f.Mode); err != nil {
		return a, nil, err
	}
	a.Result = Overwritten
	oldMode := info.Mode().Perm()
	return a, func() error { return replace(a.Path, old, oldMode) }, nil
}

// createNew writes a file that must not exist yet, atomically: a complete
// temporary file is hard-linked to the name, which fails if the name has
// appeared since (then it returns false), so a concurrent or pre-existing
// file is never clobbered and no reader ever sees half a file.
func createNew(path string, data []byte, mode fs.FileMode) (bool, error) {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return false, err
	}
	defer func() { _ = os.Remove(tmp) }() // the temporary name only: the file is linked (or written) under its own by then
	err = os.Link(tmp, path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	// A file system without hard links: exclusive create, still never
	// clobbering, though a reader could see the file half written.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, errors.Join(err, os.Remove(path))
	}
	return true, nil
}

// replace atomically replaces path with data.
func replace(path string, data []byte, mode fs.FileMode) error {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}

// writeTemp writes data to a new temporary file beside path, with mode set
// exactly (whatever the umask), and returns its name.
func writeTemp(path string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errors.Join(err, os.Remove(name))
	}
	return name, nil
}
