package mockapi

import (
	"net/http"
	"strconv"
	"time"
)

// Kind says what a Reply does with the request it answers.
type Kind int

const (
	// KindText answers with one text content block.
	KindText Kind = iota
	// KindToolUse answers with a tool_use block (stop_reason "tool_use"); the
	// agent runs the tool and sends its tool_result in the next request.
	KindToolUse
	// KindError answers with an HTTP error status and the Anthropic error JSON.
	KindError
	// KindHang never answers: the handler blocks until the client goes away
	// or the server is closed.
	KindHang
)

// Reply is one scripted answer of the mock. Build it with Text, Bash,
// ToolUse, RateLimit, Overloaded, UsageLimit, APIError or Hang.
type Reply struct {
	Kind Kind
	// Text is the answer of a KindText reply, or a text block sent before the
	// tool_use block of a KindToolUse reply (empty: none).
	Text string
	// Tool and ToolInput name the tool and its input for KindToolUse.
	Tool      string
	ToolInput map[string]any
	// Status, ErrorType and ErrorMessage make the body of a KindError reply:
	// {"type":"error","error":{"type":ErrorType,"message":ErrorMessage}}.
	Status       int
	ErrorType    string
	ErrorMessage string
	// Header is added to the response (any kind), e.g. retry-after or the
	// anthropic-ratelimit-unified-* headers.
	Header http.Header
	// Times is how many requests this reply answers before the next one in
	// the queue is used: 0 or 1 once, a negative number for ever (the last
	// reply of a script that must keep failing).
	Times int
	// ChunkDelay pauses between streamed events so that a test can see the
	// agent's working screen; zero streams at once.
	ChunkDelay time.Duration
	// ThinkTime is how long the reply waits before its first byte: a
	// model thinking, the agent's spinner running meanwhile.
	ThinkTime time.Duration
	// Usage, when set, is the answer's usage instead of the default
	// (input tokens: the request body's length / 4; output: the
	// answer's): the agent prices it, so a test sets what a turn costs.
	Usage *Usage
}

// Usage is the token counts of an answer, as the API's usage object
// has them.
type Usage struct {
	Input, Output, CacheRead, CacheCreation int
}

// Text is a plain text answer (stop_reason "end_turn").
func Text(s string) Reply { return Reply{Kind: KindText, Text: s} }

// Bash is a call of Claude Code's Bash tool with the given command. The
// agent runs it (with --dangerously-skip-permissions, or after asking) and
// sends the output as a tool_result in its next request.
func Bash(command string) Reply {
	return ToolUse("Bash", map[string]any{
		"command":     command,
		"description": "Run a command",
	})
}

// ToolUse is a call of any tool by name with the given input.
func ToolUse(name string, input map[string]any) Reply {
	return Reply{Kind: KindToolUse, Tool: name, ToolInput: input}
}

// APIError is an HTTP error with the Anthropic error body.
func APIError(status int, errType, message string) Reply {
	return Reply{Kind: KindError, Status: status, ErrorType: errType, ErrorMessage: message}
}

// RateLimitMessage is the message of RateLimit's error, worded as the API
// words it for an organization over its input-token rate.
const RateLimitMessage = "This request would exceed the rate limit for your organization " +
	"(mock-org) of 50,000 input tokens per minute. Please try again later."

// RateLimit is the API's 429 rate_limit_error with a retry-after header in
// whole seconds (omitted when retryAfter is zero).
func RateLimit(retryAfter time.Duration) Reply {
	r := APIError(http.StatusTooManyRequests, "rate_limit_error", RateLimitMessage)
	if retryAfter > 0 {
		r.Header = http.Header{}
		r.Header.Set("retry-after", strconv.Itoa(int(retryAfter.Round(time.Second)/time.Second)))
	}
	return r
}

// Overloaded is the API's 529 overloaded_error.
func Overloaded() Reply {
	return APIError(529, "overloaded_error", "Overloaded")
}

// UsageLimit is what the API sends a Claude subscriber (OAuth login) who has
// used up a plan limit: a 429 whose anthropic-ratelimit-unified-* headers
// say "rejected", which limit (claim: "five_hour", "seven_day", ... or ""
// for none), and when it resets. Claude Code 2.1 reads only these headers
// for its "You've hit your ... limit · resets ..." line, and only when it
// is logged in with OAuth (CLAUDE_CODE_OAUTH_TOKEN), never with an API key.
func UsageLimit(claim string, resets time.Time) Reply {
	r := APIError(http.StatusTooManyRequests, "rate_limit_error",
		"This request would exceed your account's rate limit. Please try again later.")
	r.Header = http.Header{}
	r.Header.Set("anthropic-ratelimit-unified-status", "rejected")
	r.Header.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(resets.Unix(), 10))
	if claim != "" {
		r.Header.Set("anthropic-ratelimit-unified-representative-claim", claim)
	} else {
		// Claude Code ignores the unified headers unless a claim or an
		// overage status is present; a rejected overage without a claim
		// reads "You've hit your limit".
		r.Header.Set("anthropic-ratelimit-unified-overage-status", "rejected")
	}
	return r
}

// Hang never answers; the request stays open until the client gives up.
func Hang() Reply { return Reply{Kind: KindHang} }

// Repeat returns r answering n requests (negative: every request from now on).
func (r Reply) Repeat(n int) Reply {
	r.Times = n
	return r
}

// Think returns r sent after d of silence (a turn that thinks for d).
func (r Reply) Think(d time.Duration) Reply {
	r.ThinkTime = d
	return r
}

// WithUsage returns r answered with usage u.
func (r Reply) WithUsage(u Usage) Reply {
	r.Usage = &u
	return r
}

// Slow returns r streamed with a pause of d between events.
func (r Reply) Slow(d time.Duration) Reply {
	r.ChunkDelay = d
	return r
}
