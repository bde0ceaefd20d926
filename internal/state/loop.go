package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// RalphStatus is a loop's status (status).
type RalphStatus string

// Ralph loop status values.
const (
	RalphRunning RalphStatus = "running"
	RalphPaused  RalphStatus = "paused"
	RalphStopped RalphStatus = "stopped"
	RalphFailed  RalphStatus = "failed"
	// RalphWaiting: the agent hit a usage limit; the loop waits until it
	// resets (waiting_until), then continues the same iteration.
	RalphWaiting RalphStatus = "waiting"
)

// Active reports whether a loop of this status has not ended (running,
// paused or waiting for a limit to reset).
func (s RalphStatus) Active() bool {
	return s == RalphRunning || s == RalphPaused || s == RalphWaiting
}

// Runs reports whether a loop of this status goes on by itself: running,
// or waiting out a limit (it continues on its own at waiting_until).
func (s RalphStatus) Runs() bool {
	return s == RalphRunning || s == RalphWaiting
}

// ExitReason is why a loop ended (exit_reason): null in the file while it
// has not, as swarm.py writes it.
type ExitReason string

// Exit reasons. ralph.ExitCode maps them to the loop's exit code.
const (
	ReasonDonePattern   ExitReason = "done_pattern"
	ReasonComplete      ExitReason = "complete"
	ReasonBlocked       ExitReason = "blocked"
	ReasonDecide        ExitReason = "decide"
	ReasonDoneFile      ExitReason = "done_file"
	ReasonMaxIterations ExitReason = "max_iterations"
	ReasonMaxTime       ExitReason = "max_time"
	ReasonFailed        ExitReason = "failed"
	ReasonKilled        ExitReason = "killed"
	ReasonInterrupted   ExitReason = "interrupted"
	ReasonPreflight     ExitReason = "preflight_failed"
	// ReasonMaxCost and ReasonMaxTokens: the loop reached its budget
	// (max_cost, max_tokens).
	ReasonMaxCost   ExitReason = "max_cost"
	ReasonMaxTokens ExitReason = "max_tokens"
)

// MarshalJSON writes null for "".
func (r ExitReason) MarshalJSON() ([]byte, error) { return NullString(r).MarshalJSON() }

// UnmarshalJSON reads null as "".
func (r *ExitReason) UnmarshalJSON(b []byte) error {
	return (*NullString)(r).UnmarshalJSON(b)
}

// PromptMode is how the prompt reaches the agent (prompt_mode).
type PromptMode string

// Prompt delivery modes.
const (
	PromptType  PromptMode = "type"  // pasted into the agent's input once it looks ready
	PromptStdin PromptMode = "stdin" // the agent command's standard input
	PromptArg   PromptMode = "arg"   // the agent command's last argument
)

// LoopConfig is how a loop was asked to run: the options it was spawned
// with (ralph.Options is this struct, with the methods that check it) and
// what spawn fills in (worker, work directory, log cap). After the spawn
// only ralph set changes it (max_iterations, inactivity_timeout,
// max_time), and a hand edit. Durations are time.Duration in memory and
// seconds in the file (Seconds, WholeSeconds).
type LoopConfig struct {
	WorkerName    string `json:"worker_name"`
	PromptFile    string `json:"prompt_file"`
	MaxIterations int    `json:"max_iterations"`
	// DonePattern ends the loop when the agent prints a match (RE2).
	DonePattern NullString `json:"done_pattern"`
	// InactivityTimeout restarts an agent whose screen is unchanged this
	// long (swarm.py's int of seconds).
	InactivityTimeout   WholeSeconds `json:"inactivity_timeout"`
	CheckDoneContinuous bool         `json:"check_done_continuous"`
	// MaxContext is the context usage (%) at which the agent is asked to
	// wrap up; null when off.
	MaxContext NullInt `json:"max_context"`

	// The completion contract (docs/completion.md).
	PromptMode        PromptMode   `json:"prompt_mode"`
	ReadyTimeout      WholeSeconds `json:"ready_timeout"`
	Promise           bool         `json:"promise"`
	CompletionPromise string       `json:"completion_promise"`
	DoneFile          NullString   `json:"done_file"`
	Checks            []string     `json:"checks"`
	CheckTimeout      Seconds      `json:"check_timeout"`
	RequireChange     bool         `json:"require_change"`
	// MaxTime is the loop's whole time budget (0: none).
	MaxTime Seconds `json:"max_time"`
	// FailOnCap: reaching the iteration cap or the time budget ends the
	// loop not complete (exit 4) instead of exit 0 (--fail-on-cap).
	FailOnCap    bool       `json:"fail_on_cap"`
	SameSession  bool       `json:"same_session"`
	RestartDelay Seconds    `json:"restart_delay"`
	OnExit       NullString `json:"on_exit"`
	WorkDir      string     `json:"work_dir"`

	// The agent and what its screen says (docs/agents.md).
	// Agent forces a profile (--agent); "" chooses it from the command.
	Agent string `json:"agent"`
	// IdleGrace: an agent with a profile that finished a turn and sat at
	// its input box this long ends the iteration (--idle-grace).
	IdleGrace Seconds `json:"idle_grace"`
	// LimitMessage is typed into the agent when a usage limit resets;
	// LimitWait is how long to wait when the limit names no reset time.
	LimitMessage string  `json:"limit_message"`
	LimitWait    Seconds `json:"limit_wait"`
	// LimitPatterns and ReadyPatterns add screens that mean a limit and
	// an agent ready for its prompt (--limit-pattern, --ready-pattern).
	LimitPatterns []string `json:"limit_patterns,omitempty"`
	ReadyPatterns []string `json:"ready_patterns,omitempty"`
	// Notify: a desktop notification when the loop ends, and a bell in
	// swarm top (a bare --notify, or --notify=desktop). NotifyTo are the
	// other targets --notify named (webhook:URL, ntfy:URL).
	Notify   bool     `json:"notify"`
	NotifyTo []string `json:"notify_to,omitempty"`
	// OnComplete is the merge strategy a loop that ends complete merges
	// its worker's branch into its base with ("": none).
	OnComplete string `json:"on_complete,omitempty"`
	// AutoCommit: at each iteration's end the loop commits what its agent
	// left in the worktree (--auto-commit), so merges take all of it.
	AutoCommit bool `json:"auto_commit,omitempty"`
	// MaxLogSize caps each iteration's output log (0: logcap.DefaultMax).
	MaxLogSize int64 `json:"max_log_size"`
	// MaxCost and MaxTokens are the loop's budgets (0: none): what its
	// agents reported spending, in US dollars and in tokens of every
	// kind, at or over which it ends (--max-cost, --max-tokens).
	MaxCost   float64 `json:"max_cost"`
	MaxTokens int64   `json:"max_tokens"`
}

// Usage is what an agent reported spending (docs/agents.md): its cost in
// US dollars (nil while no agent of the loop reported one) and its
// tokens by kind.
type Usage struct {
	CostUSD             *float64 `json:"cost_usd"`
	InputTokens         int64    `json:"input_tokens"`
	OutputTokens        int64    `json:"output_tokens"`
	CacheReadTokens     int64    `json:"cache_read_tokens"`
	CacheCreationTokens int64    `json:"cache_creation_tokens"`
}

// Tokens is the sum of every kind of token.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheCreationTokens
}

// Cost is the cost in dollars (0 when none was reported).
func (u Usage) Cost() float64 {
	if u.CostUSD == nil {
		return 0
	}
	return *u.CostUSD
}

// Known reports whether the usage holds anything an agent reported.
func (u Usage) Known() bool { return u.CostUSD != nil || u.Tokens() > 0 }

// Add returns u plus v; the cost is known when either's is.
func (u Usage) Add(v Usage) Usage {
	out := Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheCreationTokens: u.CacheCreationTokens + v.CacheCreationTokens,
	}
	if u.CostUSD != nil || v.CostUSD != nil {
		c := u.Cost() + v.Cost()
		out.CostUSD = &c
	}
	return out
}

// IterationUsage is one iteration's Usage (iteration_usage): the running
// one's as it grows.
type IterationUsage struct {
	Iteration int `json:"iteration"`
	Usage
}

// StateSource says where the loop learns what its agent does
// (state_source): the agent's own events (hooks), or its screen alone.
type StateSource string

// State sources.
const (
	SourceHooks  StateSource = "hooks"
	SourceScreen StateSource = "screen"
)

// MarshalJSON writes null for "".
func (s StateSource) MarshalJSON() ([]byte, error) { return NullString(s).MarshalJSON() }

// UnmarshalJSON reads null as "".
func (s *StateSource) UnmarshalJSON(b []byte) error { return (*NullString)(s).UnmarshalJSON(b) }

// LoopProgress is where a loop is: its status and counts, how it ended,
// what its agent does, and the progress of the current iteration, so a new
// monitor can adopt a running agent after the old one died. The monitor
// writes it; pause, resume, stop and kill change its status.
type LoopProgress struct {
	CurrentIteration    int          `json:"current_iteration"`
	Status              RalphStatus  `json:"status"`
	Started             Timestamp    `json:"started"`
	LastIterationStart  Timestamp    `json:"last_iteration_started"`
	LastIterationEnd    Timestamp    `json:"last_iteration_ended"`
	IterationDurations  []float64    `json:"iteration_durations"` // seconds
	ConsecutiveFailures int          `json:"consecutive_failures"`
	TotalFailures       int          `json:"total_failures"`
	ExitReason          ExitReason   `json:"exit_reason"`
	ExitDetail          NullString   `json:"exit_detail"`
	ExitHint            NullString   `json:"exit_hint"`
	LastExitCode        *int         `json:"last_exit_code"`
	LastScreenChange    UTCTimestamp `json:"last_screen_change"`
	MonitorPID          int          `json:"monitor_pid"`

	// AgentState is the agent's last judged state (working, idle,
	// dialog, limited, error), AgentDetail the screen line behind it.
	AgentState  NullString `json:"agent_state"`
	AgentDetail NullString `json:"agent_detail"`
	// LastError is the agent's last error line (an API error, a fatal
	// start error) for ralph status.
	LastError NullString `json:"last_error"`
	// WaitingUntil is when a usage-limit wait ends (status waiting);
	// LimitWaits counts waits in a row without a known reset time.
	WaitingUntil ZonedTimestamp `json:"waiting_until"`
	LimitWaits   int            `json:"limit_waits"`
	// LastRejection is why the last completion signal was rejected, and
	// LastCheckOutput the first lines of the failing check's output.
	LastRejection   NullString `json:"last_rejection"`
	LastCheckOutput []string   `json:"last_check_output,omitempty"`
	// CapIncomplete: the loop ended at a cap (max_iterations, max_time)
	// not complete: its last completion was rejected, or --fail-on-cap.
	CapIncomplete bool `json:"cap_incomplete"`
	// AgentPID, AgentStartTicks and AgentBootID identify the current
	// iteration's agent process (its pane's), so what it leaves behind
	// after exiting can be stopped without ever signalling a stranger,
	// not even after a reboot (start ticks count from boot; an empty
	// boot id, from an older swarm, compares the ticks alone).
	AgentPID        int    `json:"agent_pid"`
	AgentStartTicks int64  `json:"agent_start_ticks"`
	AgentBootID     string `json:"agent_boot_id"`

	// Usage is the loop's total (cost_usd, input_tokens, ...), and
	// IterationUsage each iteration's, the running one's included.
	Usage
	IterationUsage []IterationUsage `json:"iteration_usage,omitempty"`
	// StateSource: where the current iteration's agent state comes from.
	StateSource StateSource `json:"state_source"`

	// Progress of the current iteration.
	IterationActive bool  `json:"iteration_active"`
	OutputOffset    int64 `json:"output_offset"`
	PromptSent      bool  `json:"prompt_delivered"`
	// PromptEntered: the prompt was typed and Enter pressed, but the
	// agent has not yet shown it received it (PromptSent).
	PromptEntered bool `json:"prompt_entered"`
	// The prompt delivered in the current iteration lives in its own file
	// (SaveDelivered, LoadDelivered), not here: a prompt can be hundreds
	// of MB, and this file is rewritten at every update. These two
	// identify it.
	PromptSHA256 string     `json:"prompt_sha256"`
	PromptBytes  int        `json:"prompt_bytes"`
	StartHead    string     `json:"start_head,omitempty"`
	StartTree    string     `json:"start_tree,omitempty"`
	Feedback     NullString `json:"pending_feedback"`
	PauseReason  NullString `json:"pause_reason"`
	TasksDone    []TaskDone `json:"tasks_done"`
	LastEnd      NullString `json:"last_iteration_result"`
}

// Ralph is ralph/N/state.json: a superset of what swarm.py writes, one flat
// JSON object (encoding/json flattens the embedded structs; MarshalJSON
// keeps the keys in the file's order). Durations that users set are
// stored in seconds, so the file stays readable and hand-editable.
type Ralph struct {
	LoopConfig
	LoopProgress

	// legacyDelivered is the delivered_prompt an older swarm kept in the
	// file; the next locked write moves it to the delivered-prompt file.
	legacyDelivered string
}

// TaskDone is one <promise>TASK-ID:DONE</promise> seen in an iteration.
type TaskDone struct {
	Iteration int    `json:"iteration"`
	ID        string `json:"id"`
}

// Active reports whether the loop has not ended (running, paused or
// waiting for a limit to reset).
func (r *Ralph) Active() bool { return r.Status.Active() }

// Runs reports whether the loop goes on by itself: running, or waiting
// out a limit (it continues on its own at waiting_until).
func (r *Ralph) Runs() bool { return r.Status.Runs() }

// ralphKeyOrder is the order of the keys in a loop's state.json: swarm.py's
// keys in swarm.py's order, with the keys swarm added after them in the
// order they came. Configuration and progress interleave here, so files
// read the same as before the state was split into LoopConfig and
// LoopProgress, and as swarm.py's (testdata/ralph-state.golden.json holds
// the order).
var ralphKeyOrder = []string{
	"worker_name", "prompt_file", "max_iterations", "current_iteration", "status",
	"started", "last_iteration_started", "last_iteration_ended", "iteration_durations",
	"consecutive_failures", "total_failures", "done_pattern", "inactivity_timeout",
	"check_done_continuous", "exit_reason", "exit_detail", "exit_hint", "last_exit_code",
	"last_screen_change", "monitor_pid", "max_context",
	"prompt_mode", "ready_timeout", "promise", "completion_promise", "done_file", "checks",
	"check_timeout", "require_change", "max_time", "fail_on_cap", "same_session",
	"restart_delay", "on_exit", "work_dir",
	"agent", "idle_grace", "limit_message", "limit_wait", "limit_patterns", "ready_patterns",
	"agent_state", "agent_detail", "last_error", "waiting_until", "limit_waits",
	"last_rejection", "last_check_output", "cap_incomplete", "notify", "notify_to", "on_complete", "auto_commit", "max_log_size",
	"agent_pid", "agent_start_ticks", "agent_boot_id",
	"max_cost", "max_tokens", "cost_usd", "input_tokens", "output_tokens", "cache_read_tokens",
	"cache_creation_tokens", "iteration_usage", "state_source",
	"iteration_active", "output_offset", "prompt_delivered", "prompt_entered",
	"prompt_sha256", "prompt_bytes", "start_head", "start_tree", "pending_feedback",
	"pause_reason", "tasks_done", "last_iteration_result",
}

// MarshalJSON writes the loop state as one object with its keys in
// ralphKeyOrder; a key missing from that list (a new field) comes after
// them, in sorted order.
func (r Ralph) MarshalJSON() ([]byte, error) {
	type plain Ralph // Ralph without this method
	data, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(fields))
	for _, k := range ralphKeyOrder {
		if _, ok := fields[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range fields {
		if !slices.Contains(ralphKeyOrder, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range append(keys, rest...) {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(fields[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
