package main

// The root builds only the command a command line names (newCmdRoot):
// these tests hold that tree to the whole one.

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTopCommandsAreTheTree: topCommands names every command of the
// whole tree by its name and aliases, and nothing else.
func TestTopCommandsAreTheTree(t *testing.T) {
	t.Parallel()
	root := newCmdRoot(newFactory(&IO{}, t.TempDir()), nil)
	var built, listed []string
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" { // cobra's own
			continue
		}
		built = append(built, strings.Join(append([]string{c.Name()}, c.Aliases...), ","))
	}
	for _, c := range topCommands() {
		listed = append(listed, strings.Join(c.names, ","))
		if got := c.build(newFactory(&IO{}, t.TempDir())).Name(); got != c.names[0] {
			t.Errorf("topCommands entry %q builds the command %q", c.names[0], got)
		}
	}
	sort.Strings(built)
	sort.Strings(listed)
	if !slices.Equal(built, listed) {
		t.Errorf("topCommands names\n  %q\nthe tree has\n  %q", listed, built)
	}
}

func TestCommandsReached(t *testing.T) {
	t.Parallel()
	all := len(topCommands())
	for _, tc := range []struct {
		args []string
		want []string // nil: all
	}{
		{[]string{"ls"}, []string{"ls"}},
		{[]string{"list", "--format", "json"}, []string{"ls"}},
		{[]string{"ralph", "status", "x"}, []string{"ralph"}},
		{[]string{"spawn", "--help"}, []string{"spawn"}},
		{[]string{eventCommand, "--events", "f"}, []string{eventCommand}},
		{[]string{"--version"}, []string{}},
		{[]string{"-v"}, []string{}},
		{nil, nil},
		{[]string{}, nil},
		{[]string{"--help"}, nil},
		{[]string{"-h", "ls"}, nil},
		{[]string{"--version", "--help"}, nil},
		{[]string{"help", "ls"}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{"__complete", "l"}, nil},
		{[]string{"spwan"}, nil},
		{[]string{"--bogus"}, nil},
		{[]string{"--", "ls"}, nil},
		{[]string{"-"}, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got []string
			reached, every := commandsReached(tc.args)
			for _, c := range reached {
				got = append(got, c.names[0])
			}
			if every != (tc.want == nil) {
				t.Errorf("all: %v, want %v", every, tc.want == nil)
			}
			if tc.want == nil {
				if len(got) != all {
					t.Errorf("reached %q, want all %d commands", got, all)
				}
				return
			}
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("reached %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOneCommandTreeAnswersAsTheWhole runs every command's help and a
// usage error on the tree its command line builds and on the whole tree:
// the same output and exit code.
func TestOneCommandTreeAnswersAsTheWhole(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var paths [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			paths = append(paths, strings.Fields(strings.TrimPrefix(sub.CommandPath(), "swarm ")))
			walk(sub)
		}
	}
	walk(newCmdRoot(newFactory(&IO{}, home), nil))
	if len(paths) < 50 {
		t.Fatalf("walked %d commands, expected the whole tree", len(paths))
	}
	run := func(whole bool, args []string) ipResult {
		var out, errb bytes.Buffer
		streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
		built := args
		if whole {
			built = nil
		}
		code := runCommand(streams, newCmdRoot(newFactory(streams, home), built), args)
		return ipResult{code: code, stdout: out.String(), stderr: errb.String()}
	}
	for _, p := range paths {
		for _, args := range [][]string{append(slices.Clone(p), "--help"), append(slices.Clone(p), "--no-such-flag")} {
			got, want := run(false, args), run(true, args)
			if got != want {
				t.Errorf("swarm %q on its own tree: exit %d\n%s%s\non the whole tree: exit %d\n%s%s", args, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
		}
	}
}
