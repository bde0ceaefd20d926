package tmux

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the control client end when the monitor that
// started it does, even by SIGKILL: a client left attached to a server
// that is exiting (kill-server) keeps it from exiting, and every tmux
// command meanwhile fails ("server exited unexpectedly").
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
