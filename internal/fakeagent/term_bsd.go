//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// The BSDs name the termios ioctls differently from Linux; they are here only
// so that the tests of packages using fakeagent also build on a Mac.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
