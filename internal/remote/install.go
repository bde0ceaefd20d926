package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/termtext"
)

// Probe is what swarm hosts check found on a host.
type Probe struct {
	// Swarm, Tmux and Git are the first line each of swarm version,
	// tmux -V and git --version (or of their error), as printable text.
	Swarm, Tmux, Git string
	// Platform is uname -sm's GOOS/GOARCH, or uname's words.
	Platform string
	// Connect is the first call's time (with the connection made when
	// none was shared); RTT a second call's, over the connection.
	Connect, RTT time.Duration
}

// SwarmOK reports whether the host's swarm ran.
func (p Probe) SwarmOK() bool { return strings.HasPrefix(p.Swarm, "swarm ") }

// maxProbe bounds what a probe reads from a host.
const maxProbe = 64 << 10

// probeScript prints one "KEY<tab>first line" per tool; swarm is the
// host's swarm command.
func probeScript(swarm []string) string {
	return "printf 'swarm\\t'; " + Command(swarm) + " version 2>&1 | head -n 1; " +
		"printf 'tmux\\t'; tmux -V 2>&1 | head -n 1; " +
		"printf 'git\\t'; git --version 2>&1 | head -n 1; " +
		"printf 'platform\\t'; uname -sm 2>&1 | head -n 1"
}

// Check asks h for its swarm, tmux and git versions and its platform,
// and measures a round trip.
func (c *Client) Check(ctx context.Context, h Host) (Probe, error) {
	var out, errb capped
	out.max, errb.max = maxProbe, maxProbe
	timeout := c.connectTimeout() + checkTimeout
	res, err := c.Run(ctx, Call{Host: h, Command: probeScript(h.SwarmArgv()), Stdout: &out, Stderr: &errb, Timeout: timeout})
	if why := Failure(res, err, errb.b); why != "" {
		return Probe{}, errors.New(why)
	}
	p := Probe{Connect: res.Elapsed}
	for _, line := range strings.Split(string(out.b), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		v = termtext.Line(strings.TrimSpace(v))
		switch k {
		case "swarm":
			p.Swarm = v
		case "tmux":
			p.Tmux = v
		case "git":
			p.Git = v
		case "platform":
			p.Platform = platform(v)
		}
	}
	res, err = c.run(ctx, Call{Host: h, Command: "true", Timeout: timeout})
	if err == nil && res.Code == 0 {
		p.RTT = res.Elapsed
	}
	return p, nil
}

// platform turns uname -sm's "Linux x86_64" into "linux/amd64"; words it
// does not know are kept.
func platform(uname string) string {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return uname
	}
	oses := map[string]string{"Linux": "linux", "Darwin": "darwin", "FreeBSD": "freebsd", "OpenBSD": "openbsd", "NetBSD": "netbsd"}
	arches := map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
		"armv7l": "arm", "armv6l": "arm", "i386": "386", "i686": "386", "riscv64": "riscv64", "ppc64le": "ppc64le", "s390x": "s390x"}
	goos, ok1 := oses[f[0]]
	arch, ok2 := arches[f[1]]
	if !ok1 || !ok2 {
		return uname
	}
	return goos + "/" + arch
}

// Install outcomes.
const (
	Installed = "installed"
	Unchanged = "unchanged"
	Replaced  = "replaced"
)

// Install errors, matched with errors.Is.
var (
	ErrNoInstallPath = errors.New("no path to install to")
	ErrPlatform      = errors.New("another platform")
	ErrOtherBinary   = errors.New("another binary is there")
)

// installError is an install error of a kind (errors.Is) whose text is
// its message alone.
type installError struct {
	kind error
	msg  string
}

func (e *installError) Error() string        { return e.msg }
func (e *installError) Is(target error) bool { return target == e.kind }

func installErr(kind error, format string, args ...any) error {
	return &installError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Binary is the swarm binary to install: its file, platform (GOOS/GOARCH)
// and version.
type Binary struct {
	Path, Platform, Version string
}

// Install copies bin to h's swarm path when no file is there, or another
// one with force, and checks the copy's SHA-256 before it takes the
// path. It returns Installed, Replaced or Unchanged (the same binary is
// there already).
func (c *Client) Install(ctx context.Context, h Host, bin Binary, force bool) (string, error) {
	dest := h.Swarm
	if !strings.Contains(dest, "/") {
		return "", installErr(ErrNoInstallPath, "host '%s' runs swarm from its PATH (%q): give it a path to install to", h.Name, dest)
	}
	data, err := os.ReadFile(bin.Path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	there, err := c.look(ctx, h, dest)
	if err != nil {
		return "", err
	}
	switch {
	case there.platform != bin.Platform:
		return "", installErr(ErrPlatform, "host '%s' is %s, this swarm is %s", h.Name, there.platform, bin.Platform)
	case there.sum == want:
		return Unchanged, nil
	case there.exists && !force:
		return "", installErr(ErrOtherBinary, "%s on host '%s' is another binary (%s); --force replaces it with swarm %s", dest, h.Name, there.version, bin.Version)
	}
	if err := c.copyTo(ctx, h, dest, data, want); err != nil {
		return "", err
	}
	if there.exists {
		return Replaced, nil
	}
	return Installed, nil
}

// found is what is at the install path on a host.
type found struct {
	platform string
	exists   bool
	sum      string
	version  string
}

// sha256Script prints the SHA-256 of file: sha256sum (GNU), else shasum
// (macOS, the BSDs).
func sha256Script(file string) string {
	q := Quote(file)
	return "{ sha256sum " + q + " 2>/dev/null || shasum -a 256 " + q + "; } | cut -d ' ' -f 1"
}

// look reads h's platform and what is at dest, in one call.
func (c *Client) look(ctx context.Context, h Host, dest string) (found, error) {
	script := "uname -sm; if [ -e " + Quote(dest) + " ]; then echo exists; " + sha256Script(dest) + "; " +
		Command(h.SwarmArgv("version")) + " 2>&1 | head -n 1; else echo missing; fi"
	out, err := c.output(ctx, h, script, nil)
	if err != nil {
		return found{}, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	f := found{platform: platform(termtext.Line(strings.TrimSpace(lines[0])))}
	if len(lines) >= 3 && lines[1] == "exists" {
		f.exists, f.sum = true, strings.TrimSpace(lines[2])
		if len(lines) >= 4 {
			f.version = termtext.Line(strings.TrimSpace(lines[3]))
		}
	}
	return f, nil
}

// copyTo sends data to a temporary file beside dest, checks its SHA-256
// is want, and only then moves it to dest.
func (c *Client) copyTo(ctx context.Context, h Host, dest string, data []byte, want string) error {
	tmp := dest + ".swarm-install." + fmt.Sprint(time.Now().UnixNano())
	dir := path.Dir(dest)
	if _, err := c.output(ctx, h, "mkdir -p "+Quote(dir)+" && cat > "+Quote(tmp), bytes.NewReader(data)); err != nil {
		_, _ = c.output(ctx, h, "rm -f "+Quote(tmp), nil) // best effort: the copy's error is the one to return; a leftover is never run
		return fmt.Errorf("copying to %s: %w", tmp, err)
	}
	got, err := c.output(ctx, h, sha256Script(tmp), nil)
	if err != nil || strings.TrimSpace(got) != want {
		_, _ = c.output(ctx, h, "rm -f "+Quote(tmp), nil) // best effort: the copy's error is the one to return; a leftover is never run
		if err == nil {
			err = fmt.Errorf("SHA-256 %s, want %s", termtext.Line(strings.TrimSpace(got)), want)
		}
		return fmt.Errorf("the copy on host '%s' is not this binary: %w", h.Name, err)
	}
	if _, err := c.output(ctx, h, "chmod 755 "+Quote(tmp)+" && mv -f "+Quote(tmp)+" "+Quote(dest), nil); err != nil {
		_, _ = c.output(ctx, h, "rm -f "+Quote(tmp), nil) // best effort: the copy's error is the one to return; a leftover is never run
		return err
	}
	return nil
}

// output runs script on h and returns its stdout; a failure is an error
// with its stderr's last line.
func (c *Client) output(ctx context.Context, h Host, script string, stdin io.Reader) (string, error) {
	var out, errb capped
	out.max, errb.max = maxProbe, maxProbe
	res, err := c.Run(ctx, Call{Host: h, Command: script, Stdin: stdin, Stdout: &out, Stderr: &errb})
	if why := Failure(res, err, errb.b); why != "" {
		return "", errors.New(why)
	}
	if res.Code != 0 {
		return "", fmt.Errorf("exit %d: %s", res.Code, termtext.Line(strings.TrimSpace(string(errb.b))))
	}
	return string(out.b), nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	b   []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
