package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const section = Heading + "\n\nuse swarm\n"

func TestApplyLifecycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "AGENTS.md")
	if DefaultFile(dir) != path {
		t.Errorf("DefaultFile = %s", DefaultFile(dir))
	}
	if o, err := Apply(path, section, false); err != nil || o != Created {
		t.Fatalf("create: %v %v", o, err)
	}
	if o, _ := Apply(path, section, false); o != Present {
		t.Fatalf("second apply: %v", o)
	}
	if o, _ := Apply(path, strings.Replace(section, "use swarm", "use swarm v2", 1), true); o != Updated {
		t.Fatalf("force: %v", o)
	}
	data, _ := os.ReadFile(path)
	if strings.Count(string(data), Heading) != 1 || !strings.Contains(string(data), "v2") {
		t.Errorf("content:\n%s", data)
	}
}

func TestAddAndReplaceKeepOtherSections(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "CLAUDE.md")
	os.WriteFile(path, []byte("# Project\n\nrules"), 0o644)
	if DefaultFile(dir) != path {
		t.Errorf("DefaultFile = %s", DefaultFile(dir))
	}
	if o, _ := Apply(path, section, false); o != Added {
		t.Fatalf("add: %v", o)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "# Project\n\nrules\n\n"+section {
		t.Errorf("added:\n%q", data)
	}
	os.WriteFile(path, []byte("# P\n"+section+"old line\n## Next\nkeep\n"), 0o644)
	Apply(path, section, true)
	data, _ = os.ReadFile(path)
	if strings.Contains(string(data), "old line") || !strings.Contains(string(data), "## Next\nkeep") {
		t.Errorf("replaced:\n%s", data)
	}
}
