package remote

import "testing"

// uname -sm's words become Go's GOOS/GOARCH, so install can compare them
// with this binary's; words it does not know are kept for the message.
func TestPlatform(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Linux x86_64":   "linux/amd64",
		"Linux aarch64":  "linux/arm64",
		"Darwin arm64":   "darwin/arm64",
		"Linux armv7l":   "linux/arm",
		"FreeBSD amd64":  "freebsd/amd64",
		"Plan9 mips":     "Plan9 mips",
		"sh: uname: not": "sh: uname: not",
	} {
		if got := platform(in); got != want {
			t.Errorf("platform(%q) = %q, want %q", in, got, want)
		}
	}
}
