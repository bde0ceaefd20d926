// Command swarm runs AI coding agents (or any command) as workers in tmux
// windows or as background processes, and drives them in ralph loops.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], DefaultIO()))
}
