package agenttest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/mockapi"
)

// retryLine is Claude's status line while it waits to retry an API error,
// e.g. "✻ API error · Retrying in 5s · attempt 1/2".
var retryLine = regexp.MustCompile(`(?mi)^.*retrying in \d+s · attempt \d+/\d+.*$`)

// watchRetries polls the screen until the final "API Error" with the idle
// box, logging each new retry status line with its time since began, and
// returns the first retrying screen and the final one.
func watchRetries(t *testing.T, a *Agent, began time.Time) (retrying, final string) {
	t.Helper()
	var seen []string
	final = a.WaitScreen(3*time.Minute, "final API error", func(s string) bool {
		if l := retryLine.FindString(s); l != "" && (len(seen) == 0 || seen[len(seen)-1] != l) {
			seen = append(seen, l)
			t.Logf("%6.1fs %s", time.Since(began).Seconds(), strings.TrimSpace(l))
			if retrying == "" {
				retrying = s
			}
		}
		return finalError(s)
	})
	t.Logf("%6.1fs final error", time.Since(began).Seconds())
	if retrying == "" {
		t.Error("no retry status line seen before the final error")
	}
	return retrying, final
}

// (d) a 429 on every request: Claude retries (CLAUDE_CODE_MAX_RETRIES=2,
// so 3 requests) showing its countdown, then prints the final API error
// and goes back to its input box.
func TestClaude429RetryThenError(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{Env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}}, skip,
		mockapi.RateLimit(2*time.Second).Repeat(-1))
	a.WaitIdle(ReadyTimeout)
	began := time.Now()
	a.Submit("Do the next step.")
	retrying, final := watchRetries(t, a, began)
	a.SaveFixture("working-retrying-429.txt", retrying)
	a.SaveFixture("error-429-final.txt", final)
	if !strings.Contains(final, "mock-org") {
		t.Errorf("final 429 screen lacks the error line and the API's message")
	}
	if n := len(a.Mock.Turns()); n != 3 {
		t.Errorf("%d requests, want 3 (1 + CLAUDE_CODE_MAX_RETRIES=2)", n)
	}
	if dead, _ := a.Dead(); dead {
		t.Error("claude exited after the error")
	}
}

// (d) the same for 529 overloaded_error: Claude retries it as it does a
// 429 (3 requests with CLAUDE_CODE_MAX_RETRIES=2, seen with Claude Code
// 2.1.197), then prints the final error and stays up.
func TestClaude529RetryThenError(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{Env: []string{"CLAUDE_CODE_MAX_RETRIES=2"}}, skip,
		mockapi.Overloaded().Repeat(-1))
	a.WaitIdle(ReadyTimeout)
	began := time.Now()
	a.Submit("Do the next step.")
	retrying, final := watchRetries(t, a, began)
	a.SaveFixture("working-retrying-529.txt", retrying)
	a.SaveFixture("error-529-final.txt", final)
	if !strings.Contains(final, "API Error: 529") {
		t.Errorf("final 529 screen lacks the error line")
	}
	if n := len(a.Mock.Turns()); n != 3 {
		t.Errorf("%d requests, want 3 (1 + CLAUDE_CODE_MAX_RETRIES=2)", n)
	}
	if dead, _ := a.Dead(); dead {
		t.Error("claude exited after the error")
	}
}

// A request that never gets an answer: Claude shows its working screen
// ("esc to interrupt") for as long as it waits, and Escape cancels the
// request.
func TestClaudeHangShowsWorking(t *testing.T) {
	Require(t)
	t.Parallel()
	a := StartClaude(t, Config{}, skip, mockapi.Hang())
	a.WaitIdle(ReadyTimeout)
	a.Submit("Think hard.")
	working := a.WaitScreen(AnswerTimeout, "working screen", Contains("esc to interrupt"))
	a.SaveFixture("working-waiting.txt", working)
	if !a.Mock.WaitFor(AnswerTimeout, func(rs []mockapi.Request) bool {
		for _, r := range rs {
			if r.Turn {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the hanging turn never reached the mock")
	}
	a.Keys("Escape")
	// Interrupted before any output, Claude drops the turn and puts the
	// prompt back into its input box for editing.
	restored := regexp.MustCompile(`(?m)^─{20,}\n❯[ \x{00a0}]Think hard\.\s*\n─{20,}$`)
	interrupted := a.WaitScreen(AnswerTimeout, "prompt back in the input box", func(s string) bool {
		return restored.MatchString(s) && !strings.Contains(s, "esc to interrupt")
	})
	a.SaveFixture("interrupted-prompt-restored.txt", interrupted)
	// Every turn request (the hanging one: side requests do not count)
	// has been closed.
	if !a.Mock.WaitFor(AnswerTimeout, func(rs []mockapi.Request) bool {
		turns := 0
		for _, r := range rs {
			if r.Turn {
				turns++
				if r.End.IsZero() {
					return false
				}
			}
		}
		return turns > 0
	}) {
		t.Error("the hanging request stayed open after Escape")
	}
}

// finalError reports whether the screen shows an API error that ended the
// turn, Claude back at its input box. 2.1.332 may leave only the end of
// a wrapped 429 on screen ("of 50,000 input tokens per minute. Please try
// again later."), its "● API Error: Request rejected (429) · ..." line
// redrawn away.
func finalError(s string) bool {
	return (strings.Contains(s, "API Error") || strings.Contains(s, "Please try again later")) && IsIdle(s)
}
