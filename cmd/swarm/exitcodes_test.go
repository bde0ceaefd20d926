package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docExit1 returns the messages docs/commands.md lists under "exit 1" in
// "Exit codes of errors", each as a pattern matching the start of a
// message (N, W and PATH stand for a name or path).
func docExit1(t *testing.T) []*regexp.Regexp {
	t.Helper()
	data, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Exit codes of errors\n")
	if !ok {
		t.Fatal(`docs/commands.md has no "## Exit codes of errors" section`)
	}
	_, bullet, ok := strings.Cut(section, "\n- **exit 1**")
	if !ok {
		t.Fatal(`"Exit codes of errors" has no "- **exit 1**" item`)
	}
	bullet, _, _ = strings.Cut(bullet, "\n- ")
	placeholder := regexp.MustCompile(`\b(N|W|PATH)\b`)
	var out []*regexp.Regexp
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(bullet, -1) {
		msg := strings.Join(strings.Fields(m[1]), " ") // the docs wrap lines
		out = append(out, regexp.MustCompile("^"+placeholder.ReplaceAllString(regexp.QuoteMeta(msg), `\S+`)))
	}
	return out
}

// The exit codes are the ones docs/commands.md gives: every bad command
// line of ipUsageCases that exits 2 says "(see: swarm CMD --help)", as
// the docs say of exit 2, and every one that exits 1 is a message the
// docs list under exit 1 (status's and peek's "not found", 2, are their
// own codes).
func TestExitCodesAsDocumented(t *testing.T) {
	t.Parallel()
	exit1 := docExit1(t)
	seeHelp := regexp.MustCompile(`\(see: swarm [^()]*--help\)$`)
	for _, c := range ipUsageCases {
		first, _, _ := strings.Cut(c.stderr, "\n")
		msg := strings.TrimPrefix(first, "swarm: error: ")
		switch {
		case c.code == 2 && (c.args[0] == "status" || c.args[0] == "peek") && strings.HasSuffix(msg, "not found"):
		case c.code == 2:
			if !seeHelp.MatchString(msg) {
				t.Errorf("swarm %q exits 2 but does not point to --help: %q", c.args, msg)
			}
		case c.code == 1:
			if seeHelp.MatchString(msg) {
				t.Errorf("swarm %q exits 1 but points to --help like a usage error: %q", c.args, msg)
			}
			listed := false
			for _, re := range exit1 {
				listed = listed || re.MatchString(msg)
			}
			if !listed {
				t.Errorf("swarm %q exits 1 with %q, which docs/commands.md does not list under exit 1", c.args, msg)
			}
		}
	}
}
