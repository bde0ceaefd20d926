// Command swarm runs AI coding agents (or any command) as workers in tmux
// windows or as background processes, and drives them in ralph loops.
package main

import (
	"os"
	"syscall"
)

func main() {
	foregroundExec = execSelf
	os.Exit(Main(os.Args[1:], DefaultIO()))
}

// execSelf replaces this process with this binary running args (same pid,
// terminal and environment); it returns only when that failed.
func execSelf(args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, append([]string{os.Args[0]}, args...), os.Environ())
}
