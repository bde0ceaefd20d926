package main

// swarm init --with-sandbox: the kit written into the current directory,
// each file reported on stdout after the instructions line.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/sandbox"
	"github.com/swarmtools/swarm/internal/testenv"
)

// sbLines is what init prints for each kit file, msg being "Created %s",
// "Would create %s" and so on.
func sbLines(msg string) string {
	var b strings.Builder
	for _, f := range sandbox.Files() {
		b.WriteString(strings.ReplaceAll(msg, "%s", f.Name) + "\n")
	}
	return b.String()
}

func TestInitWithSandboxOptions(t *testing.T) {
	t.Parallel()
	in := ipParse(t, newCmdInit, "--with-sandbox", "--dry-run", "--force")
	ipEqual(t, "init --with-sandbox", [3]bool{in.WithSandbox, in.DryRun, in.Force}, [3]bool{true, true, true})
	ipEqual(t, "init default", ipParse(t, newCmdInit).WithSandbox, false)
}

func TestInitWithSandbox(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	dir := t.TempDir()

	// --dry-run: the instructions, a blank line, then the kit; nothing written
	r := e.RunIn(dir, "init", "--with-sandbox", "--dry-run")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "would: Created AGENTS.md\n") ||
		!strings.HasSuffix(r.Stdout, "\n\n"+sbLines("Would create %s")) || r.Stderr != "" {
		t.Errorf("init --with-sandbox --dry-run: %s", r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("--dry-run wrote %d files", len(entries))
	}

	wkExpect(t, "init --with-sandbox", e.RunIn(dir, "init", "--with-sandbox"), 0,
		"Created AGENTS.md\n"+sbLines("Created %s"), "")
	for _, f := range sandbox.Files() {
		info, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil || info.Mode().Perm() != f.Mode {
			t.Errorf("%s: %v, mode %v, want %v", f.Name, err, info.Mode().Perm(), f.Mode)
		}
	}

	// again: everything is kept, the instructions line goes to stderr
	wkExpect(t, "init --with-sandbox again", e.RunIn(dir, "init", "--with-sandbox"), 0,
		sbLines("swarm: %s already exists, skipping"), "swarm: AGENTS.md already contains swarm instructions\n")

	// --force brings a changed script back, never the user's PROMPT.md
	script := filepath.Join(dir, "sandbox.sh")
	prompt := filepath.Join(dir, "PROMPT.md")
	os.WriteFile(script, []byte("#!/bin/sh\nmine\n"), 0o755)
	os.WriteFile(prompt, []byte("my prompt\n"), 0o644)
	r = e.RunIn(dir, "init", "--with-sandbox", "--force")
	if r.Code != 0 || !strings.Contains(r.Stdout, "\nUpdated sandbox.sh\n") ||
		!strings.HasSuffix(r.Stdout, "swarm: PROMPT.md already exists, skipping\n") {
		t.Errorf("init --with-sandbox --force: %s", r)
	}
	if wkRead(t, script) == "#!/bin/sh\nmine\n" || wkRead(t, prompt) != "my prompt\n" {
		t.Errorf("--force: sandbox.sh replaced %v, PROMPT.md kept %v",
			wkRead(t, script) != "#!/bin/sh\nmine\n", wkRead(t, prompt) == "my prompt\n")
	}

	// without --with-sandbox, init leaves the kit alone
	os.Remove(script)
	e.RunIn(dir, "init")
	if wkExists(script) {
		t.Error("init without --with-sandbox wrote sandbox.sh")
	}
}
