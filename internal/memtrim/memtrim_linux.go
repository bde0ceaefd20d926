package memtrim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// dropExecutablePages advises MADV_DONTNEED on each mapping of the
// running executable that is private, readable, not writable and holds
// only the file's pages (smaps' Anonymous is 0). A page of such a
// mapping read again is the file's: Linux refuses to write an
// executable that runs (ETXTBSY; a network file system may not). A
// read-only mapping with private copies in it is left alone: the
// dynamic loader's relocations of a position-independent or externally
// linked build (GNU_RELRO, made read-only after it wrote them), a
// debugger's breakpoints; dropped, they would read back as the file's
// unrelocated bytes. The executable's mappings are those of the file
// (device and inode, as smaps gives them) that holds this function's
// code: a stat of /proc/self/exe gives another device number on btrfs.
// On a failed madvise the mappings after it are not tried.
func dropExecutablePages() error {
	pc, _, _, ok := runtime.Caller(0)
	if !ok {
		return errors.New("no program counter")
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return err
	}
	ms, err := cleanExecutableMappings(smaps, uint64(pc))
	if err != nil {
		return err
	}
	for _, m := range ms {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("madvise %#x-%#x: %w", m.start, m.end, errno)
		}
	}
	return nil
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end uint64
	perms      string
	file       string // "major:minor inode"; "00:00 0" for none
	anonymous  int    // kB of private copies (smaps' Anonymous)
}

// cleanExecutableMappings returns the mappings of smaps to drop: those
// of the file mapped at pc, private, readable and not writable, with no
// private copies. It fails when no mapping holds pc.
func cleanExecutableMappings(smaps []byte, pc uint64) ([]mapping, error) {
	all := parseSmaps(smaps)
	file := ""
	for _, m := range all {
		if m.start <= pc && pc < m.end && m.file != "00:00 0" {
			file = m.file
		}
	}
	if file == "" {
		return nil, fmt.Errorf("no mapping of the executable holds %#x", pc)
	}
	var out []mapping
	for _, m := range all {
		if m.file == file && (m.perms == "r-xp" || m.perms == "r--p") && m.anonymous == 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// parseSmaps reads smaps: each mapping is a line "start-end perms offset
// major:minor inode [path]" and then lines "Key: value [kB]". A mapping
// without an Anonymous line counts as having private copies (it is left
// alone); a line it cannot read is skipped.
func parseSmaps(smaps []byte) []mapping {
	var out []mapping
	for line := range bytes.SplitSeq(smaps, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if bytes.HasSuffix(f[0], []byte(":")) {
			if len(out) > 0 && string(f[0]) == "Anonymous:" && len(f) >= 2 {
				if n, err := strconv.Atoi(string(f[1])); err == nil {
					out[len(out)-1].anonymous = n
				}
			}
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok || len(f) < 5 {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{start: start, end: end, perms: string(f[1]),
			file: string(f[3]) + " " + string(f[4]), anonymous: -1})
	}
	for i := range out {
		if out[i].anonymous < 0 {
			out[i].anonymous = 1 // no Anonymous line: not known to be clean
		}
	}
	return out
}
