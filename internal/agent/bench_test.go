package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkJudge judges every fixture screen (testdata, the captured
// sequences split into their screens) with its agent's profile, with the
// profile's prefilters (internal/prefilter) and without them (plain: every
// pattern runs on every line). The figures are in docs/development.md.
func BenchmarkJudge(b *testing.B) {
	type job struct {
		p      *Profile
		screen string
	}
	var jobs []job
	for dir, name := range map[string]string{"claude-code-2.1.197": "claude", "codex": "codex", "gemini": "gemini", "aider": "aider", "opencode": "opencode"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
		if err != nil || len(files) == 0 {
			b.Fatalf("no screens in testdata/%s: %v", dir, err)
		}
		p, _ := Lookup(name)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range strings.Split(string(data), "=== t=") {
				jobs = append(jobs, job{p, s})
			}
		}
	}
	for _, mode := range []string{"prefilter", "plain"} {
		b.Run(mode, func(b *testing.B) {
			run := make([]job, len(jobs))
			for i, j := range jobs {
				run[i] = j
				if mode == "plain" {
					plain := *j.p
					plain.filters = nil // a nil set runs every pattern
					run[i].p = &plain
				}
			}
			for b.Loop() {
				for _, j := range run {
					j.p.Judge(j.screen, now)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(run)), "µs/screen")
		})
	}
}
