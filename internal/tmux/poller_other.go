//go:build !linux

package tmux

import "os/exec"

// dieWithParent: no parent-death signal here; the client ends when its
// standard input closes, which the monitor's exit does.
func dieWithParent(cmd *exec.Cmd) {}
