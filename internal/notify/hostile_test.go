package notify

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/termtext"
)

// rawServer answers every request with the status line given, byte for
// byte (httptest cannot send a reason phrase of its own).
func rawServer(t *testing.T, status string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				_, _ = c.Write([]byte(status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Issue 27 item 26: a webhook's HTTP status text is the server's to
// write; what reaches the monitor's log (and a --foreground loop's
// terminal) is one line of printable text.
func TestWebhookStatusTextIsPlain(t *testing.T) {
	t.Parallel()
	url := rawServer(t, "HTTP/1.1 400 \x1b]52;c;aGVsbG8=\x07bad\x1b[2J request")
	var mu sync.Mutex
	var logs []string
	d := &Dispatcher{Backoff: time.Millisecond}
	code := 0
	d.Send([]Target{{Kind: Webhook, URL: url + "/hook"}}, Event{Event: "end", Worker: "w", ExitCode: &code}, func(s string) {
		mu.Lock()
		logs = append(logs, s)
		mu.Unlock()
	})
	if !d.Wait(10 * time.Second) {
		t.Fatal("Wait timed out")
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(logs, "\n")
	if !strings.Contains(all, "not delivered: HTTP 400") || strings.ContainsAny(all, "\x1b\x07") || termtext.Line(all) != strings.ReplaceAll(all, "\n", " ") {
		t.Errorf("log %q: want the status as plain text", logs)
	}
}

// Issue 27 item 26: notify-send reads its body as markup (Pango's: <a
// href>, <img src>, <b>); an agent's text in it is escaped, and a body
// starting with '-' is not an option.
func TestDesktopBodyIsNotMarkup(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "argv")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n--ARG--\\n' \"$a\"; done > '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, DesktopCommand), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	ev := Event{Event: "pause", Worker: "w", ExitDetail: `--icon=/etc/passwd <a href="file:///etc">x</a> & <img src="/x"/>`}
	if _, err := desktop(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(data), "\n--ARG--\n"), "\n--ARG--\n")
	want := []string{"--", "swarm: w paused", `--icon=/etc/passwd &lt;a href="file:///etc"&gt;x&lt;/a&gt; &amp; &lt;img src="/x"/&gt;`}
	if strings.Join(args, "|") != strings.Join(want, "|") {
		t.Errorf("notify-send got %q, want %q", args, want)
	}
}
