package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Telemetry is what an agent reports of itself besides its screen
// (docs/agents.md): events from its hooks (a turn's end, a permission
// asked, an API error, its exit), its cost and its tokens. The loop uses
// them first and its screen second; an agent whose hooks never fire (an
// older version, hooks turned off by policy) runs on its screen alone.
type Telemetry struct {
	// Events: the agent runs swarm's hook command on its events.
	Events bool
	// Prompts: among them, every prompt it is given (UserPromptSubmit):
	// a turn's end then counts only after the prompt's own.
	Prompts bool
	// Cost: it reports its cost in US dollars (Claude Code's status
	// line). Without it a cost comes only from prices in config.json.
	Cost bool
	// Tokens: its token counts can be read (a transcript, a rollout).
	Tokens bool
}

// HookCommands are swarm's own command lines an agent runs to report
// (cmd/swarm's hidden _event command): internal/agent never builds them,
// it only places them in the agent's settings or arguments.
type HookCommands struct {
	// Event appends the event the agent hands it (on its standard input,
	// or as its last argument) to the events file; format names the
	// agent's payload ("claude", "codex").
	Event func(eventsFile, format string) []string
	// Status is a status line command: it records the figures of the
	// status line JSON on its standard input in statusFile, then runs
	// chain (the user's own status line command, "" for none) on the
	// same input and prints what it prints.
	Status func(statusFile, chain string) []string
}

// Payload formats of HookCommands.Event.
const (
	FormatClaude = "claude"
	FormatCodex  = "codex"
)

// LaunchSpec is what an agent's reporting needs for one session: where
// its files go and the commands that write them.
type LaunchSpec struct {
	Hooks HookCommands
	// EventsFile and StatusFile are the session's files in the loop's
	// state; SettingsFile is where an agent that takes a settings file
	// (Claude Code) gets one.
	EventsFile, StatusFile, SettingsFile string
	// WorkDir is where the agent runs; Home is the user's home (where the
	// agent's own configuration lives).
	WorkDir, Home string
	// Env is the agent's environment beyond swarm's ("K=V"), where a
	// CLAUDE_CONFIG_DIR or CODEX_HOME is looked for.
	Env []string
	// Write writes a file the agent reads (its settings) in the loop's
	// state (nil: os.WriteFile).
	Write func(path string, data []byte) error
}

// Launch is how a session reports: the arguments added to the agent's
// command, and the session id swarm gave it ("" when the agent chose its
// own).
type Launch struct {
	Args      []string
	SessionID string
	// Events: its hooks are set up (else Why says why not).
	Events bool
	Why    string
	// StopHooks: the user's own settings give the agent Stop hooks,
	// which run beside swarm's: one of them may block the turn's end
	// (the agent then goes on), so a Stop is not the end on its own.
	StopHooks bool
}

// reporter is the agent-specific side of Telemetry.
type reporter interface {
	launch(cmd []string, spec LaunchSpec) (Launch, error)
	usage(ref UsageRef) UsageReader
	fatal(kind string) (hint string, ok bool)
}

// FatalError reports whether an API error the agent reported (a
// StopFailure's error: authentication_failed, billing_error, ...) is one
// no retry gets past, and the fix a human must make.
func (p *Profile) FatalError(kind string) (hint string, ok bool) {
	if p.reporter == nil {
		return "", false
	}
	return p.reporter.fatal(kind)
}

// Launch prepares the agent's reporting for one session: it writes what
// the agent reads (Claude Code's settings file) and returns the arguments
// to add to cmd. An agent without telemetry, or one whose command already
// sets what swarm would (the user's own --settings), gets no arguments.
func (p *Profile) Launch(cmd []string, spec LaunchSpec) (Launch, error) {
	if p.reporter == nil || spec.Hooks.Event == nil {
		return Launch{Why: "the agent reports no events"}, nil
	}
	return p.reporter.launch(cmd, spec)
}

// UsageRef names where a session's tokens are: the path its events or
// status line gave, else its session id (and the home its files are in).
type UsageRef struct {
	Transcript string
	SessionID  string
	Home       string
	Env        []string
	// Since is when this run of the session started (zero: its whole
	// file is this run's). A session the user's own command resumes
	// (claude --resume, codex resume) holds its earlier runs' replies,
	// which were paid for then: only what is written from Since on
	// counts.
	Since time.Time
}

// stamp is a transcript line's time (RFC 3339); zero when it has none
// or another form: such a line counts as the run's.
func stamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s) // a time it cannot read is zero: counted
	return t
}

// before reports whether a line stamped ts was written before the run
// began (a line without a time counts as the run's).
func (ref UsageRef) before(ts time.Time) bool {
	return !ref.Since.IsZero() && !ts.IsZero() && ts.Before(ref.Since)
}

// UsageReader reads a session's usage as its file grows.
type UsageReader interface {
	// Read returns the session's usage so far (its whole total).
	Read() (Usage, error)
}

// UsageReader returns the reader of a session's token counts, nil for an
// agent whose tokens cannot be read.
func (p *Profile) UsageReader(ref UsageRef) UsageReader {
	if p.reporter == nil {
		return nil
	}
	return p.reporter.usage(ref)
}

// Event names as the loop reads them (Claude Code's hook event names;
// Codex's agent-turn-complete is a Stop).
const (
	EventSessionStart      = "SessionStart"
	EventUserPromptSubmit  = "UserPromptSubmit"
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
	EventNotification      = "Notification"
	EventStop              = "Stop"
	EventStopFailure       = "StopFailure"
	EventSessionEnd        = "SessionEnd"
	// EventHookError is a line the hook wrote about its own failure.
	EventHookError = "swarm-error"
)

// KindNotify is the Kind of a Stop that Codex's notify reported (not its
// hooks): where its hooks run too, their Stop reports the same turn end.
const KindNotify = "notify"

// Event is one event an agent reported, as one line of the events file.
type Event struct {
	Time    time.Time `json:"time"`
	Name    string    `json:"event"`
	Session string    `json:"session,omitempty"`
	// Message is the agent's last message (Stop, StopFailure) or a
	// notification's text.
	Message string `json:"message,omitempty"`
	// Kind is a notification's type, a StopFailure's error, a session
	// start's source, a session end's reason, or KindNotify.
	Kind string `json:"kind,omitempty"`
	// Tool is the tool a permission is asked for (or about to run);
	// Detail what it would do (its command, its file), or an error's
	// details.
	Tool   string `json:"tool,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Transcript is the session's transcript file.
	Transcript string `json:"transcript,omitempty"`
}

// Urgent reports whether the event ends or holds a turn: it keeps its
// place in a full events file (state.AppendEvent).
func (e Event) Urgent() bool {
	return e.Name != EventPreToolUse && e.Name != "PostToolUse"
}

// Caps of an event's texts, so that its line fits in the events file's
// line cap: a last message keeps its end (where a promise tag is), the
// others their start.
const (
	maxEventMessage = 48 << 10
	maxEventText    = 1 << 10
	maxEventDetail  = 300
)

// ErrUnknownEvent is returned for a payload that is no event swarm uses.
var ErrUnknownEvent = errors.New("not an event swarm reads")

// HookEvent turns what an agent handed its hook (format: FormatClaude,
// FormatCodex) into the event to record, stamped now.
func HookEvent(format string, payload []byte, now time.Time) (Event, error) {
	var ev Event
	var err error
	switch format {
	case FormatClaude:
		ev, err = claudeHookEvent(payload)
	case FormatCodex:
		ev, err = codexNotifyEvent(payload)
	default:
		return Event{}, fmt.Errorf("unknown event format %q", format)
	}
	if err != nil {
		return Event{}, err
	}
	ev.Time = now
	return ev, nil
}

// EncodeEvent writes ev as one line of at most limit bytes (no newline).
// Text is not escaped for HTML (a '<' of a promise tag stays one byte),
// and a last message too long once encoded (quotes, newlines and control
// characters take more room escaped) keeps its end, where a promise tag
// is, cut until the line fits.
func EncodeEvent(ev Event, limit int) ([]byte, error) {
	for {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ev); err != nil {
			return nil, err
		}
		line := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if len(line) <= limit {
			return line, nil
		}
		over := len(line) - limit
		if ev.Message == "" || over >= len(ev.Message) {
			return nil, fmt.Errorf("an event line of %d bytes does not fit in %d", len(line), limit)
		}
		// Escapes at most sextuple a byte: cut what is over, at least.
		ev.Message = tail(ev.Message, len(ev.Message)-max(over, len(ev.Message)/8))
	}
}

// ParseEvent reads one line of the events file.
func ParseEvent(line []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Event{}, err
	}
	if ev.Name == "" {
		return Event{}, errors.New("an event line without an event")
	}
	return ev, nil
}

// Status is the figures of an agent's status line (Claude Code's), as
// the status file keeps the last one.
type Status struct {
	Time       time.Time `json:"time"`
	Session    string    `json:"session,omitempty"`
	Transcript string    `json:"transcript,omitempty"`
	// CostUSD is the session's cost so far.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// ContextPercent is how full its context window is.
	ContextPercent *float64 `json:"context_percent,omitempty"`
	Model          string   `json:"model,omitempty"`
}

// StatusFromLine reads the JSON a status line command gets on its
// standard input, stamped now.
func StatusFromLine(payload []byte, now time.Time) (Status, error) {
	s, err := claudeStatus(payload)
	if err != nil {
		return Status{}, err
	}
	s.Time = now
	return s, nil
}

// ParseStatus reads a status file.
func ParseStatus(data []byte) (Status, error) {
	var s Status
	err := json.Unmarshal(data, &s)
	return s, err
}

// Usage is what a session spent: its tokens by kind, and its cost when
// known.
type Usage struct {
	Input, Output, CacheRead, CacheCreation int64
	CostUSD                                 *float64
}

// Tokens is the sum of every kind.
func (u Usage) Tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheCreation }

// tail keeps the last n bytes of s (on a rune boundary).
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// head keeps the first n bytes of s (on a rune boundary), on one line.
func head(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// hasFlag reports whether args hold any of the flags, alone or as
// --flag=value.
func hasFlag(args []string, flags ...string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return slices.Contains(flags, name)
	})
}

// envValue is K's value in env ("K=V" each; the last wins), "" if unset.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
