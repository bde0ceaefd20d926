package ralph

import (
	"regexp"
	"strings"
	"testing"
)

func detect(prompt string, cfg DetectorConfig, chunks ...string) *Detector {
	d := NewDetector(cfg, prompt)
	for _, c := range chunks {
		d.Feed([]byte(c))
	}
	d.Flush()
	return d
}

var promiseCfg = DetectorConfig{Promise: true}

func stopKind(d *Detector) SignalKind {
	s, _ := d.Stop()
	return s.Kind
}

func TestDetectComplete(t *testing.T) {
	d := detect("do the work", promiseCfg, "\r\nworking\r\nall done <promise>COMPLETE</promise>\r\n")
	if stopKind(d) != SignalComplete {
		t.Fatal("COMPLETE not found")
	}
}

func TestDetectIgnoresPromptEcho(t *testing.T) {
	prompt := "Fix the failing tests in pkg/foo.\nWhen everything passes, print <promise>COMPLETE</promise> on its own line.\nOtherwise just stop."
	// Claude-Code-style transcript echo: "> " prefixes, re-wrapped at a
	// narrower width, styled, then the agent's own (unfinished) work.
	echo := "\r\n\x1b[2m> Fix the failing tests in pkg/foo.\r\n  When everything passes, print\r\n  <promise>COMPLETE</promise> on its own line.\r\n  Otherwise just stop.\x1b[0m\r\n"
	work := "⏺ Reading pkg/foo/foo_test.go\r\n⏺ Running go test ./...\r\n  FAIL: TestX\r\n"
	d := detect(prompt, promiseCfg, echo, work)
	if k := stopKind(d); k != SignalNone {
		t.Fatalf("echo of the prompt stopped the loop: %v", k)
	}
	// The same echo followed by a real tag does stop it.
	d = detect(prompt, promiseCfg, echo, work, "⏺ All tests pass.\r\n<promise>COMPLETE</promise>\r\n")
	if stopKind(d) != SignalComplete {
		t.Fatal("real COMPLETE after an echo not found")
	}
}

func TestDetectPromptEndingWithTag(t *testing.T) {
	prompt := "Work through TASKS.md. When all are done print <promise>COMPLETE</promise>"
	echo := "> Work through TASKS.md. When all are done print <promise>COMPLETE</promise>\r\n"
	d := detect(prompt, promiseCfg, echo, "Looking at TASKS.md now, three tasks left\r\n")
	if k := stopKind(d); k != SignalNone {
		t.Fatalf("echo of a prompt ending in the tag stopped the loop: %v", k)
	}
}

func TestDetectEchoDecidedLater(t *testing.T) {
	prompt := "print <promise>COMPLETE</promise> when the whole plan is finished and tested"
	d := NewDetector(promiseCfg, prompt)
	// The echo arrives in pieces: after the tag only part of the context.
	d.Feed([]byte("> print <promise>COMPLETE</promise> when\n"))
	if k := stopKind(d); k != SignalNone {
		t.Fatalf("undecided echo reported: %v", k)
	}
	d.Feed([]byte(" the whole plan is finished and tested\nok\n"))
	d.Flush()
	if k := stopKind(d); k != SignalNone {
		t.Fatalf("echo reported after its context arrived: %v", k)
	}
}

func TestDetectSplitAndWrappedTags(t *testing.T) {
	d := detect("x", promiseCfg, "some output <prom", "ise>COMPLETE</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("tag split across writes not found")
	}
	d = detect("x", promiseCfg, "<promise>COMPL\n  ETE</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("tag wrapped inside the word not found")
	}
	d = detect("x", promiseCfg, "\x1b[1m<promise>\x1b[32mCOMPLETE\x1b[0m</promise>\x1b[0m\r\n")
	if stopKind(d) != SignalComplete {
		t.Error("styled tag not found")
	}
	d = detect("x", promiseCfg, "no newline at the end <promise>COMPLETE</promise>")
	if stopKind(d) != SignalComplete {
		t.Error("tag without trailing newline not found at flush")
	}
}

func TestDetectBlockedDecidePrecedenceAndTasks(t *testing.T) {
	d := detect("x", promiseCfg, "<promise>DECIDE:REST or\n  GraphQL?</promise>\n<promise>BLOCKED:Missing API credentials</promise>\n")
	s, _ := d.Stop()
	if s.Kind != SignalBlocked || s.Detail != "Missing API credentials" {
		t.Errorf("stop = %+v", s)
	}
	d = detect("x", promiseCfg, "<promise>DECIDE:REST or\n  GraphQL?</promise>\n")
	s, _ = d.Stop()
	if s.Kind != SignalDecide || s.Detail != "REST or GraphQL?" {
		t.Errorf("decide = %+v", s)
	}
	d = detect("x", promiseCfg, "<promise>BLOCKED:x</promise>\n<promise>COMPLETE</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("COMPLETE does not take precedence")
	}
	d = detect("x", promiseCfg, "<promise>TASK-7:DONE</promise>\n<promise>TASK-8:DONE</promise>\n<promise>TASK-7:DONE</promise>\n")
	if stopKind(d) != SignalNone {
		t.Error("task tag stopped the loop")
	}
	if got := d.Tasks(); strings.Join(got, ",") != "TASK-7,TASK-8" {
		t.Errorf("tasks = %v", got)
	}
}

func TestDetectCustomWordAndDisabled(t *testing.T) {
	d := detect("x", DetectorConfig{Promise: true, Word: "SHIPPED"}, "<promise>COMPLETE</promise>\n<promise>SHIPPED</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("custom word not found")
	}
	d = detect("x", DetectorConfig{Promise: true, Word: "SHIPPED"}, "<promise>COMPLETE</promise>\n")
	if stopKind(d) != SignalNone {
		t.Error("default word accepted with a custom one set")
	}
	d = detect("x", DetectorConfig{}, "<promise>COMPLETE</promise>\n")
	if stopKind(d) != SignalNone {
		t.Error("tag found with --no-promise")
	}
}

func TestDetectDonePattern(t *testing.T) {
	re := regexp.MustCompile(`(?m)All tasks complete`)
	cfg := DetectorConfig{DonePattern: re}
	prompt := "Work on the plan. When nothing is left, say: All tasks complete. Then stop."
	d := detect(prompt, cfg, "> Work on the plan. When nothing is left, say: All tasks complete. Then stop.\r\nreading plan\r\n")
	if stopKind(d) != SignalNone {
		t.Error("done pattern matched the prompt echo")
	}
	d = detect(prompt, cfg, "reading plan\r\nfinished the last one.\r\nAll tasks complete\r\n")
	s, _ := d.Stop()
	if s.Kind != SignalDonePattern || s.Detail != "All tasks complete" {
		t.Errorf("stop = %+v", s)
	}
}

func TestDetectPromptThatIsOnlyTheTag(t *testing.T) {
	// No context to tell echo from output: the tag counts.
	d := detect("<promise>COMPLETE</promise>", promiseCfg, "<promise>COMPLETE</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("tag not counted")
	}
}

func TestDetectLongStream(t *testing.T) {
	d := NewDetector(promiseCfg, "prompt")
	for i := 0; i < 2000; i++ {
		d.Feed([]byte(strings.Repeat("x", 100) + "\n"))
	}
	d.Feed([]byte("<promise>COMPLETE</promise>\n"))
	if stopKind(d) != SignalComplete {
		t.Error("tag after a long stream not found")
	}
	if len(d.text) > window+200 {
		t.Errorf("window grew to %d", len(d.text))
	}
}

func FuzzDetector(f *testing.F) {
	f.Add("prompt <promise>COMPLETE</promise>", "out\n<promise>COMPLETE</promise>\n", 5)
	f.Add("", "<promise>BLOCKED:x</promise>", 3)
	f.Add("a\nb", "\x1b[31m<promise>DECIDE:q?</promise>", 1)
	f.Fuzz(func(t *testing.T, prompt, out string, split int) {
		d := NewDetector(DetectorConfig{Promise: true, DonePattern: regexp.MustCompile(`done`)}, prompt)
		if split <= 0 {
			split = 1
		}
		for i := 0; i < len(out); i += split {
			d.Feed([]byte(out[i:min(len(out), i+split)]))
		}
		d.Flush()
		s, ok := d.Stop()
		if ok && s.Kind == SignalNone {
			t.Fatal("stop without a kind")
		}
		// The same output fed whole gives the same verdict.
		d2 := NewDetector(DetectorConfig{Promise: true, DonePattern: regexp.MustCompile(`done`)}, prompt)
		d2.Feed([]byte(out))
		d2.Flush()
		if s2, _ := d2.Stop(); s2.Kind != s.Kind && len(out) < window {
			// Splitting may only delay a verdict, never change it.
			t.Fatalf("split %d gives %v, whole gives %v", split, s.Kind, s2.Kind)
		}
	})
}

func TestDetectPrimeGivesContextButIsNotSearched(t *testing.T) {
	prompt := "You stopped without printing <promise>COMPLETE</promise>. Continue the task below.\n\nDo the task."
	d := NewDetector(promiseCfg, prompt)
	d.Prime([]byte("> You stopped without printing <promise>COMPLETE</promise>. Continue the task below.\r\n\r\nDo the task."))
	if stopKind(d) != SignalNone {
		t.Fatal("primed text was searched")
	}
	// The agent's own tag right after the echo: no context after it, and
	// the agent goes quiet. The context before it (the echo's end) does not
	// agree with the prompt around its tag, so it counts at once.
	d.Feed([]byte("\r\n<promise>COMPLETE</promise>\r\n"))
	if stopKind(d) != SignalComplete {
		t.Fatal("tag after a primed echo not found")
	}
}

func TestDetectQuietFlushDecides(t *testing.T) {
	d := NewDetector(promiseCfg, "print <promise>COMPLETE</promise> at the very end of all the work")
	d.Feed([]byte("<promise>COMPLETE</promise>\n"))
	if stopKind(d) != SignalNone {
		t.Fatal("decided before the context could arrive")
	}
	d.Flush() // the agent went quiet
	if stopKind(d) != SignalComplete {
		t.Fatal("quiet flush did not decide")
	}
	d.Feed([]byte("more output\n"))
	if stopKind(d) != SignalComplete {
		t.Fatal("feeding after a flush lost the signal")
	}
}

func TestWithoutEcho(t *testing.T) {
	prompt := "Add a settings page where users can select a theme.\nMention Compacting conversation in the docs."
	screen := "> Add a settings page where users can\n  select a theme.\n> Mention Compacting conversation in\n  the docs.\nWorking: Context: 40%\nSelect login method:"
	got := withoutEcho(screen, prompt)
	if strings.Contains(got, "select a theme") || strings.Contains(got, "Compacting") {
		t.Errorf("echo kept:\n%s", got)
	}
	if !strings.Contains(got, "Context: 40%") || !strings.Contains(got, "Select login method:") {
		t.Errorf("agent output dropped:\n%s", got)
	}
}

func TestFindTags(t *testing.T) {
	text := "talk about <promise> tags, then <promise>COMPLETE</promise> and <promise>" + strings.Repeat("x", 700) + "</promise>"
	tags := findTags(text)
	if len(tags) != 1 || text[tags[0][2]:tags[0][3]] != "COMPLETE" {
		t.Fatalf("tags = %v", tags)
	}
	d := detect("x", promiseCfg, "a stray <promise> opening, then later\n<promise>COMPLETE</promise>\n")
	if stopKind(d) != SignalComplete {
		t.Error("stray opening swallowed the tag")
	}
}
