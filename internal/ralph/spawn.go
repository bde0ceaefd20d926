package ralph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/notify"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

// SpawnOptions start a loop: the worker, the loop, and how to run it.
type SpawnOptions struct {
	Worker worker.SpawnOptions
	Loop   Options
	// Foreground leaves running the loop to the caller (Engine.Run);
	// NoRun creates worker and state only (swarm ralph run starts it).
	// Otherwise a background monitor is started.
	Foreground bool
	NoRun      bool
	// Replace stops and removes an existing loop of the same name first,
	// keeping its worktree if it has uncommitted work (unless ForceDirty).
	Replace    bool
	CleanState bool
	ForceDirty bool
}

// SpawnResult is a created loop.
type SpawnResult struct {
	Worker     *state.Worker
	MonitorPID int
	// Notes are the worker spawn's (an existing branch reused).
	Notes []string
	// Warnings are what the user most likely did not mean: a done file
	// that already exists.
	Warnings []string
}

// Spawn validates everything, then creates the worker record (and
// worktree) and the loop state, and starts the monitor unless told not to.
// If a step fails, what was made is removed again.
func Spawn(m *worker.Manager, o SpawnOptions) (*SpawnResult, error) {
	name := o.Worker.Name
	if err := precheck(m, &o); err != nil {
		return nil, err
	}
	rs := m.Store.Ralph(name)
	// One spawn of a name at a time, from clearing the name to the new
	// monitor being up: two --replace at once would each remove what the
	// other made, and leave no loop (or two agents) behind.
	release, err := rs.TryLockSpawn()
	if errors.Is(err, state.ErrSpawnBusy) {
		return nil, hint.Errorf(fmt.Sprintf("wait for it to finish, then look: swarm ralph status %s", name),
			"another ralph spawn of '%s' is under way", name)
	}
	if err != nil {
		return nil, err
	}
	defer release()
	if err := clearName(m, rs, o); err != nil {
		return nil, err
	}
	o.Worker.Tmux = true
	o.Worker.NoStart = true
	o.Worker.Metadata = map[string]any{"ralph": true, "ralph_iteration": 0}
	res, err := m.Spawn(o.Worker)
	if err != nil {
		return nil, err
	}
	rec := res.Worker
	// rollback undoes the spawn after err, and returns err with what it
	// could not undo.
	rollback := func(err error) error {
		// A monitor that failed to come up may have started the agent:
		// stop everything before removing the record. Every step runs.
		uerr := errors.Join(markKilled(rs), m.Kill(name, worker.KillOptions{}))
		_, cerr := m.Clean(name, worker.CleanOptions{RmWorktree: true}) // a worktree kept is warned of by Clean
		if uerr = errors.Join(uerr, cerr, rs.Remove()); uerr != nil {
			return errors.Join(err, fmt.Errorf("and undoing the spawn failed: %w", uerr))
		}
		return err
	}
	if o.Loop.RequireChange {
		if _, _, err := worktree.RepoRoot(rec.Cwd); err != nil {
			return nil, rollback(errors.New("--require-change needs a git repository (run it in a repository, or use --worktree)"))
		}
	}
	st := o.Loop.NewState(name, rec.Cwd)
	st.MaxLogSize = o.Worker.MaxLogSize
	if err := rs.Create(st); err != nil {
		return nil, rollback(err)
	}
	warnings := doneFileWarnings(st)
	if o.Foreground || o.NoRun {
		return &SpawnResult{Worker: rec, Notes: res.Notes, Warnings: warnings}, nil
	}
	pid, err := StartMonitor(m, name)
	if err != nil {
		return nil, rollback(err)
	}
	waitFirstIteration(rs, firstIterationWait)
	return &SpawnResult{Worker: rec, MonitorPID: pid, Notes: res.Notes, Warnings: warnings}, nil
}

// precheck is what Spawn checks before it makes anything: the options,
// the config, the budgets against what the agent reports, a notifier for
// desktop notifications, and a git identity for --auto-commit (refused
// now, with nothing made, rather than at every iteration's end).
func precheck(m *worker.Manager, o *SpawnOptions) error {
	if err := checkSpawn(o); err != nil {
		return err
	}
	cfg, err := checkConfig(m.Store)
	if err != nil {
		return err
	}
	if err := CheckBudgets(o.Loop.MaxCost, o.Loop.MaxTokens, profileFor(o.Loop.Agent, o.Worker.Command), cfg); err != nil {
		return err
	}
	if o.Loop.Notify || slices.Contains(cfg.Notify, notify.Desktop) {
		warnNoNotifier(m)
	}
	if o.Loop.AutoCommit {
		dir := o.Worker.Cwd
		if dir == "" {
			dir = "."
		}
		if err := worktree.CheckIdentity(dir); err != nil {
			return fmt.Errorf("--auto-commit: %w", err)
		}
	}
	return nil
}

// doneFileWarnings warns of a --done-file that exists before the loop
// starts (left by an earlier run, or committed): the loop would end as
// done before its first iteration. It is a warning, not a refusal: with
// --check, a done file that exists is verified like any other, and a loop
// whose work is already done may end at once on purpose.
func doneFileWarnings(st *state.Ralph) []string {
	if st.DoneFile == "" || !fileExists(doneFilePath(st)) {
		return nil
	}
	p := doneFilePath(st)
	return []string{fmt.Sprintf("--done-file %s already exists (%s): the loop ends before its first iteration (unless a --check rejects it); remove it (rm %s) and spawn again with --replace",
		st.DoneFile, p, tmux.ShellQuote(p))}
}

// checkSpawn validates everything before anything is created.
func checkSpawn(o *SpawnOptions) error {
	if err := state.ValidateName(o.Worker.Name); err != nil {
		return err
	}
	given := o.Loop.PromptFile
	if err := o.Loop.Validate(); err != nil {
		return err
	}
	if len(o.Worker.Command) == 0 {
		return worker.ErrNoCommand
	}
	if prompt, err := readPrompt(o.Loop.PromptFile); err == nil {
		if err := shellPromptError(o.Loop.PromptMode, profileFor(o.Loop.Agent, o.Worker.Command), prompt, given,
			"start the prompt file with other text (a line further down may start with '!')"); err != nil {
			return err
		}
	}
	if o.Loop.SameSession && o.Loop.PromptMode != ModeType {
		return errors.New("--same-session needs --prompt-mode type (the continuation is typed into the agent)")
	}
	if err := worker.CheckTags(o.Worker.Tags); err != nil {
		return err
	}
	_, err := worker.ParseEnv(o.Worker.Env)
	return err
}

// profileFor is the profile of a loop's agent: --agent, else its
// command's.
func profileFor(name string, cmd []string) *agent.Profile {
	if p, ok := agent.Lookup(name); ok {
		return p
	}
	return agent.For(cmd)
}

// CheckBudgets refuses a budget the loop's agent cannot be held to: a
// --max-cost for an agent that reports no cost (and has no price in
// config.json), a --max-tokens for one that reports no tokens. A budget
// silently never kept would be worse than none.
func CheckBudgets(maxCost float64, maxTokens int64, p *agent.Profile, cfg state.Config) error {
	_, priced := cfg.Prices[p.Name]
	switch {
	case maxCost > 0 && !p.Telemetry.Cost && !(p.Telemetry.Tokens && priced):
		fix := "use an agent that reports its cost (Claude Code), or drop --max-cost"
		if p.Telemetry.Tokens {
			fix = fmt.Sprintf(`give its prices per million tokens in config.json: {"prices": {"%s": {"input": 1.25, "cached_input": 0.125, "output": 10}}}, or use --max-tokens`, p.Name)
		}
		return hint.Errorf(fix, "--max-cost needs an agent that reports what it spends; the %s profile reports no cost (docs/agents.md)", p.Name)
	case maxTokens > 0 && !p.Telemetry.Tokens:
		return hint.Errorf("use an agent that reports its tokens (Claude Code, Codex), or drop --max-tokens",
			"--max-tokens needs an agent that reports what it spends; the %s profile reports no tokens (docs/agents.md)", p.Name)
	}
	return nil
}

// checkConfig reads config.json, whose on_exit runs and whose notify
// targets are told when the loop ends: a broken file is an error now,
// before anything is created, not a line in monitor.log after the loop
// has ended.
func checkConfig(s *state.Store) (state.Config, error) {
	cfg, err := s.Config()
	if err == nil {
		_, err = notify.ParseAll(cfg.Notify)
	}
	if err != nil {
		return cfg, hint.Errorf(`fix it or remove it; it holds settings for every loop: {"on_exit": "CMD"}`,
			"invalid %s: %v", s.ConfigPath(), err)
	}
	return cfg, nil
}

// warnNoNotifier warns when --notify has nothing to notify with: the loop's
// monitor looks notify-send up on the PATH it inherits from this spawn.
func warnNoNotifier(m *worker.Manager) {
	if _, err := exec.LookPath(Notifier); err != nil && m.Warn != nil {
		m.Warn(fmt.Sprintf("--notify: %s is not installed (not on PATH); the loop's end will only ring the bell in swarm top", Notifier))
	}
}

// clearName makes way for the new loop: --replace stops and removes an
// old one; otherwise an existing loop or worker of the name is an error
// (--clean-state removes leftover state of an ended loop).
func clearName(m *worker.Manager, rs *state.RalphStore, o SpawnOptions) error {
	name := o.Worker.Name
	if o.Replace {
		return replace(m, name, o.ForceDirty)
	}
	if !rs.Exists() {
		return nil
	}
	if MonitorAlive(rs) {
		return hint.Errorf("swarm ralph spawn --replace ... to start over, or: swarm ralph status "+name, "ralph loop '%s' is running", name)
	}
	if _, err := m.Get(name); err == nil {
		return hint.Errorf(fmt.Sprintf("swarm ralph spawn --replace ... to start over, or: swarm clean %s", name), "worker '%s' already exists", name)
	}
	if o.CleanState {
		return rs.Remove()
	}
	return nil
}

// removeOldWorktree removes the replaced worker's worktree. One that holds
// uncommitted work is kept, with a warning, and the new loop runs in it.
// One whose HEAD is on no branch (commits on no branch, a rebase under
// way) cannot take the new loop, which runs on the worker's branch: the
// replacement stops there (the old loop is stopped, its record kept)
// unless forceDirty.
func removeOldWorktree(m *worker.Manager, w *state.Worker, forceDirty bool) error {
	err := worktree.Remove(worker.WorktreeOf(w), forceDirty)
	var dirty *worktree.DirtyError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &dirty):
		return fmt.Errorf("cannot remove worktree for '%s': %w", w.Name, err)
	case dirty.Detached:
		return hint.Errorf(fmt.Sprintf("keep that work first (git -C %s branch NEW-BRANCH HEAD, or finish the rebase), or pass --force-dirty to discard it", tmux.ShellQuote(w.Worktree.Path)),
			"cannot remove worktree for '%s': %v (kept)", w.Name, err)
	}
	if m.Warn != nil {
		m.Warn(fmt.Sprintf("cannot remove worktree for '%s': %v (kept; the new loop continues in it)", w.Name, err))
	}
	return nil
}

// waitFirstIteration returns once the monitor has started iteration 1 (or
// the loop already ended), so that peek and attach work right after spawn.
func waitFirstIteration(rs *state.RalphStore, timeout time.Duration) {
	clock.Wait(context.Background(), clock.Real, firstIterationPoll, timeout, func() bool {
		st, err := rs.Load()
		return err != nil || st.CurrentIteration >= 1 || !st.Active()
	})
}

// replace stops an existing loop of the same name and removes its worker,
// state and (clean) worktree. The old monitor is waited for, so two
// monitors never drive one worker. A worktree with uncommitted work is
// kept, and the new loop runs in it, unless forceDirty (see
// removeOldWorktree).
func replace(m *worker.Manager, name string, forceDirty bool) error {
	rs := m.Store.Ralph(name)
	w, err := m.Get(name)
	if err == nil {
		if err := m.Kill(name, worker.KillOptions{}); err != nil {
			return err
		}
		if MonitorAlive(rs) {
			return fmt.Errorf("the monitor of '%s' did not exit; try again, or kill it (pid in %s)", name, rs.StatePath())
		}
		if w.Worktree != nil {
			if err := removeOldWorktree(m, w, forceDirty); err != nil {
				return err
			}
		}
		if err := m.Remove(name); err != nil {
			return err
		}
	} else if !errors.Is(err, worker.ErrNotFound) {
		return err
	}
	if MonitorAlive(rs) {
		if err := markKilled(rs); err != nil {
			warnf(m, "cannot mark the ralph loop of '%s' killed: %v", name, err)
		}
		if !WaitMonitorExit(rs, replaceWait) {
			return fmt.Errorf("the monitor of '%s' did not exit", name)
		}
	}
	if err := rs.Remove(); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
