package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/remote"
)

// Claude Code's telemetry, as its 2.1.197 sources have it (the CLI's
// bundled JavaScript):
//
//   - hooks, given per process with --settings FILE (merged with the
//     user's own, which keep running): each gets one JSON object on its
//     standard input with hook_event_name, session_id and
//     transcript_path; Stop adds last_assistant_message, StopFailure
//     error (rate_limit, overloaded, server_error, billing_error,
//     authentication_failed, ...) and error_details, Notification
//     notification_type (permission_prompt, idle_prompt,
//     elicitation_dialog, ...), PermissionRequest tool_name and
//     tool_input, SessionEnd reason. A hook that prints nothing and exits
//     0 changes nothing the agent does;
//   - a status line command (statusLine in the same file; one per
//     process, so swarm's runs the user's own after it): its standard
//     input has cost.total_cost_usd (the session's), context_window
//     (used_percentage) and model; it runs when the conversation changes
//     (about 300 ms after a message), not on a clock;
//   - disableAllHooks (or a policy's allowManagedHooksOnly) turns off the
//     hooks and the status line: the loop then runs on the screen alone;
//   - its transcript, ~/.claude/projects/<dir>/<session-id>.jsonl, has
//     one line per content block of a reply, each repeating the reply's
//     message.usage: counted once per message id and request id, as the
//     usage tools do.
type claudeReporter struct{}

// claudeHookEvents are the hooks swarm asks for.
var claudeHookEvents = []string{
	EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPermissionRequest,
	EventNotification, EventStop, EventStopFailure, EventSessionEnd,
}

// claudeHookTimeout is the hooks' timeout in Claude Code's settings
// (seconds): swarm's returns in milliseconds, this only bounds a stuck
// disk.
const claudeHookTimeout = 10

// claudeOwnSession are the flags with which the user picks the session
// (a new id, one to continue): swarm then gives no --session-id of its own.
var claudeOwnSession = []string{"--session-id", "--continue", "-c", "--resume", "-r", "--fork-session", "--from-pr"}

func (claudeReporter) launch(cmd []string, spec LaunchSpec) (Launch, error) {
	var l Launch
	if !hasFlag(cmd[1:], claudeOwnSession...) {
		l.SessionID = uuid.NewString()
		l.Args = append(l.Args, "--session-id", l.SessionID)
	}
	if hasFlag(cmd[1:], "--settings") {
		l.Why = "the command gives its own --settings"
		return l, nil
	}
	chain := claudeUserStatusLine(spec.WorkDir, claudeConfigDir(spec.Home, spec.Env))
	l.StopHooks = claudeUserStopHooks(spec.WorkDir, claudeConfigDir(spec.Home, spec.Env))
	data, err := claudeSettings(spec, chain)
	if err != nil {
		return Launch{}, err
	}
	if err := spec.write(spec.SettingsFile, data); err != nil {
		return Launch{}, err
	}
	l.Args = append(l.Args, "--settings", spec.SettingsFile)
	l.Events = true
	return l, nil
}

// write writes a file the agent reads (its settings): through the
// caller's writer, which the tests and the loop give (state's atomic,
// no-symlink write); os.WriteFile when none.
func (s LaunchSpec) write(path string, data []byte) error {
	if s.Write != nil {
		return s.Write(path, data)
	}
	return os.WriteFile(path, data, 0o600)
}

// claudeSettings is the --settings file: swarm's hook on every event it
// reads, and swarm's status line (which runs chain after it).
func claudeSettings(spec LaunchSpec, chain string) ([]byte, error) {
	hook := []map[string]any{{"hooks": []map[string]any{{
		"type": "command", "command": remote.Command(spec.Hooks.Event(spec.EventsFile, FormatClaude)),
		"timeout": claudeHookTimeout,
	}}}}
	hooks := map[string]any{}
	for _, ev := range claudeHookEvents {
		hooks[ev] = hook
	}
	settings := map[string]any{"hooks": hooks}
	if spec.Hooks.Status != nil {
		settings["statusLine"] = map[string]any{
			"type": "command", "command": remote.Command(spec.Hooks.Status(spec.StatusFile, chain)),
		}
	}
	return json.MarshalIndent(settings, "", "  ")
}

// claudeConfigDir is where Claude Code keeps its user settings:
// $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeConfigDir(home string, env []string) string {
	if d := envValue(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(home, ".claude")
}

// maxSettingsFile bounds the read of a user's Claude settings file.
const maxSettingsFile = 1 << 20

// claudeSettingsFiles are the settings files Claude Code reads, first
// the one it takes a setting from first: the project's local settings,
// the project's, the user's.
func claudeSettingsFiles(workDir, configDir string) []string {
	var files []string
	if workDir != "" {
		files = append(files, filepath.Join(workDir, ".claude", "settings.local.json"), filepath.Join(workDir, ".claude", "settings.json"))
	}
	return append(files, filepath.Join(configDir, "settings.json"))
}

// claudeManagedSettings is the administrator's settings file on Linux,
// whose hooks run too.
const claudeManagedSettings = "/etc/claude-code/managed-settings.json"

// claudeUserStopHooks reports whether any settings file Claude Code reads
// (the user's, the project's, an administrator's) gives it a Stop hook:
// Claude Code merges the hooks of them all and runs them beside swarm's.
// (Hooks of plugins are not looked for.)
func claudeUserStopHooks(workDir, configDir string) bool {
	for _, f := range append(claudeSettingsFiles(workDir, configDir), claudeManagedSettings) {
		var s struct {
			Hooks struct {
				Stop []json.RawMessage `json:"Stop"`
			} `json:"hooks"`
		}
		data, err := readSmall(f, maxSettingsFile)
		if err == nil && json.Unmarshal(data, &s) == nil && len(s.Hooks.Stop) > 0 {
			return true
		}
	}
	return false
}

// claudeUserStatusLine is the user's own status line command, from the
// settings files Claude Code reads, the one it would use first. "" for
// none.
func claudeUserStatusLine(workDir, configDir string) string {
	for _, f := range claudeSettingsFiles(workDir, configDir) {
		var s struct {
			StatusLine *struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"statusLine"`
		}
		data, err := readSmall(f, maxSettingsFile)
		if err != nil || json.Unmarshal(data, &s) != nil || s.StatusLine == nil {
			continue
		}
		if s.StatusLine.Type == "command" {
			return s.StatusLine.Command
		}
	}
	return ""
}

// readSmall reads a whole file of at most max bytes (a user's
// configuration; a larger one is no configuration), a regular file only.
// The agent can write its project's .claude/settings.local.json: a FIFO
// there must not hang the monitor at the next launch (opened without
// blocking, then refused). A symbolic link is followed: dotfile managers
// link ~/.claude/settings.json.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, err
}

// claudeHook is the part of a hook's input swarm reads.
type claudeHook struct {
	Event            string          `json:"hook_event_name"`
	Session          string          `json:"session_id"`
	Transcript       string          `json:"transcript_path"`
	LastMessage      string          `json:"last_assistant_message"`
	Error            string          `json:"error"`
	ErrorDetails     string          `json:"error_details"`
	NotificationType string          `json:"notification_type"`
	Message          string          `json:"message"`
	Reason           string          `json:"reason"`
	Source           string          `json:"source"`
	Tool             string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
}

// claudeHookEvent reads a Claude Code hook's input.
func claudeHookEvent(payload []byte) (Event, error) {
	var h claudeHook
	if err := json.Unmarshal(payload, &h); err != nil {
		return Event{}, fmt.Errorf("hook input: %w", err)
	}
	ev := Event{Name: h.Event, Session: h.Session, Transcript: h.Transcript}
	switch h.Event {
	case EventSessionStart:
		ev.Kind = h.Source
	case EventUserPromptSubmit:
	case EventPreToolUse:
		ev.Tool = head(h.Tool, maxEventDetail)
	case EventPermissionRequest:
		ev.Tool, ev.Detail = head(h.Tool, maxEventDetail), toolSummary(h.ToolInput)
	case EventNotification:
		ev.Kind, ev.Message = h.NotificationType, head(h.Message, maxEventText)
	case EventStop:
		ev.Message = tail(h.LastMessage, maxEventMessage)
	case EventStopFailure:
		ev.Kind, ev.Detail = h.Error, head(h.ErrorDetails, maxEventText)
		ev.Message = tail(h.LastMessage, maxEventText)
	case EventSessionEnd:
		ev.Kind = h.Reason
	default:
		return Event{}, fmt.Errorf("%w: %q", ErrUnknownEvent, h.Event)
	}
	return ev, nil
}

// toolSummary says in one short line what a tool call would do: its
// command, file, URL or pattern, else its first text.
func toolSummary(input json.RawMessage) string {
	var fields map[string]any
	if json.Unmarshal(input, &fields) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "notebook_path", "url", "pattern", "query", "path"} {
		if s, ok := fields[k].(string); ok && s != "" {
			return head(s, maxEventDetail)
		}
	}
	return ""
}

// claudeStatusLine is the part of the status line's input swarm reads.
type claudeStatusLine struct {
	Session    string `json:"session_id"`
	Transcript string `json:"transcript_path"`
	Model      struct {
		ID string `json:"id"`
	} `json:"model"`
	Cost struct {
		Total *float64 `json:"total_cost_usd"`
	} `json:"cost"`
	Context struct {
		Used *float64 `json:"used_percentage"`
	} `json:"context_window"`
}

func claudeStatus(payload []byte) (Status, error) {
	var l claudeStatusLine
	if err := json.Unmarshal(payload, &l); err != nil {
		return Status{}, fmt.Errorf("status line input: %w", err)
	}
	return Status{Session: l.Session, Transcript: l.Transcript, CostUSD: l.Cost.Total,
		ContextPercent: l.Context.Used, Model: head(l.Model.ID, maxEventDetail)}, nil
}

// claudeFatalErrors are the StopFailure errors no retry gets past, with
// their fix.
var claudeFatalErrors = map[string]string{
	"authentication_failed": "check ANTHROPIC_API_KEY (or log in once with: claude /login)",
	"billing_error":         "check the account's credits and billing, or log in with another account (claude /login)",
	"oauth_org_not_allowed": "log in with an account of an organization allowed to use Claude Code (claude /login)",
}

func (claudeReporter) fatal(kind string) (string, bool) {
	h, ok := claudeFatalErrors[kind]
	return h, ok
}

func (claudeReporter) usage(ref UsageRef) UsageReader {
	find := func() string {
		if ref.Transcript != "" {
			return ref.Transcript
		}
		if ref.SessionID == "" {
			return ""
		}
		m, _ := filepath.Glob(filepath.Join(claudeConfigDir(ref.Home, ref.Env), "projects", "*", ref.SessionID+".jsonl"))
		if len(m) == 0 {
			return ""
		}
		return m[0]
	}
	t := &claudeTranscript{seen: map[string]Usage{}, ref: ref}
	return &jsonlReader{find: find, line: t.line, total: t.total}
}

// claudeTranscript adds up a transcript's usage, once per reply.
type claudeTranscript struct {
	seen map[string]Usage
	ref  UsageRef // its Since: replies of earlier runs do not count
}

// claudeEntry is the part of a transcript line swarm reads.
type claudeEntry struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	RequestID string `json:"requestId"`
	Message   struct {
		ID    string `json:"id"`
		Usage *struct {
			Input         int64 `json:"input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			Output        int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// line counts one transcript line: a reply's usage, kept once per
// message id and request id (the last line of a reply has its final
// output count).
func (t *claudeTranscript) line(b []byte) {
	if !bytes.Contains(b, []byte(`"usage"`)) {
		return
	}
	var e claudeEntry
	if json.Unmarshal(b, &e) != nil || e.Type != "assistant" || e.Message.Usage == nil || t.ref.before(stamp(e.Timestamp)) {
		return
	}
	u := e.Message.Usage
	key := e.Message.ID + "\x00" + e.RequestID
	if e.Message.ID == "" && e.RequestID == "" {
		key = fmt.Sprintf("line-%d", len(t.seen))
	}
	t.seen[key] = Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheCreation: u.CacheCreation}
}

func (t *claudeTranscript) total() Usage {
	var sum Usage
	for _, u := range t.seen {
		sum.Input += u.Input
		sum.Output += u.Output
		sum.CacheRead += u.CacheRead
		sum.CacheCreation += u.CacheCreation
	}
	return sum
}
