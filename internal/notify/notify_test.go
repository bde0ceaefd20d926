package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{"desktop", "desktop", ""},
		{"webhook:https://example.com/hook?t=1", "webhook:https://example.com/hook?t=1", ""},
		{"ntfy:https://ntfy.sh/my-topic", "ntfy:https://ntfy.sh/my-topic", ""},
		{"ntfy:http://127.0.0.1:8080/t", "ntfy:http://127.0.0.1:8080/t", ""},
		{"email:me@example.com", "", "unknown notification target 'email:me@example.com' (use desktop, webhook:URL or ntfy:URL)"},
		{"webhook:ftp://example.com", "", "invalid webhook URL 'ftp://example.com' (use an http:// or https:// URL)"},
		{"ntfy:topic", "", "invalid ntfy URL 'topic' (use an http:// or https:// URL)"},
		{"", "", "unknown notification target '' (use desktop, webhook:URL or ntfy:URL)"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("Parse(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("Parse(%q) = %v, %v", c.in, got, err)
		}
	}
	ts, err := ParseAll([]string{"desktop", "ntfy:https://ntfy.sh/a", "desktop"})
	if err != nil || len(ts) != 2 {
		t.Errorf("ParseAll dropped no repeat: %v %v", ts, err)
	}
	if n := (Target{Kind: Ntfy, URL: "https://ntfy.sh/secret-topic"}).Name(); n != "ntfy ntfy.sh" {
		t.Errorf("Name = %q (the topic must not be logged)", n)
	}
}

// recorder is an HTTP server that answers each request with the next
// status of its script (then 200), and keeps what it got.
type recorder struct {
	mu      sync.Mutex
	script  []int
	bodies  []string
	headers []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, string(body))
	r.headers = append(r.headers, req.Header.Clone())
	status := http.StatusOK
	if len(r.script) > 0 {
		status, r.script = r.script[0], r.script[1:]
	}
	w.WriteHeader(status)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// TestDelivery: a webhook gets the event as JSON; a server error is tried
// again (pausing), a 4xx is not; ntfy gets the words with a Title header;
// each outcome is logged, and Wait waits for them.
func TestDelivery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		kind     string
		script   []int
		requests int
		logged   string
	}{
		{"webhook", Webhook, nil, 1, "notified webhook 127.0.0.1"},
		{"retried", Webhook, []int{500, 429}, 3, "notified webhook 127.0.0.1"},
		{"not retried", Webhook, []int{404}, 1, "not delivered: HTTP 404 Not Found"},
		{"given up", Webhook, []int{503, 503, 503, 503, 503}, Attempts, "not delivered: HTTP 503"},
		{"ntfy", Ntfy, nil, 1, "notified ntfy 127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{script: c.script}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			var mu sync.Mutex
			var logs []string
			d := &Dispatcher{Backoff: time.Millisecond}
			code := 0
			ev := Event{Event: "end", Worker: "w", ExitReason: "complete", ExitCode: &code, ExitDetail: "done", Iterations: 3}
			d.Send([]Target{{Kind: c.kind, URL: srv.URL + "/topic"}}, ev, func(s string) {
				mu.Lock()
				logs = append(logs, s)
				mu.Unlock()
			})
			if !d.Wait(10 * time.Second) {
				t.Fatal("Wait timed out")
			}
			bodies := rec.got()
			if len(bodies) != c.requests {
				t.Errorf("%d requests, want %d", len(bodies), c.requests)
			}
			mu.Lock()
			last := logs[len(logs)-1]
			mu.Unlock()
			if !strings.Contains(last, c.logged) || strings.Contains(strings.Join(logs, "\n"), "/topic") {
				t.Errorf("log %q, want %q (and no URL path)", logs, c.logged)
			}
			switch c.kind {
			case Webhook:
				var got map[string]any
				if err := json.Unmarshal([]byte(bodies[0]), &got); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"event": "end", "worker": "w", "exit_reason": "complete", "exit_code": 0.0, "exit_detail": "done", "iterations": 3.0}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("webhook %s = %v, want %v", k, got[k], v)
					}
				}
			case Ntfy:
				if bodies[0] != "after 3 iteration(s): done" || rec.headers[0].Get("Title") != "swarm: w complete (exit 0)" {
					t.Errorf("ntfy got %q with title %q", bodies[0], rec.headers[0].Get("Title"))
				}
			}
		})
	}
}

func TestHeaderText(t *testing.T) {
	t.Parallel()
	if got := headerText("a\nb"); got != "a b" {
		t.Errorf("headerText = %q", got)
	}
	if got := headerText("ünïcode"); !strings.HasPrefix(got, "=?utf-8?q?") {
		t.Errorf("headerText = %q, want RFC 2047", got)
	}
}
