package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// usageSeed writes a running loop whose agents reported spending, with a
// cost budget, its iteration 3 under way.
func usageSeed(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	st := state.NewStore(home, func(w string) { t.Errorf("warning: %s", w) })
	c := func(v float64) *float64 { return &v }
	started := state.Timestamp{Time: time.Now().Add(-time.Hour)}
	it := []state.IterationUsage{
		{Iteration: 2, Usage: state.Usage{CostUSD: c(0.82), InputTokens: 800, OutputTokens: 2000, CacheReadTokens: 30000, CacheCreationTokens: 4000}},
		{Iteration: 3, Usage: state.Usage{CostUSD: c(0.41), InputTokens: 400, OutputTokens: 1000, CacheReadTokens: 3000, CacheCreationTokens: 167}},
	}
	if err := st.Ralph("spend").Create(&state.Ralph{
		LoopConfig: state.LoopConfig{WorkerName: "spend", MaxIterations: 10, MaxCost: 5, MaxTokens: 2000000},
		LoopProgress: state.LoopProgress{Status: state.RalphRunning, CurrentIteration: 3, IterationActive: true,
			Started: started, LastIterationStart: started, StateSource: state.SourceHooks,
			Usage:          state.Usage{CostUSD: c(1.23), InputTokens: 1200, OutputTokens: 3000, CacheReadTokens: 33000, CacheCreationTokens: 4167},
			IterationUsage: it}}); err != nil {
		t.Fatal(err)
	}
	return home
}

// ralph status shows the cost and tokens in total and of the latest
// iteration, where the state comes from, and the budgets; ralph ls has a
// COST column; --format json has the state's usage keys.
func TestRalphStatusShowsUsage(t *testing.T) {
	t.Parallel()
	home := usageSeed(t)
	r := hbRun(home, "ralph", "status", "spend")
	for _, want := range []string{
		"\nCost: $1.23 (iteration 3: $0.41)\n",
		"\nTokens: 41367 (input 1200, output 3000, cache read 33000, cache write 4167); iteration 3: 4567\n",
		"\nState source: hooks\n",
		"\nCost budget: $5.00\n",
		"\nToken budget: 2000000\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("ralph status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = hbRun(home, "ralph", "status", "spend", "--format", "json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil {
		t.Fatal(err)
	}
	if obj["cost_usd"] != 1.23 || obj["input_tokens"] != float64(1200) || obj["max_cost"] != float64(5) || obj["state_source"] != "hooks" {
		t.Errorf("json: %v", obj)
	}
	if it, _ := obj["iteration_usage"].([]any); len(it) != 2 {
		t.Errorf("iteration_usage %v", obj["iteration_usage"])
	}
	r = hbRun(home, "ralph", "ls")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.HasSuffix(strings.TrimSpace(lines[0]), "REASON  COST") || !strings.HasSuffix(lines[1], "$1.23") {
		t.Errorf("ralph ls:\n%s", r.stdout)
	}
}
