package proc

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestMergeEnv(t *testing.T) {
	t.Parallel()
	got := mergeEnv([]string{"A=1", "K=old", "B=2", "K=dup"}, []string{"K=new", "C="})
	want := []string{"A=1", "B=2", "K=new", "C="}
	if !slices.Equal(got, want) {
		t.Errorf("mergeEnv = %q, want %q", got, want)
	}
}

// Exec becomes the command, keeping its pid, with the entries in its
// environment and the command found on the entries' PATH; a command not
// found returns a shell's 127.
func TestExec(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shDir := "/bin"
	if p, err := exec.LookPath("sh"); err == nil {
		shDir = p[:strings.LastIndexByte(p, '/')]
	}
	cases := []struct {
		name, path, want string
		code             int
	}{
		{"found on the entries' PATH", shDir, "K=v pid=%d\n", 0},
		{"not found there", t.TempDir(), "exec failed: 127 command not found: sh\n", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(self, "--", "K=v", "PATH="+c.path)
			cmd.Env = append(os.Environ(), helperEnv+"=exec", "PATH=/nonexistent")
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			want := c.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, cmd.Process.Pid)
			}
			if string(out) != want || code != c.code {
				t.Errorf("got %q exit %d, want %q exit %d (%v)", out, code, want, c.code, err)
			}
		})
	}
}
