package ralph

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
)

// What an agent reports of itself (docs/agents.md): the loop starts the
// agents that can with swarm's hooks and status line (internal/agent's
// Launch; cmd/swarm's _event writes the files), reads their events first
// and their screen second, and adds up what they spent. An agent whose
// hooks never fire runs on its screen alone, as before.

// reporting is what a session's agent reports besides its screen.
type reporting struct {
	eventsFile, statusFile string // the session's files (swarm _event writes them)
	sessionID              string // the session id swarm gave the agent ("": its own)
	hooked                 bool   // its hooks were set up
	off                    int64  // how far the events file was read
	size                   int64  // its size when it was last read
	heard                  bool   // an event came: its hooks run
	transcript             string // the transcript its events named

	statusSeen time.Time    // the status file's time last read
	status     agent.Status // the status line's last figures
	hasStatus  bool

	usage  agent.UsageReader // its tokens, once it is known where
	ref    agent.UsageRef
	tokens agent.Usage // the session's tokens so far
	// price gives a cost to its tokens when it reports none
	// (config.json's prices).
	price *state.Price
	// warned: a hook's own error was logged once.
	warned bool
	// stopHooks: the user's settings have Stop hooks of their own, which
	// run beside swarm's and may block the turn's end.
	stopHooks bool
	// hooksRun: an event came from its hooks, not only from Codex's
	// notify: they report its prompts, and notify's Stops are dropped
	// (the hooks' Stop reports the same end).
	hooksRun bool
}

// needPrompt reports whether the turn's events count only after its
// prompt's own (UserPromptSubmit): for an agent whose hooks report its
// prompts, once they are seen to run.
func (t *turn) needPrompt() bool {
	return t.profile.Telemetry.Prompts || (t.rep != nil && t.rep.hooksRun)
}

// Paths of a session's reporting files, beside its output.
func eventsPath(rs *state.RalphStore, iter int) string {
	return filepath.Join(rs.Dir, "output", fmt.Sprintf("iteration-%04d.events.jsonl", iter))
}

func statusPath(rs *state.RalphStore, iter int) string {
	return filepath.Join(rs.Dir, "output", fmt.Sprintf("iteration-%04d.status.json", iter))
}

func settingsPath(rs *state.RalphStore, iter int) string {
	return filepath.Join(rs.Dir, "output", fmt.Sprintf("iteration-%04d.settings.json", iter))
}

// reportingFiles are the files of iteration iter's reporting, made afresh
// with its output and removed with it.
func reportingFiles(rs *state.RalphStore, iter int) []string {
	return []string{eventsPath(rs, iter), statusPath(rs, iter), settingsPath(rs, iter)}
}

// agentCmd sets up the reporting of t's new session and returns the
// agent's command with the arguments it needs (its settings file, a
// session id). Without hooks (a test engine, an agent that has none, a
// command that gives its own settings) the command is the worker's as it
// is, and the loop reads the screen alone.
func (e *Engine) agentCmd(t *turn, w *state.Worker) []string {
	t.rep = nil
	if e.Hooks.Event == nil || t.profile.Telemetry == (agent.Telemetry{}) || len(w.Cmd) == 0 {
		return w.Cmd
	}
	env := envList(w.Env)
	home := agentHome(env)
	rep := &reporting{eventsFile: eventsPath(e.RS, t.iter), statusFile: statusPath(e.RS, t.iter)}
	launched := e.Clock.Now()
	l, err := t.profile.Launch(w.Cmd, agent.LaunchSpec{
		Hooks: e.Hooks, EventsFile: rep.eventsFile, StatusFile: rep.statusFile, SettingsFile: settingsPath(e.RS, t.iter),
		WorkDir: t.st.WorkDir, Home: home, Env: env, Write: state.WriteFileAtomic,
	})
	if err != nil {
		e.log(EventWarn, "iteration %d: cannot set up the agent's hooks (%v); reading its screen only", t.iter, err)
		return w.Cmd
	}
	rep.sessionID, rep.hooked, rep.stopHooks = l.SessionID, l.Events, l.StopHooks
	rep.ref = agent.UsageRef{SessionID: l.SessionID, Home: home, Env: env}
	if l.SessionID == "" {
		// A session swarm did not name may be one the user's command
		// resumes (claude --resume, codex resume): its earlier runs'
		// replies are in its file and were paid for then.
		rep.ref.Since = launched
	}
	if !t.profile.Telemetry.Cost {
		rep.price = e.priceOf(t.profile)
	}
	t.rep = rep
	return append(slices.Clone(w.Cmd), l.Args...)
}

// envList is the worker's environment as "K=V" lines, sorted.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// agentHome is the home the agent's files are under: its HOME if the
// worker sets one, else the user's.
func agentHome(env []string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	home, _ := os.UserHomeDir()
	return home
}

// priceOf is config.json's price of the profile's tokens, nil for none.
func (e *Engine) priceOf(p *agent.Profile) *state.Price {
	cfg, err := e.M.Store.Config()
	if err != nil {
		return nil
	}
	if pr, ok := cfg.Prices[p.Name]; ok {
		return &pr
	}
	return nil
}

// readReports reads what the agent reported since the last poll: new
// events (queued on the turn until acted on), the status line's last
// figures, its tokens. The first event says its hooks run: the loop's
// state source becomes hooks.
func (e *Engine) readReports(t *turn) {
	r := t.rep
	if r == nil {
		return
	}
	e.readEvents(t)
	if data, err := state.ReadFile(r.statusFile, maxStatusFile); err == nil {
		if s, err := agent.ParseStatus(data); err == nil && !s.Time.Equal(r.statusSeen) {
			r.statusSeen, r.status, r.hasStatus = s.Time, s, true
			if r.transcript == "" {
				r.transcript = s.Transcript
			}
		}
	}
	if r.usage == nil && (r.transcript != "" || r.ref.SessionID != "") {
		ref := r.ref
		ref.Transcript = r.transcript
		r.usage = t.profile.UsageReader(ref)
	}
	if r.usage != nil {
		if u, err := r.usage.Read(); err == nil {
			r.tokens = u
		}
	}
}

// maxStatusFile bounds the read of a status file (a few hundred bytes).
const maxStatusFile = 64 << 10

// readEvents queues the events written since the last read.
func (e *Engine) readEvents(t *turn) {
	r := t.rep
	r.size = state.EventsSize(r.eventsFile)
	lines, next, err := state.ReadEvents(r.eventsFile, r.off)
	if err != nil {
		return
	}
	r.off = next
	for _, l := range lines {
		ev, err := agent.ParseEvent(l)
		if err != nil || (r.sessionID != "" && ev.Session != "" && ev.Session != r.sessionID) {
			continue // another session's (an agent it started), or not ours
		}
		if ev.Kind == agent.KindNotify && ev.Name == agent.EventStop {
			if r.hooksRun {
				continue // its hooks report the same turn end, after its prompt
			}
		} else {
			r.hooksRun = true
		}
		if !r.heard {
			r.heard = true
			e.setSource(state.SourceHooks)
		}
		if ev.Transcript != "" && r.transcript == "" {
			r.transcript = ev.Transcript
		}
		if r.ref.SessionID == "" && ev.Session != "" {
			// An agent swarm gives no session id (Codex) names its own
			// in its events: its usage file is found by it.
			r.ref.SessionID = ev.Session
		}
		t.queue = append(t.queue, ev)
	}
}

// setSource records where the loop learns what the agent does.
func (e *Engine) setSource(src state.StateSource) {
	e.record(func(s *state.Ralph) error { s.StateSource = src; return nil })
}

// sessionUsage is what the session spent so far: its tokens, and its
// cost (the status line's, else its tokens at config.json's price; nil
// when neither).
func (r *reporting) sessionUsage() state.Usage {
	if r == nil {
		return state.Usage{}
	}
	u := state.Usage{InputTokens: r.tokens.Input, OutputTokens: r.tokens.Output,
		CacheReadTokens: r.tokens.CacheRead, CacheCreationTokens: r.tokens.CacheCreation}
	switch {
	case r.hasStatus && r.status.CostUSD != nil:
		c := *r.status.CostUSD
		u.CostUSD = &c
	case r.price != nil:
		c := r.price.Cost(u)
		u.CostUSD = &c
	}
	return u
}

// turnUsage is what t spent: the session's usage less what it had spent
// when t began (a same-session continuation).
func (t *turn) turnUsage() state.Usage {
	now := t.rep.sessionUsage()
	b := t.base
	u := state.Usage{InputTokens: now.InputTokens - b.InputTokens, OutputTokens: now.OutputTokens - b.OutputTokens,
		CacheReadTokens: now.CacheReadTokens - b.CacheReadTokens, CacheCreationTokens: now.CacheCreationTokens - b.CacheCreationTokens}
	if now.CostUSD != nil {
		c := roundCost(now.Cost() - b.Cost())
		u.CostUSD = &c
	}
	return u
}

// roundCost rounds dollars to a millionth: sums of floats stay readable.
func roundCost(c float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(c, 'f', 6, 64), 64)
	return v
}

// noteUsage records t's usage in the loop state when it changed: the
// iteration's entry and the loop's total, which ralph status shows live
// and the budgets are checked against.
func (e *Engine) noteUsage(t *turn) {
	if t.rep == nil {
		return
	}
	u := t.turnUsage()
	if !u.Known() || usageEqual(u, t.noted) {
		return
	}
	t.noted = u
	e.record(func(s *state.Ralph) error {
		setIterationUsage(s, t.iter, u)
		return nil
	})
}

func usageEqual(a, b state.Usage) bool {
	return a.Tokens() == b.Tokens() && a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.CacheReadTokens == b.CacheReadTokens && (a.CostUSD == nil) == (b.CostUSD == nil) && a.Cost() == b.Cost()
}

// setIterationUsage sets iteration iter's usage and makes the loop's
// total the sum of its iterations'.
func setIterationUsage(s *state.Ralph, iter int, u state.Usage) {
	i := slices.IndexFunc(s.IterationUsage, func(x state.IterationUsage) bool { return x.Iteration == iter })
	if i < 0 {
		s.IterationUsage = append(s.IterationUsage, state.IterationUsage{Iteration: iter})
		i = len(s.IterationUsage) - 1
	}
	s.IterationUsage[i].Usage = u
	var total state.Usage
	for _, x := range s.IterationUsage {
		total = total.Add(x.Usage)
	}
	if total.CostUSD != nil {
		c := roundCost(*total.CostUSD)
		total.CostUSD = &c
	}
	s.Usage = total
}

// usageText is the END line's usage: " cost=$0.42 tokens=12345", each
// part only when known, after swarm.py's fields.
func usageText(u state.Usage) string {
	var b strings.Builder
	if u.CostUSD != nil {
		b.WriteString(" cost=" + FormatCost(*u.CostUSD))
	}
	if u.Tokens() > 0 {
		fmt.Fprintf(&b, " tokens=%d", u.Tokens())
	}
	return b.String()
}

// FormatCost writes dollars with two decimals, more for a cost under a
// cent's precision ($0.42, $1.50, $0.0031), at most four.
func FormatCost(c float64) string {
	s := strconv.FormatFloat(c, 'f', 4, 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// statusSettle bounds the wait, after the agent reported its turn's end,
// for the status line that has the turn's last reply in its cost (Claude
// Code runs it some 300 ms after a message). It is waited within the
// pause before the next iteration (counted from the iteration's end), so
// it costs no time at the default --restart-delay.
const statusSettle = 800 * time.Millisecond

// dropEvents reads and drops the events reported so far, as the turn's
// prompt is about to be submitted: they belong to the turns before (a
// same-session continuation, the agent's start).
func (e *Engine) dropEvents(t *turn) {
	if t.rep == nil {
		return
	}
	e.readEvents(t)
	t.queue, t.prompted = nil, false
	if !t.rep.ref.Since.IsZero() && t.base == (state.Usage{}) {
		// A session the user's command resumed shows on its status line
		// the cost its earlier runs restored (its tokens are read from
		// Since on already): this turn is charged what comes after.
		e.readReports(t)
		if u := t.rep.sessionUsage(); u.CostUSD != nil {
			t.base.CostUSD = u.CostUSD
		}
	}
}

// adoptReporting picks up the reporting of an iteration a dead monitor
// started: its files, read from where they stand now (what came before
// was the dead monitor's to act on). The session id it gave is not
// known: every session's events count.
func (e *Engine) adoptReporting(t *turn) {
	events := eventsPath(e.RS, t.iter)
	if _, err := os.Lstat(events); err != nil || t.profile.Telemetry == (agent.Telemetry{}) {
		return
	}
	size := state.EventsSize(events)
	t.rep = &reporting{eventsFile: events, statusFile: statusPath(e.RS, t.iter), hooked: true, off: size, size: size,
		ref: agent.UsageRef{Home: agentHome(nil)}}
	if !t.profile.Telemetry.Cost {
		t.rep.price = e.priceOf(t.profile)
	}
}
