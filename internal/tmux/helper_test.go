package tmux

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// The test binary doubles as the program the tests run in tmux panes:
// started with helperArg first, it plays one of the helper modes instead
// of running tests. It reports exactly what it got (argv, working
// directory, environment, bytes on its terminal), so a test compares
// bytes rather than reading them off a screen.
const helperArg = "-swarm-tmux-helper"

// helperEnv is the variable whose value the report mode records.
const helperEnv = "SWARM_TMUX_TEST_VALUE"

// helperLife bounds a helper that is never killed (its server is killed
// at cleanup, which ends it sooner).
const helperLife = 10 * time.Minute

// readyMark is printed by the stdin mode once its terminal is raw and
// bracketed paste is on: tmux processes a pane's output in order, so when
// the mark is on screen, so is the mode.
const readyMark = "HELPER-READY"

// bracketedPasteOn asks the terminal (tmux) to bracket pastes.
const bracketedPasteOn = "\x1b[?2004h"

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3], os.Args[4:]))
	}
	os.Exit(m.Run())
}

// report is what the report mode writes.
type report struct {
	Dir    string
	Args   []string
	Env    string
	HasEnv bool
}

// runHelper runs mode with its output file out:
//
//	report OUT ARGS...  writes a report (JSON) of its argv after OUT, its
//	                    working directory and $SWARM_TMUX_TEST_VALUE
//	stdin OUT           sets its terminal raw, turns bracketed paste on and
//	                    appends every byte it reads to OUT
func runHelper(mode, out string, args []string) int {
	var err error
	switch mode {
	case "report":
		err = writeReport(out, args)
	case "stdin":
		err = recordStdin(out)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		time.Sleep(helperLife) // keep the error on screen for the test
		return 1
	}
	time.Sleep(helperLife)
	return 0
}

func writeReport(out string, args []string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	v, has := os.LookupEnv(helperEnv)
	data, err := json.Marshal(report{Dir: dir, Args: args, Env: v, HasEnv: has})
	if err != nil {
		return err
	}
	// Written whole, then renamed: the test never reads half a report.
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func recordStdin(out string) error {
	stty := exec.Command("stty", "raw", "-echo")
	stty.Stdin = os.Stdin
	if err := stty.Run(); err != nil {
		return fmt.Errorf("stty: %w", err)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Print(bracketedPasteOn + readyMark + "\r\n")
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}

// helperCommand is the argv that runs the helper in mode.
func helperCommand(t *testing.T, mode, out string, args ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe, helperArg, mode, out}, args...)
}

// readReport returns the report in path once it is there.
func readReport(path string) (report, bool) {
	var r report
	data, err := os.ReadFile(path)
	if err != nil {
		return r, false
	}
	return r, json.Unmarshal(data, &r) == nil
}
