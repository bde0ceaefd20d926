package remote

import (
	"os/exec"
	"syscall"
	"time"
)

func execOutput(argv []string) (string, error) {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

// killWait kills pid and waits until it is gone.
func killWait(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for i := 0; i < 200; i++ {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
