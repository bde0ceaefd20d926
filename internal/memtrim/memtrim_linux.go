package memtrim

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// dropExecutablePages advises MADV_DONTNEED on each private read-only
// mapping of the running executable (r-xp and r--p in /proc/self/maps,
// matched by device and inode, so a binary replaced on disk since is
// still found). For a private file mapping that was never written, the
// pages read back are the file's: Linux refuses to write an executable
// that runs (ETXTBSY), so they are the pages dropped.
func dropExecutablePages() error {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return fmt.Errorf("executable: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	for _, m := range executableMappings(maps, uint64(unix.Major(st.Dev)), uint64(unix.Minor(st.Dev)), st.Ino) {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("madvise %#x-%#x: %w", m.start, m.end, errno)
		}
	}
	return nil
}

// mapping is an address range of /proc/self/maps.
type mapping struct{ start, end uintptr }

// executableMappings returns the private mappings of maps that are
// readable and not writable, of the file with this device and inode.
// A line is "start-end perms offset major:minor inode path", in hex but
// for the inode; a line it cannot read is skipped.
func executableMappings(maps []byte, major, minor, inode uint64) []mapping {
	var out []mapping
	for line := range bytes.SplitSeq(maps, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		perms := string(f[1])
		if perms != "r-xp" && perms != "r--p" {
			continue
		}
		ino, err := strconv.ParseUint(string(f[4]), 10, 64)
		if err != nil || ino != inode {
			continue
		}
		maj, min, ok := bytes.Cut(f[3], []byte(":"))
		if !ok || !hexIs(maj, major) || !hexIs(min, minor) {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{uintptr(start), uintptr(end)})
	}
	return out
}

func hexIs(b []byte, want uint64) bool {
	n, err := strconv.ParseUint(string(b), 16, 64)
	return err == nil && n == want
}
