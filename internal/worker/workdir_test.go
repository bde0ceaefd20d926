package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/hint"
)

// CheckWorkDir: the user's own directory (also group-writable by the
// user's own group, umask 002) under a sticky directory others can write
// is fine; a directory others can write, a non-sticky one above it, and
// (as root) another user's directory or link on the way are refused; a
// directory that is gone is left to the caller.
func TestCheckWorkDir(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(base, rel)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sticky := mk("sticky", 0o777|os.ModeSticky)
	own := mk("sticky/own", 0o755)
	group := mk("sticky/group", 0o775)
	open := mk("open", 0o777)
	under := mk("open/under", 0o755)
	for _, ok := range []string{own, group, filepath.Join(own, "gone")} {
		if err := CheckWorkDir(ok, "x"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for dir, want := range map[string]string{
		open:  "directory " + open + " is writable by others (mode 0777)",
		under: "directory " + open + " is writable by others (mode 0777)",
	} {
		if err := CheckWorkDir(dir, "x"); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", dir, err, want)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	theirs := mk("sticky/theirs", 0o755)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(sticky, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{theirs, link} {
		if err := CheckWorkDir(dir, "x"); err == nil || !strings.Contains(err.Error(), dir+" is owned by another user (uid 65534)") {
			t.Errorf("%s: %v", dir, err)
		}
	}
	// A link of the user's own to another user's directory.
	mine := filepath.Join(own, "link")
	if err := os.Symlink(theirs, mine); err != nil {
		t.Fatal(err)
	}
	if err := CheckWorkDir(mine, "x"); err == nil || !strings.Contains(err.Error(), theirs+" is owned by another user") {
		t.Errorf("%s: %v", mine, err)
	}
}

// The hint of a directory others can write runs as printed (chmod go-w
// PATH) when its path holds a space or a quote.
func TestCheckWorkDirHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "it's mine")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	err := CheckWorkDir(dir, "x")
	if err == nil {
		t.Fatal("a directory others can write passed")
	}
	cmd, _, ok := strings.Cut(hint.Of(err), " if it is yours")
	if !ok {
		t.Fatalf("hint: %q", hint.Of(err))
	}
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("the hint's %q: %v\n%s", cmd, err, out)
	}
	if err := CheckWorkDir(dir, "x"); err != nil {
		t.Errorf("after the hint's command: %v", err)
	}
}
