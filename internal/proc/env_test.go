package proc

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A process started with a token in its environment is found by it, and
// so is its child (which inherits it); other processes are not.
func TestWithEnvFindsTheTokenHolders(t *testing.T) {
	if !haveProc() {
		t.Skip("no /proc")
	}
	token := uuid.NewString()
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	cmd.Env = append(os.Environ(), "SWARM_TEST_TOKEN="+token)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	other := exec.Command("sleep", "30")
	other.Env = append(os.Environ(), "SWARM_TEST_TOKEN=not-"+token)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })

	deadline := time.Now().Add(10 * time.Second)
	for {
		found := WithEnv("SWARM_TEST_TOKEN", token)
		pids := map[int]bool{}
		for _, f := range found {
			pids[f.PID] = true
			if f.Ticks == 0 {
				t.Fatalf("unidentified target %+v", f)
			}
		}
		if pids[other.Process.Pid] {
			t.Fatalf("found the process with another token: %v", found)
		}
		if len(found) == 2 && pids[cmd.Process.Pid] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("found %v, want the shell %d and its sleep", found, cmd.Process.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHasEntry(t *testing.T) {
	env := []byte("A=1\x00TOKEN=abc\x00TOKEN2=abc\x00")
	if !hasEntry(env, []byte("TOKEN=abc")) || hasEntry(env, []byte("TOKEN=ab")) || hasEntry(env, []byte("OKEN=abc")) {
		t.Fatal("hasEntry matched inexactly")
	}
}
