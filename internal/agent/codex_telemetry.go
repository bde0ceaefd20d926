package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/remote"
)

// Codex's telemetry, as its 0.171 sources and docs have it (hooks: see
// codexHookArgs):
//
//   - notify: a program (config key notify, an argv array, settable per
//     run with -c notify=[...]) run when a turn completes, with one JSON
//     argument: {"type": "agent-turn-complete", "thread-id", "turn-id",
//     "cwd", "input-messages", "last-assistant-message"};
//   - rollout files, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<thread
//     id>.jsonl (CODEX_HOME: ~/.codex), whose token_count events carry
//     the session's cumulative token usage (total_token_usage:
//     input_tokens, of which cached_input_tokens, and output_tokens).
//     Codex reports no dollars: a cost comes from prices in config.json.
type codexReporter struct{}

// codexSetsNotifyKey reports whether a config.toml sets notify at its
// top level (a line "notify = ..." before any [table]).
func codexSetsNotifyKey(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			return false
		}
		if k, _, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "notify" {
			return true
		}
	}
	return false
}

func (codexReporter) launch(cmd []string, spec LaunchSpec) (Launch, error) {
	if codexSetsNotify(cmd[1:]) {
		return Launch{Why: "the command sets its own notify"}, nil
	}
	home := codexHome(spec.Home, spec.Env)
	if data, err := readSmall(filepath.Join(home, "config.toml"), maxSettingsFile); err == nil && codexSetsNotifyKey(data) {
		return Launch{Why: "config.toml sets its own notify"}, nil
	}
	argv := spec.Hooks.Event(spec.EventsFile, FormatCodex)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = tomlString(a)
	}
	l := Launch{Args: []string{"-c", "notify=[" + strings.Join(quoted, ",") + "]"}, Events: true}
	if !codexSetsHooks(cmd[1:]) {
		l.Args = append(l.Args, codexHookArgs(remote.Command(spec.Hooks.Event(spec.EventsFile, FormatClaude)))...)
	}
	return l, nil
}

// tomlString quotes s as a TOML basic string: a JSON string is one (the
// same escapes), written without HTML escapes.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// Codex's hooks (0.1xx, on by default): command hooks per event, given
// here per run in the session flags' layer (-c hooks.EVENT=[...]), which
// Codex merges with the user's own (theirs keep running). Their input is
// Claude Code's form (hook_event_name, session_id, transcript_path,
// last_assistant_message, tool_name, tool_input): swarm _event reads it
// as Claude Code's. Codex runs a hook it does not manage only once its
// definition is trusted: the trust of swarm's own is given in the same
// layer (hooks.state, keyed by the layer, the event and the hook's
// place, holding the hash of its definition as Codex computes it), so no
// other hook's trust changes (--dangerously-bypass-hook-trust would run
// every untrusted hook of the user's too). A Codex without hooks, or
// whose trust hash differs, runs none of them: its notify still reports
// the turn's end.
var codexHookEvents = []string{EventUserPromptSubmit, EventPreToolUse, EventPermissionRequest, EventStop}

// codexHookTimeout is swarm's hooks' timeout (seconds): they return in
// milliseconds, this only bounds a stuck disk.
const codexHookTimeout = 10

// codexSessionFlagsSource is how Codex names the -c layer in its hooks'
// state keys.
const codexSessionFlagsSource = "/<session-flags>/config.toml"

// codexHookArgs are the -c arguments that give Codex swarm's hook command
// on each event swarm reads, trusted.
func codexHookArgs(command string) []string {
	var args, states []string
	for _, ev := range codexHookEvents {
		args = append(args, "-c", fmt.Sprintf("hooks.%s=[{hooks=[{type=\"command\",command=%s,timeout=%d}]}]", ev, tomlString(command), codexHookTimeout))
		key := codexSessionFlagsSource + ":" + codexEventLabel(ev) + ":0:0"
		states = append(states, fmt.Sprintf("%s={trusted_hash=%s}", tomlString(key), tomlString(codexHookHash(ev, command, codexHookTimeout))))
	}
	return append(args, "-c", "hooks.state={"+strings.Join(states, ",")+"}")
}

// codexEventLabel is an event's name in Codex's hook keys: PreToolUse →
// pre_tool_use.
func codexEventLabel(ev string) string {
	var b strings.Builder
	for i, r := range ev {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexHookHash is the trust hash Codex computes for a command hook with
// no matcher: the SHA-256 of its normalized definition as compact JSON
// with sorted keys ({"event_name", "hooks": [{"async", "command",
// "timeout", "type"}]}).
func codexHookHash(ev, command string, timeout int) string {
	identity := map[string]any{
		"event_name": codexEventLabel(ev),
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(identity) // strings, numbers and booleans always encode; map keys are sorted
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexSetsHooks reports whether args give hooks of their own (-c
// hooks...) or run every hook untrusted: swarm's are then left out.
func codexSetsHooks(args []string) bool {
	return codexSetsKey(args, "hooks")
}

// codexSetsNotify reports whether args set notify (-c notify=...,
// --config notify=..., or the = forms).
func codexSetsNotify(args []string) bool {
	return codexSetsKey(args, "notify")
}

// codexSetsKey reports whether args set key (or a key under it) with -c.
func codexSetsKey(args []string, key string) bool {
	for i, a := range args {
		v, ok := "", false
		switch {
		case a == "-c" || a == "--config":
			if i+1 < len(args) {
				v, ok = args[i+1], true
			}
		case strings.HasPrefix(a, "--config="):
			v, ok = strings.TrimPrefix(a, "--config="), true
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			v, ok = a[2:], true
		}
		if ok && strings.HasPrefix(strings.TrimSpace(v), key) {
			return true
		}
	}
	return false
}

// codexHome is $CODEX_HOME, else ~/.codex.
func codexHome(home string, env []string) string {
	if d := envValue(env, "CODEX_HOME"); d != "" {
		return d
	}
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".codex")
}

// codexNotify is the notify payload swarm reads.
type codexNotify struct {
	Type        string `json:"type"`
	Thread      string `json:"thread-id"`
	LastMessage string `json:"last-assistant-message"`
}

// codexNotifyEvent reads Codex's notify payload: a completed turn is a
// Stop.
func codexNotifyEvent(payload []byte) (Event, error) {
	var n codexNotify
	if err := json.Unmarshal(payload, &n); err != nil {
		return Event{}, fmt.Errorf("notify payload: %w", err)
	}
	if n.Type != "agent-turn-complete" {
		return Event{}, fmt.Errorf("%w: %q", ErrUnknownEvent, n.Type)
	}
	return Event{Name: EventStop, Session: n.Thread, Message: tail(n.LastMessage, maxEventMessage)}, nil
}

func (codexReporter) fatal(string) (string, bool) { return "", false }

func (codexReporter) usage(ref UsageRef) UsageReader {
	find := func() string {
		if ref.Transcript != "" {
			return ref.Transcript
		}
		if ref.SessionID == "" || strings.ContainsAny(ref.SessionID, `/*?[\`) {
			return ""
		}
		m, _ := filepath.Glob(filepath.Join(codexHome(ref.Home, ref.Env), "sessions", "*", "*", "*", "rollout-*"+ref.SessionID+".jsonl"))
		if len(m) == 0 {
			return ""
		}
		return m[len(m)-1]
	}
	// The totals are the session's: a resumed session's go on from its
	// earlier runs', whose last total (before ref.Since) is taken off.
	var last, earlier Usage
	line := func(b []byte) {
		if u, ts, ok := codexTokenCount(b); ok {
			if ref.before(ts) {
				earlier = u
			}
			last = u
		}
	}
	total := func() Usage {
		return Usage{Input: max(0, last.Input-earlier.Input), CacheRead: max(0, last.CacheRead-earlier.CacheRead),
			Output: max(0, last.Output-earlier.Output)}
	}
	return &jsonlReader{find: find, line: line, total: total}
}

// codexTokenCount reads a rollout line's token_count event: the
// session's usage so far, and the line's time.
func codexTokenCount(b []byte) (Usage, time.Time, bool) {
	if !bytes.Contains(b, []byte(`"token_count"`)) {
		return Usage{}, time.Time{}, false
	}
	var e struct {
		Timestamp string `json:"timestamp"`
		Payload   struct {
			Type string `json:"type"`
			Info *struct {
				Total struct {
					Input  int64 `json:"input_tokens"`
					Cached int64 `json:"cached_input_tokens"`
					Output int64 `json:"output_tokens"`
				} `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(b, &e) != nil || e.Payload.Type != "token_count" || e.Payload.Info == nil {
		return Usage{}, time.Time{}, false
	}
	t := e.Payload.Info.Total
	return Usage{Input: max(0, t.Input-t.Cached), CacheRead: t.Cached, Output: t.Output}, stamp(e.Timestamp), true
}
