package ralph

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A check that prints far more than checkOutputMax never has more than
// that written anywhere while it runs (issue 16, item 12: a 300 MB temp
// file was seen): its output is capped as it is written. What the loop
// keeps is the head and the tail, so the last line still reaches the next
// prompt.
func TestCheckOutputIsCappedWhileWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sizeFile := filepath.Join(dir, "size")
	// The check measures what its own output holds once it has printed
	// 3 MB: a file's size, or nothing for a pipe (fd 3 is its output,
	// while stat's own goes to sizeFile).
	check := `yes 'flood line' | head -c 3000000; echo FINAL-LINE; stat -L -c %s /proc/self/fd/3 3>&1 > ` + sizeFile + `; exit 1`
	res := runCheck(check, dir, time.Minute)
	if res.ok || res.status != "exit 1" {
		t.Fatalf("check result %+v", res.status)
	}
	data, err := os.ReadFile(sizeFile)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(data))); n > checkOutputMax {
		t.Errorf("the check's output held %d bytes while it ran, over the cap of %d", n, checkOutputMax)
	}
	if !strings.HasPrefix(res.output, "flood line\n") || !strings.HasSuffix(res.output, "FINAL-LINE\n") ||
		!strings.Contains(res.output, "bytes of output dropped here") {
		t.Errorf("kept output: %d bytes, starts %q, ends %q", len(res.output), res.output[:min(40, len(res.output))], res.output[max(0, len(res.output)-40):])
	}
	if len(res.output) > checkOutputMax+200 {
		t.Errorf("kept %d bytes", len(res.output))
	}
}

// A check that leaves a process holding its output open does not hold the
// loop up: the output is taken checkDrainWait after the check ended.
func TestCheckLeftoverHoldingOutputDoesNotBlock(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := runCheck(`setsid sleep 10 & echo done`, t.TempDir(), time.Minute)
	if !res.ok || res.output != "done\n" {
		t.Errorf("result %+v", res)
	}
	if took := time.Since(start); took > checkDrainWait+5*time.Second {
		t.Errorf("the check took %v", took)
	}
}

// An on-exit hook's output reaches the loop's output (the monitor log) up
// to hookOutputMax, then one line says the rest was dropped (issue 16,
// item 12: 200 MB of monitor.log was seen).
func TestHookOutputIsCappedInTheMonitorLog(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	e := &Engine{Name: "w", Out: &out}
	e.runHook("on-exit command", `yes 'hook line' | head -c 5000000; echo LAST`, t.TempDir(), os.Environ())
	note := "[swarm: on-exit command: output cut here; the rest is dropped]\n"
	if out.Len() > hookOutputMax+len(note)+1 || !strings.HasSuffix(out.String(), note) || !strings.HasPrefix(out.String(), "hook line\n") {
		t.Errorf("hook output: %d bytes, ends %q", out.Len(), out.String()[max(0, out.Len()-80):])
	}
	out.Reset()
	e.runHook("on-exit command", `echo small`, t.TempDir(), os.Environ())
	if out.String() != "small\n" {
		t.Errorf("small hook output: %q", out.String())
	}
}
