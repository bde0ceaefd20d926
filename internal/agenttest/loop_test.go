package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/mockapi"
)

// End-to-end: the real swarm binary runs ralph loops of the real claude
// against the scripted mock. Each test logs one "result:" line with what
// it measured (go test -v shows them).

// (1) The agent answers its first turn with plain text, and its second
// (a fresh claude in iteration 2) with the promise: the loop ends
// complete after 2 iterations, and ralph wait exits 0.
func TestLoopPromiseAfterTwoTurns(t *testing.T) {
	Require(t)
	t.Parallel()
	first := "I did the first step; more is left."
	l := startLoop(t, "promise", loopOpts{
		replies: []mockapi.Reply{
			mockapi.Text(first),
			mockapi.Text("All done.\n<promise>COMPLETE</promise>"),
		},
		flags: []string{"--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "5"},
	})
	code, out := l.wait(4 * time.Minute)
	wall := time.Since(l.began)
	if code != 0 || l.str("exit_reason") != "complete" || l.num("current_iteration") != 2 {
		t.Fatalf("ralph wait exit %d (%s); state: reason %q after %d iterations",
			code, out, l.str("exit_reason"), l.num("current_iteration"))
	}
	turns := l.mock.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2", len(turns))
	}
	for i, tr := range turns {
		if !strings.Contains(tr.UserText(), "Do the next step of the task") {
			t.Errorf("turn %d lacks the prompt", i+1)
		}
	}
	// Iteration 2 is a fresh claude: its turn does not carry turn 1.
	if strings.Contains(string(turns[1].Body), first) {
		t.Error("turn 2 carries turn 1's answer: not a fresh context")
	}
	if !strings.Contains(l.iterLog(), "[END] iteration 1 exit=none reason=idle") {
		t.Errorf("iteration 1 did not end as idle:\n%s", l.iterLog())
	}
	t.Logf("result: promise after two turns: %s, ralph wait exit %d, %d iterations, wall %v; iteration 1 ended %v after its answer%s",
		l.str("exit_reason"), code, l.num("current_iteration"), wall.Round(100*time.Millisecond),
		l.watch.ended(1).Sub(turns[0].End).Round(100*time.Millisecond), l.rescues())
}

// (2) The mock makes claude run `touch DONE` with its Bash tool: the
// done file ends the loop as done_file.
func TestLoopDoneFileByToolCall(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "donefile", loopOpts{
		replies: []mockapi.Reply{mockapi.Bash("touch DONE"), mockapi.Text("Created DONE.")},
		flags:   []string{"--done-file", "DONE", "--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "3"},
	})
	code, out := l.wait(3 * time.Minute)
	if code != 0 || l.str("exit_reason") != "done_file" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
	}
	fi, err := os.Stat(filepath.Join(l.setup.Dir, "DONE"))
	if err != nil {
		t.Fatalf("DONE: %v", err)
	}
	turns := l.mock.Turns()
	if len(turns) == 0 {
		t.Fatal("no turn reached the mock")
	}
	// Measured from the end of the tool call's answer: claude runs the
	// tool, then the next poll sees the file.
	ended := l.watch.ended(l.num("current_iteration"))
	t.Logf("result: done file by tool call: %s after %d iteration(s), ralph wait exit %d; claude ran the tool %v after the call was sent, the iteration ended %v after DONE appeared; %d turn(s)%s",
		l.str("exit_reason"), l.num("current_iteration"), code,
		fi.ModTime().Sub(turns[0].End).Round(100*time.Millisecond), ended.Sub(fi.ModTime()).Round(100*time.Millisecond),
		len(turns), l.rescues())
}

// (3) --same-session: the agent answers without a tag and goes idle;
// swarm types the continuation into the same claude, whose second turn
// carries the first (one conversation, one claude process).
func TestLoopSameSession(t *testing.T) {
	Require(t)
	t.Parallel()
	first := "Step one is done; step two is left."
	l := startLoop(t, "same", loopOpts{
		replies: []mockapi.Reply{
			mockapi.Text(first),
			// Slow, so the continuation's screen can be captured while
			// claude works on it.
			mockapi.Text("Step two is done.\n<promise>COMPLETE</promise>").Slow(300 * time.Millisecond),
		},
		flags: []string{"--same-session", "--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "5"},
	})
	// The continuation at work: pasted, so claude shows it folded
	// ("[Pasted text #1 +N lines]"); captured while claude answers it.
	cont := l.capture("working-same-session-continuation.txt", func(s string) bool {
		st := readState(l.env.Home, l.name)
		return st != nil && st.Iteration >= 2 && strings.Contains(s, "esc to interrupt")
	})
	code, out := l.wait(4 * time.Minute)
	continued := len(logLines(l.iterLog(), "START")) - 1
	if code != 0 || l.str("exit_reason") != "complete" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
	}
	// One continuation, answered with the promise: 2 iterations. Each
	// continuation typed is one START (same session) line.
	if n := l.num("current_iteration"); n != 2 || continued != 1 {
		t.Errorf("%d iterations and %d continuations typed for one answer to continue; want 2 and 1:\n%s", n, continued, l.iterLog())
	}
	turns := l.mock.Turns()
	if len(turns) < 2 {
		t.Fatalf("%d turns, want 2", len(turns))
	}
	if len(turns) != 2 {
		t.Errorf("%d turns, want 2", len(turns))
	}
	// One conversation: turn 2 holds turn 1's prompt and answer, then
	// the continuation.
	msgs := turns[1].Messages.Messages
	var assistant []string
	for _, m := range msgs {
		if m.Role == "assistant" {
			assistant = append(assistant, m.Text())
		}
	}
	if !strings.Contains(strings.Join(assistant, "\n"), first) {
		t.Errorf("turn 2 does not carry turn 1's answer; assistant messages: %q", assistant)
	}
	if u := turns[1].UserText(); !strings.Contains(u, "Do the next step of the task") || !strings.Contains(u, "You stopped without printing") {
		t.Errorf("turn 2's user text lacks the first prompt or the continuation:\n%s", u)
	}
	// Claude probes the API (HEAD /) once per start (2.1.197; 2.1.332
	// probes no more): at most one start, one claude. The session ids
	// below say it for every release.
	starts := 0
	for _, r := range l.mock.Requests() {
		if r.Method == "HEAD" && r.Path == "/" {
			starts++
		}
	}
	if starts > 1 {
		t.Errorf("%d claude start-up probes, want at most 1 (one claude for both iterations)", starts)
	}
	sid := func(r mockapi.Request) string { return r.Header.Get("X-Claude-Code-Session-Id") }
	if sid(turns[0]) != sid(turns[1]) {
		t.Errorf("session ids differ: %q, %q", sid(turns[0]), sid(turns[1]))
	}
	if cont() == "" {
		t.Log("the continuation's working screen was not caught")
	}
	t.Logf("result: same session: %s after %d iterations, ralph wait exit %d, %d claude start(s), %d continuation(s) typed, %d turns; turn 2 carries %d messages (turn 1's answer: %v) and %d continuation text(s), sent %v after turn 1's answer%s",
		l.str("exit_reason"), l.num("current_iteration"), code, starts, continued, len(turns), len(msgs),
		strings.Contains(strings.Join(assistant, "\n"), first), strings.Count(turns[1].UserText(), "You stopped without printing"),
		turns[1].Time.Sub(turns[0].End).Round(100*time.Millisecond), l.rescues())
}

// (4) Each of the dialogs a first run may show stops the loop before the
// prompt: preflight_failed, exit 1, ralph status names the dialog and its
// fix; nothing is answered (the API key is not rejected) and no prompt
// reaches the mock.
func TestLoopDialogsStopPreflight(t *testing.T) {
	Require(t)
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		kind string
		fix  string
	}{
		{"trust", Config{NoTrust: true}, agent.StuckTrust, `"hasTrustDialogAccepted": true`},
		{"api-key", Config{NoKeyApproval: true}, agent.StuckAPIKey, `"customApiKeyResponses.approved"`},
		{"bypass", Config{NoBypassAccepted: true}, agent.StuckBypass, `"skipDangerousModePermissionPrompt": true`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := startLoop(t, "dlg-"+c.name, loopOpts{cfg: c.cfg, noRescue: true,
				flags: []string{"--idle-grace", "3s", "--max-iterations", "3"}})
			code, out := l.wait(3 * time.Minute)
			took := time.Since(l.began)
			if code != 1 || l.str("exit_reason") != "preflight_failed" {
				t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
			}
			st := l.status()
			status := st
			for _, want := range []string{"Exit reason: preflight_failed", "the agent is waiting at " + agent.WithArticle(c.kind), "Fix: ", c.fix} {
				if !strings.Contains(st, want) {
					t.Errorf("ralph status lacks %q:\n%s", want, st)
				}
			}
			if n := len(l.mock.Turns()); n != 0 {
				t.Errorf("%d turns reached the mock; want none", n)
			}
			// The agent is left at its dialog, so that the printed fix
			// (swarm attach, answer) can be done; kill ends it.
			if screen := l.screen(); !strings.Contains(status, "swarm attach "+l.name) || len(claudePIDs(l.setup)) == 0 || screen == "" {
				t.Errorf("the agent was not left at its dialog (fix %q):\n%s", l.str("exit_hint"), screen)
			}
			if r := l.env.Run("kill", l.name); r.Code != 0 {
				t.Errorf("kill: %s", r)
			}
			// Wait for every claude of the test to be gone: whatever it
			// would write on its way out is then written.
			l.eventually("every claude of the test to exit", 15*time.Second, func() bool {
				return len(claudePIDs(l.setup)) == 0
			})
			rejected := rejectedKeys(t, l.setup.Home)
			if key := APIKey[len(APIKey)-20:]; slices.Contains(rejected, key) {
				t.Errorf("the API key was rejected: customApiKeyResponses.rejected = %q", rejected)
			}
			detail := l.str("exit_detail")
			t.Logf("result: dialog %s: %s, ralph wait exit %d after %v, 0 turns, key rejected: %v; detail: %s",
				c.name, l.str("exit_reason"), code, took.Round(100*time.Millisecond), slices.Contains(rejected, APIKey[len(APIKey)-20:]), detail)
		})
	}
}

// rejectedKeys reads customApiKeyResponses.rejected from ~/.claude.json.
func rejectedKeys(t *testing.T, home string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Responses struct {
			Rejected []string `json:"rejected"`
		} `json:"customApiKeyResponses"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("~/.claude.json: %v", err)
	}
	return cfg.Responses.Rejected
}

// (5) A 429 or 529 on every request, with claude's own retries cut to
// one: each iteration ends on claude's final API error as a failure; the
// 5th failure in a row (after backoffs of 1, 2, 4 and 8 s) ends the loop
// failed, and ralph status shows the error line under "Last error:".
func TestLoopAPIErrorsFail(t *testing.T) {
	Require(t)
	t.Parallel()
	cases := []struct {
		name  string
		reply mockapi.Reply
		want  string
	}{
		{"429", mockapi.RateLimit(time.Second).Repeat(-1), "API Error: Request rejected (429)"},
		{"529", mockapi.Overloaded().Repeat(-1), "API Error: 529"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := startLoop(t, "err"+c.name, loopOpts{
				cfg:     Config{Env: []string{"CLAUDE_CODE_MAX_RETRIES=1"}},
				replies: []mockapi.Reply{c.reply},
				flags:   []string{"--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "10"},
			})
			// The final error at 80 columns, with the effort gauge wrapped
			// below the input box (internal/agent's TestClaudeHarnessScreens).
			l.capture("error-"+c.name+"-final-80x24.txt", func(s string) bool {
				return strings.Contains(s, "API Error") && IsIdle(s) && effortAlone.MatchString(s)
			})
			code, out := l.wait(6 * time.Minute)
			wall := time.Since(l.began)
			if code != 1 || l.str("exit_reason") != "failed" || l.num("current_iteration") != 5 {
				t.Fatalf("ralph wait exit %d (%s); state: reason %q after %d iterations",
					code, out, l.str("exit_reason"), l.num("current_iteration"))
			}
			if n := l.num("consecutive_failures"); n != 5 {
				t.Errorf("consecutive_failures %d, want 5", n)
			}
			st := l.status()
			m := regexp.MustCompile(`(?m)^Last error: (.*)$`).FindStringSubmatch(st)
			if m == nil || !strings.Contains(m[1], c.want) {
				t.Errorf("ralph status has no Last error with %q:\n%s", c.want, st)
			}
			fails := logLines(l.iterLog(), "FAIL")
			if len(fails) != 5 {
				t.Errorf("%d FAIL lines, want 5:\n%s", len(fails), l.iterLog())
			}
			// The pauses between a failed iteration's end and the next
			// start: the backoff, plus stopping claude.
			var gaps []string
			for i := 1; i < 5; i++ {
				gaps = append(gaps, l.watch.started(i+1).Sub(l.watch.ended(i)).Round(100*time.Millisecond).String())
			}
			lastErr := ""
			if m != nil {
				lastErr = m[1]
			}
			t.Logf("result: %s: %s after %d iterations, ralph wait exit %d, wall %v, %d turns, end-to-start gaps %s (backoff 1,2,4,8 s); Last error: %s%s",
				c.name, l.str("exit_reason"), l.num("current_iteration"), code, wall.Round(100*time.Millisecond),
				len(l.mock.Turns()), strings.Join(gaps, ","), lastErr, l.rescues())
		})
	}
}

// (6) A subscriber's usage limit that resets 20 s after the request: the
// loop waits (status "waiting for usage limit reset until HH:MM"), types
// "continue" once the limit has reset (+1 min of slack, by design), and
// the answer to it completes the loop with no failure.
func TestLoopUsageLimitWaitsAndContinues(t *testing.T) {
	Require(t)
	t.Parallel()
	var mu sync.Mutex
	var reset time.Time
	asked := 0
	l := startLoop(t, "limit", loopOpts{
		cfg: Config{OAuth: true},
		// The reset is set when the turn is asked, so it is 20 s ahead
		// of the limit however long claude took to start.
		script: func(r mockapi.Request) (mockapi.Reply, bool) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if asked == 1 {
				reset = time.Now().Add(20 * time.Second)
				return mockapi.UsageLimit("five_hour", reset), true
			}
			return mockapi.Text("Continued and finished.\n<promise>COMPLETE</promise>"), true
		},
		flags: []string{"--idle-grace", "3s", "--inactivity-timeout", "120", "--max-iterations", "3"},
	})
	l.capture("limit-session-80x24.txt", func(s string) bool {
		return strings.Contains(s, "You've hit your") && IsIdle(s) && effortAlone.MatchString(s)
	})
	l.capture("idle-after-limit-continue.txt", func(s string) bool {
		// (Idle: 2.1.332 still shows the limit while it works on the
		// continuation.)
		return strings.Contains(s, "❯ continue") && strings.Contains(s, "You've hit your") && IsIdle(s)
	})
	waitLine := regexp.MustCompile(`(?m)^Status: waiting for usage limit reset until (\d\d:\d\d)$`)
	var status string
	l.eventually("ralph status to say it waits for the limit", 3*time.Minute, func() bool {
		status = l.status()
		return waitLine.MatchString(status)
	})
	seen := time.Now()
	limitScreen := l.screen()
	limitFixture := "limit-session-menu-80x24.txt"
	if Version() != "2.1.197" {
		// 2.1.332 opens no menu: it will continue by itself at the reset
		// ("Continuing automatically at 5:10pm · Esc to cancel").
		limitFixture = "limit-session-auto-continue-80x24.txt"
	}
	l.session().SaveFixture(limitFixture, limitScreen)
	until := waitLine.FindStringSubmatch(status)[1]
	code, out := l.wait(5 * time.Minute)
	if code != 0 || l.str("exit_reason") != "complete" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
	}
	turns := l.mock.Turns()
	if len(turns) < 2 {
		t.Fatalf("%d turns, want 2 (the limit, then the continuation)", len(turns))
	}
	resumes := logLines(l.iterLog(), "RESUME")
	mu.Lock()
	r := reset
	mu.Unlock()
	t.Logf("result: usage limit: status showed 'waiting for usage limit reset until %s' %v after the limit; reset at %s; first continue sent %v after the limit (%v after the reset); %s, ralph wait exit %d, %d failures, %d iteration(s), %d continue(s) typed, %d turns, loop ended %v after the limit%s",
		until, seen.Sub(turns[0].End).Round(100*time.Millisecond), r.Local().Format("15:04:05"),
		turns[1].Time.Sub(turns[0].End).Round(100*time.Millisecond), turns[1].Time.Sub(r).Round(100*time.Millisecond),
		l.str("exit_reason"), code, l.num("total_failures"), l.num("current_iteration"), len(resumes), len(turns),
		l.watch.ended(l.num("current_iteration")).Sub(turns[0].End).Round(100*time.Millisecond), l.rescues())
	if n := l.num("total_failures"); n != 0 {
		t.Errorf("total_failures %d, want 0", n)
	}
	// 2.1.332 continues by itself at the reset ("Continuing automatically
	// at 5:35pm"): the loop then types nothing (its RESUME line says so);
	// else the turn after the limit is the limit message typed.
	itself := len(resumes) == 1 && strings.Contains(resumes[0], "the agent continued by itself")
	if u, _ := turns[1].LastUser(); !itself && !strings.Contains(u.Text(), "continue") {
		t.Errorf("the turn after the limit is not the limit message: %q", u.Text())
	}
	// Its answer holds the promise: nothing more should be typed.
	if len(resumes) != 1 || len(turns) != 2 {
		t.Errorf("%d RESUME line(s) and %d turns; want 1 and 2 (the answer to the first continue completes the loop):\n%s",
			len(resumes), len(turns), l.iterLog())
	}
}

// (7) With --idle-grace 3s and a long inactivity timeout, each iteration
// whose agent answered and went idle ends within idle-grace + one poll
// (the product's 2 s: the first poll that sees the idle screen starts the
// grace) + renderSlack of the answer's end at the mock API.
func TestLoopIdleGraceEndsIteration(t *testing.T) {
	Require(t)
	t.Parallel()
	const grace = 3 * time.Second
	// renderSlack: claude draws its idle screen a moment after the API's
	// stream ends (hundreds of milliseconds on a loaded machine).
	const renderSlack = time.Second
	l := startLoop(t, "idle", loopOpts{
		replies: []mockapi.Reply{mockapi.Text("Step done; more to do.").Repeat(-1)},
		poll:    2 * time.Second,
		flags:   []string{"--idle-grace", "3s", "--inactivity-timeout", "600", "--max-iterations", "3"},
	})
	code, out := l.wait(5 * time.Minute)
	if code != 0 || l.str("exit_reason") != "max_iterations" {
		t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
	}
	turns := l.mock.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d turns, want 3", len(turns))
	}
	reqs := l.mock.Requests()
	var lines []string
	for i, tr := range turns {
		ended := l.watch.ended(i + 1).Sub(tr.End)
		line := fmt.Sprintf("iteration %d: answer→END %v", i+1, ended.Round(100*time.Millisecond))
		if i+1 < len(turns) {
			next := l.watch.started(i + 2).Sub(tr.End)
			var nextReq time.Duration
			for _, r := range reqs {
				if r.Time.After(tr.End) {
					nextReq = r.Time.Sub(tr.End)
					break
				}
			}
			line += fmt.Sprintf(", →next START %v, →next request %v", next.Round(100*time.Millisecond), nextReq.Round(100*time.Millisecond))
			// The bar: the next iteration starts within the grace
			// + 2 s of the answer (restart delay 1 s included).
			if next > grace+2*time.Second+renderSlack {
				t.Errorf("iteration %d started %v after iteration %d's answer; want within idle-grace %v + 2 s + %v", i+2, next.Round(100*time.Millisecond), i+1, grace, renderSlack)
			}
		}
		lines = append(lines, line)
		if ended > grace+2*time.Second+renderSlack {
			t.Errorf("iteration %d ended %v after its answer; want within idle-grace %v + a 2 s poll + %v", i+1, ended.Round(100*time.Millisecond), grace, renderSlack)
		}
	}
	t.Logf("result: idle grace 3s (poll 2s): %s%s", strings.Join(lines, "; "), l.rescues())
}

// (8) The measurement for the closing note: a 5-iteration loop whose
// agent answers in about 3 s, with the product's defaults (poll 2 s),
// ended by the end-of-turn detection (--agent claude --idle-grace 15s)
// versus by the inactivity timeout alone, as before that detection
// existed (--idle-grace 24h, --inactivity-timeout 60). Both use the
// claude profile, so the prompt is delivered the same way (the generic
// profile cannot see claude's input box, so it cannot press a dropped
// Enter again).
func TestLoopWallTimeIdleVsInactivity(t *testing.T) {
	Require(t)
	t.Parallel()
	// A text answer streams as 9 events; 8 pauses of 375 ms make 3 s.
	answer := mockapi.Text("Step done; more to do.").Slow(375 * time.Millisecond).Repeat(-1)
	cases := []struct {
		name  string
		flags []string
	}{
		{"end-of-turn", []string{"--idle-grace", "15s"}},
		{"inactivity", []string{"--idle-grace", "24h", "--inactivity-timeout", "60"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := startLoop(t, "wall-"+c.name, loopOpts{
				agent: "claude", replies: []mockapi.Reply{answer}, poll: 2 * time.Second,
				flags: append([]string{"--max-iterations", "5"}, c.flags...),
			})
			code, out := l.wait(12 * time.Minute)
			wall := time.Since(l.began)
			if code != 0 || l.str("exit_reason") != "max_iterations" {
				t.Fatalf("ralph wait exit %d (%s); exit reason %q", code, out, l.str("exit_reason"))
			}
			turns := l.mock.Turns()
			if len(turns) != 5 {
				t.Errorf("%d turns, want 5", len(turns))
			}
			var answers []string
			for _, tr := range turns {
				answers = append(answers, tr.End.Sub(tr.Time).Round(100*time.Millisecond).String())
			}
			t.Logf("result: wall time, 5 iterations, %s (--agent claude %s): %v (answers took %s)%s",
				c.name, strings.Join(c.flags, " "), wall.Round(100*time.Millisecond), strings.Join(answers, ","), l.rescues())
		})
	}
}

// A prompt typed into a claude that has just started must be submitted:
// each iteration's turn reaches the mock and no iteration ends by the
// inactivity timeout with the prompt left in the input box. No rescue
// here: this is the scenario that shows the lost Enter (see rescuer).
func TestLoopPromptSubmittedAtStart(t *testing.T) {
	Require(t)
	t.Parallel()
	l := startLoop(t, "submit", loopOpts{
		noRescue: true,
		replies:  []mockapi.Reply{mockapi.Text("Step done; more to do.").Repeat(-1)},
		flags:    []string{"--idle-grace", "2s", "--inactivity-timeout", "30", "--max-iterations", "3"},
	})
	// The rescuer's watch, recording only: the first screen on which a
	// prompt sat unsubmitted for 10 s.
	watch := startRescuer(l, 10*time.Second, false)
	t.Cleanup(watch.stop)
	code, out := l.wait(5 * time.Minute)
	watch.stop()
	stuck := watch.first()
	timeouts := logLines(l.iterLog(), "TIMEOUT")
	turns := len(l.mock.Turns())
	if stuck != "" {
		l.session().SaveFixture("prompt-not-submitted.txt", stuck)
	}
	t.Logf("result: prompt submitted at start: %d of 3 iterations reached the mock, %d ended by inactivity (ralph wait exit %d: %s)",
		turns, len(timeouts), code, out)
	if turns != 3 || len(timeouts) > 0 {
		t.Errorf("swarm pressed Enter before claude took the paste: %d turns for 3 iterations, %d inactivity timeouts:\n%s\nscreen with the prompt left in the input box:\n%s",
			turns, len(timeouts), l.iterLog(), stuck)
	}
}
