package main

// Black-box test of issue 19's "done when": a loop spawned with
// --worktree --base main that ends complete merges into main
// (--on-complete merge), and a webhook on 127.0.0.1 hears its end once.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// TestLoopOnCompleteMergesAndNotifies: the loop's agent makes a file, a
// --check commits it (the agent's commit, here), the loop ends complete;
// its monitor merges the branch into main and tells the webhook, once,
// with the hooks' fields and what the merge did.
func TestLoopOnCompleteMergesAndNotifies(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		json.Unmarshal(body, &ev)
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}))
	defer srv.Close()
	received := func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), events...)
	}

	e := testenv.New(t)
	e.InitRepo()
	e.Git(e.Dir, "config", "user.name", "Night")
	e.Git(e.Dir, "config", "user.email", "night@example.com")
	prompt := e.WriteFile("PROMPT.md", "work\n")
	e.Git(e.Dir, "add", "PROMPT.md")
	e.Git(e.Dir, "commit", "-qm", "prompt")
	e.MustRun("ralph", "spawn", "--name", "night", "--prompt-file", prompt, "--base", "main", "--max-iterations", "3",
		"--on-complete", "merge", "--notify=webhook:"+srv.URL+"/hook",
		"--check", "git add night.txt && git commit -qm 'night work'",
		"--", e.Agent, "--script", "touch night.txt;print <promise>COMPLETE</promise>;quiet")
	if r := e.Run("ralph", "wait", "night", "--timeout", "60"); r.Code != 0 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog("night"))
	}
	e.Eventually("the webhook to hear the end", wkTimeout, func() bool { return len(received()) > 0 })
	if got := e.Git(e.Dir, "show", "main:night.txt"); got != "done\n" {
		t.Errorf("main's night.txt: %q", got)
	}
	if subject := strings.TrimSpace(e.Git(e.Dir, "log", "-1", "--format=%s", "main")); subject != "Merge branch 'night' into main" {
		t.Errorf("main's last commit: %q", subject)
	}
	if !wkExists(e.Dir + "/night.txt") {
		t.Error("the checkout of main was not fast-forwarded to the merge")
	}
	log := e.RalphLog("night")
	if !strings.Contains(log, "[MERGE] on-complete merge: merged night into main (merge, 1 commit(s)): ") {
		t.Errorf("iterations.log:\n%s", log)
	}
	// The monitor has delivered before it exits: a later look finds the
	// one event still alone.
	e.Eventually("the monitor to exit", wkTimeout, func() bool { return !lcMonitorRuns(e, "night") })
	evs := received()
	if len(evs) != 1 {
		t.Fatalf("webhook got %d events, want the end once: %v", len(evs), evs)
	}
	ev := evs[0]
	if ev["event"] != "end" || ev["worker"] != "night" || ev["exit_reason"] != "complete" || ev["exit_code"] != 0.0 ||
		ev["iterations"] != 1.0 || !strings.HasPrefix(ev["merge"].(string), "on-complete merge: merged night into main") {
		t.Errorf("end event %v", ev)
	}
}

// lcMonitorRuns reports whether a monitor of loop name of this env runs:
// the swarm under test running "ralph run NAME" with its SWARM_HOME.
func lcMonitorRuns(e *testenv.Env, name string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(strings.TrimSuffix(string(cl), "\x00"), "\x00")
		if len(argv) != 4 || !slices.Equal(argv[1:], []string{"ralph", "run", name}) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if slices.Contains(strings.Split(string(env), "\x00"), "SWARM_HOME="+e.Home) {
			return true
		}
	}
	return false
}

// TestLoopOnCompleteConflictChangesNothing: when the loop's branch
// conflicts with its base (here a --check commits a clashing file on main
// before the completion counts), the on-complete merge changes nothing and
// says why in the log.
func TestLoopOnCompleteConflictChangesNothing(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	e.Git(e.Dir, "config", "user.name", "Night")
	e.Git(e.Dir, "config", "user.email", "night@example.com")
	prompt := e.WriteFile("PROMPT.md", "work\n")
	e.Git(e.Dir, "add", "PROMPT.md")
	e.Git(e.Dir, "commit", "-qm", "prompt")
	clash := "git add night.txt && git commit -qm 'night work' && cd " + e.Dir +
		" && echo other > night.txt && git add night.txt && git commit -qm clash"
	e.MustRun("ralph", "spawn", "--name", "night", "--prompt-file", prompt, "--base", "main", "--max-iterations", "3",
		"--on-complete", "merge", "--check", clash,
		"--", e.Agent, "--script", "touch night.txt;print <promise>COMPLETE</promise>;quiet")
	if r := e.Run("ralph", "wait", "night", "--timeout", "60"); r.Code != 0 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog("night"))
	}
	e.Eventually("the monitor to exit", wkTimeout, func() bool { return !lcMonitorRuns(e, "night") })
	if subject := strings.TrimSpace(e.Git(e.Dir, "log", "-1", "--format=%s", "main")); subject != "clash" {
		t.Errorf("main moved past its own commit: %q", subject)
	}
	if st := e.Git(e.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("the checkout of main changed: %q", st)
	}
	if log := e.RalphLog("night"); !strings.Contains(log, "[MERGE] on-complete merge not done: merging night into main (merge) conflicts in 1 file(s): night.txt; nothing was changed") {
		t.Errorf("iterations.log:\n%s", log)
	}
}
