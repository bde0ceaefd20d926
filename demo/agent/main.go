// Command demo-agent stands in for an AI coding agent in swarm's demo
// (make demo): no API key, no network, and deterministic.
//
// Like a real agent CLI it shows a banner and an input prompt, takes the
// prompt typed into its terminal, then "works": it opens TASKS.md in its
// directory, picks the first unchecked item ("- [ ] ..."), prints some
// progress, checks the item off, reports the task with a promise tag and
// exits. When no item is left it prints <promise>COMPLETE</promise>, which
// ends the ralph loop. Each run is one iteration with a fresh "context":
// everything it knows comes from files.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

var unchecked = regexp.MustCompile(`(?m)^- \[ \] (.+)$`)

func main() {
	fmt.Println("Demo Agent v1.0 (no API key needed)")
	fmt.Print("> ")
	prompt := readPrompt()
	fmt.Printf("\ngot a prompt of %d lines\n", strings.Count(strings.TrimSpace(prompt), "\n")+1)

	data, err := os.ReadFile("TASKS.md")
	if err != nil {
		fmt.Println("<promise>BLOCKED:TASKS.md not found in", mustWd(), "</promise>")
		select {}
	}
	m := unchecked.FindSubmatchIndex(data)
	if m == nil {
		fmt.Println("every task in TASKS.md is checked off")
		fmt.Println("<promise>COMPLETE</promise>")
		select {} // stay at the prompt, as an interactive agent does
	}
	task := string(data[m[2]:m[3]])
	fmt.Println("working on:", task)
	for _, step := range []string{"reading the code", "making the change", "running the tests"} {
		time.Sleep(700 * time.Millisecond)
		fmt.Println("  ...", step)
	}
	done := append(append(append([]byte{}, data[:m[0]]...), []byte("- [x] "+task)...), data[m[1]:]...)
	if err := os.WriteFile("TASKS.md", done, 0o644); err != nil {
		fmt.Println("<promise>BLOCKED:cannot write TASKS.md:", err, "</promise>")
		select {}
	}
	fmt.Printf("checked off: %s\n", task)
	id := strings.Count(string(done[:m[0]]), "- [x]") + 1
	fmt.Printf("<promise>TASK-%d:DONE</promise>\n", id)
	if !unchecked.Match(done) {
		fmt.Println("that was the last task")
		fmt.Println("<promise>COMPLETE</promise>")
		select {}
	}
	// Exit: the loop starts the next iteration with a fresh agent.
}

// readPrompt reads the typed prompt: lines until the input pauses (a paste
// arrives as a burst of lines followed by Enter).
func readPrompt() string {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var b strings.Builder
	b.WriteString(<-lines)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return b.String()
			}
			b.WriteString("\n" + l)
		case <-time.After(400 * time.Millisecond):
			return b.String()
		}
	}
}

func mustWd() string {
	wd, _ := os.Getwd()
	return wd
}
