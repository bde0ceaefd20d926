package templates

import (
	"strings"
	"testing"
)

// Every ralph template has its line in template --list, and that line
// says whether the template asks for the completion signal.
func TestRalphSummaries(t *testing.T) {
	for _, name := range RalphNames() {
		t.Run(name, func(t *testing.T) {
			text, err := Ralph(name)
			if err != nil {
				t.Fatal(err)
			}
			sum := RalphSummary(name)
			if sum == "" {
				t.Fatal("no summary for template --list")
			}
			noSignal := strings.HasSuffix(sum, "no completion signal")
			if HasCompletionSignal(text) == noSignal {
				t.Errorf("summary %q, but HasCompletionSignal = %v", sum, HasCompletionSignal(text))
			}
		})
	}
}
