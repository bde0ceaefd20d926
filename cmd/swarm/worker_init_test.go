package main

// Black-box tests of swarm init, version, completion and --help
// (docs/commands.md).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

const wkHeading = "## Process Management (swarm)"

func wkRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWorkerInit(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	agents := filepath.Join(dir, "AGENTS.md")

	// --dry-run changes nothing
	r := e.RunIn(dir, "init", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "AGENTS.md") || r.Stderr != "" {
		t.Errorf("init --dry-run: %s", r)
	}
	if wkExists(agents) {
		t.Fatalf("init --dry-run created AGENTS.md")
	}

	// create
	wkExpect(t, "init", e.RunIn(dir, "init"), 0, "Created AGENTS.md\n", "")
	section := wkRead(t, agents)
	if !strings.HasPrefix(section, wkHeading+"\n") || !strings.Contains(section, "swarm spawn") {
		t.Fatalf("AGENTS.md:\n%s", section)
	}

	// already present: unchanged
	wkExpect(t, "init again", e.RunIn(dir, "init"), 0, "", "swarm: AGENTS.md already contains swarm instructions\n")
	if got := wkRead(t, agents); got != section {
		t.Errorf("init on a file with the section changed it:\n%s", got)
	}

	// --force replaces a stale section and keeps the user's text around it
	stale := strings.Replace(section, "swarm spawn", "swarm OLD-spawn", -1)
	user := "# Project\n\nmine\n\n" + stale + "\n## Other\n\nkeep me\n"
	os.WriteFile(agents, []byte(user), 0o644)
	r = e.RunIn(dir, "init", "--dry-run", "--force")
	if r.Code != 0 || wkRead(t, agents) != user {
		t.Errorf("init --dry-run --force changed the file or failed: %s", r)
	}
	wkExpect(t, "init --force", e.RunIn(dir, "init", "--force"), 0, "Updated swarm instructions in AGENTS.md\n", "")
	got := wkRead(t, agents)
	if !strings.HasPrefix(got, "# Project\n\nmine\n\n"+wkHeading) || !strings.HasSuffix(got, "## Other\n\nkeep me\n") ||
		strings.Contains(got, "OLD-spawn") || strings.Count(got, wkHeading) != 1 || !strings.Contains(got, strings.TrimRight(section, "\n")) {
		t.Errorf("after init --force:\n%s", got)
	}

	// add to an existing CLAUDE.md (picked when it is the only file)
	dir2 := t.TempDir()
	claude := filepath.Join(dir2, "CLAUDE.md")
	os.WriteFile(claude, []byte("# Rules\n\nbe nice\n"), 0o644)
	r = e.RunIn(dir2, "init", "--dry-run", "--file", "CLAUDE.md")
	if r.Code != 0 || wkRead(t, claude) != "# Rules\n\nbe nice\n" {
		t.Errorf("init --dry-run --file CLAUDE.md: %s", r)
	}
	wkExpect(t, "init with only CLAUDE.md", e.RunIn(dir2, "init"), 0, "Added swarm instructions to CLAUDE.md\n", "")
	got = wkRead(t, claude)
	if !strings.HasPrefix(got, "# Rules\n\nbe nice\n") || strings.Count(got, wkHeading) != 1 {
		t.Errorf("CLAUDE.md after init:\n%s", got)
	}
	if wkExists(filepath.Join(dir2, "AGENTS.md")) {
		t.Errorf("init created AGENTS.md next to CLAUDE.md")
	}
	wkExpect(t, "init --file CLAUDE.md again", e.RunIn(dir2, "init", "--file", "CLAUDE.md"), 0, "",
		"swarm: CLAUDE.md already contains swarm instructions\n")

	// init touches no swarm state
	if wkExists(e.Home) && len(e.Workers()) != 0 {
		t.Errorf("init created worker records")
	}
}

func TestWorkerVersionCompletionHelp(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	v := e.Run("version")
	if v.Code != 0 || !strings.HasPrefix(v.Stdout, "swarm ") || strings.Count(v.Stdout, "\n") != 1 || v.Stderr != "" {
		t.Errorf("swarm version: %s", v)
	}
	wkExpect(t, "swarm --version", e.Run("--version"), 0, v.Stdout, "")
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := e.Run("completion", sh)
		if r.Code != 0 || !strings.Contains(r.Stdout, "swarm") || len(r.Stdout) < 200 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, r.Code, len(r.Stdout), r.Stderr)
		}
	}
	for _, cmd := range []string{"spawn", "ls", "status", "peek", "logs", "attach", "send", "interrupt", "eof", "wait", "kill", "clean", "respawn", "init"} {
		r := e.Run(cmd, "--help")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Examples:") || !strings.Contains(r.Stdout, "swarm "+cmd) {
			t.Errorf("swarm %s --help: exit %d, has examples %v\n%s", cmd, r.Code, strings.Contains(r.Stdout, "Examples:"), r.Stdout)
		}
	}
	if e.Run("--help").Code != 0 {
		t.Errorf("swarm --help failed")
	}
	if wkExists(filepath.Join(e.Home, "state.json")) {
		t.Errorf("version/help/completion wrote state")
	}
}

// ralph init says when the prompt it wrote asks for no completion signal
// (swarm.py's default template): a loop on it would run to its cap.
// template --list says in one line what each template is for.
func TestRalphInitSaysWhetherTheLoopCanEnd(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()
	r := e.RunIn(dir, "ralph", "init")
	note := "swarm: note: PROMPT.md has no completion signal, so a loop on it runs until --max-iterations (50 by default); " +
		"add a line telling the agent to print <promise>COMPLETE</promise> when all the work is done, or start from: swarm ralph init --template plan --force\n"
	wkExpect(t, "ralph init", r, 0, "created PROMPT.md\n", note)
	if got := wkRead(t, filepath.Join(dir, "PROMPT.md")); !strings.HasPrefix(got, "study specs/README.md\n") {
		t.Errorf("default template changed:\n%s", got)
	}
	for _, tpl := range []string{"plan", "promise"} {
		wkExpect(t, "ralph init --template "+tpl, e.RunIn(dir, "ralph", "init", "--template", tpl, "--force"), 0, "created PROMPT.md (overwritten)\n", "")
		if got := wkRead(t, filepath.Join(dir, "PROMPT.md")); !strings.Contains(got, "<promise>COMPLETE</promise>") {
			t.Errorf("template %s has no completion signal:\n%s", tpl, got)
		}
	}
	r = e.Run("ralph", "template", "--list")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Code != 0 || len(lines) != 3 {
		t.Fatalf("template --list: %s", r)
	}
	for i, name := range []string{"default ", "plan    ", "promise "} {
		if !strings.HasPrefix(lines[i], name+" ") || len(lines[i]) < len(name)+20 {
			t.Errorf("template --list line %d: %q", i, lines[i])
		}
	}
	if !strings.HasSuffix(lines[0], "no completion signal") {
		t.Errorf("template --list does not say the default has no completion signal: %q", lines[0])
	}
}
