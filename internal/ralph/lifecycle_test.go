package ralph

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux/tmuxtest"
)

// hookServer is an HTTP server on 127.0.0.1 that keeps every request it
// gets: the webhook's JSON events, and ntfy's plain messages.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	events []map[string]any
	ntfy   []string
}

func newHookServer(t *testing.T) *hookServer {
	h := &hookServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.URL.Path == "/ntfy" {
			h.ntfy = append(h.ntfy, r.Header.Get("Title")+"|"+string(body))
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		h.events = append(h.events, ev)
	}))
	t.Cleanup(h.Close)
	return h
}

// kinds lists the events received, as "event/exit_reason".
func (h *hookServer) kinds() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.events {
		out = append(out, ev["event"].(string)+"/"+ev["exit_reason"].(string))
	}
	return strings.Join(out, " ")
}

// TestNotificationsOfEachEvent (issue 19, item 4): a loop with
// --notify=webhook:URL (and ntfy:URL in config.json) tells the server on
// 127.0.0.1 of each event exactly once: a usage limit waited out and the
// end (complete); a pause at a dialog and the end (killed); an end at a
// pre-flight dialog (preflight_failed). The end carries the hooks'
// fields.
func TestNotificationsOfEachEvent(t *testing.T) {
	t.Run("limit then complete", func(t *testing.T) {
		h := newHookServer(t)
		reset := time.Now().Add(500 * time.Millisecond).Add(-limitSlack)
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			if msg == DefaultLimitMessage {
				p.SetScreen(claudeScreen("● Done.\n<promise>COMPLETE</promise>\n✻ Worked for 1s\n", "? for shortcuts"))
				p.Print("<promise>COMPLETE</promise>\n")
				return
			}
			p.SetScreen(claudeScreen("❯ "+firstLine(msg)+"\n● Claude AI usage limit reached|"+epoch(reset)+"\n", "? for shortcuts"))
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 5, InactivityTimeout: state.WholeSeconds{Duration: time.Second},
			NotifyTo: []string{"webhook:" + h.URL + "/hook"}}))
		cfg := `{"notify": "ntfy:` + h.URL + `/ntfy"}`
		if err := os.WriteFile(l.m.Store.ConfigPath(), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		l.expectEnd(0, ReasonComplete, 1)
		if !WaitNotifications(20 * time.Second) {
			t.Fatal("notifications still under way")
		}
		if got := h.kinds(); got != "limit/ end/complete" {
			t.Errorf("webhook got %q, want the limit and the end once each", got)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		end := h.events[len(h.events)-1]
		if end["worker"] != "w" || end["exit_code"] != 0.0 || end["iterations"] != 1.0 {
			t.Errorf("end event %v", end)
		}
		if len(h.ntfy) != 2 || h.ntfy[1] != "swarm: w complete (exit 0)|after 1 iteration(s)" {
			t.Errorf("ntfy got %q", h.ntfy)
		}
		if !strings.Contains(l.out.String(), "notified webhook 127.0.0.1") {
			t.Errorf("deliveries not logged:\n%s", l.out)
		}
	})

	t.Run("pause at a dialog", func(t *testing.T) {
		h := newHookServer(t)
		agentCLI := claudeAgent(func(p *tmuxtest.Pane, run int, msg string) {
			p.SetScreen(claudePermission)
		})
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, InactivityTimeout: state.WholeSeconds{Duration: time.Second},
			NotifyTo: []string{"webhook:" + h.URL + "/hook"}}))
		go func() {
			waitFor(t, "the pause", func() bool { return l.state().Status == state.RalphPaused })
			l.e.RequestPause()
			markKilled(l.e.RS)
		}()
		l.run()
		WaitNotifications(20 * time.Second)
		if got := h.kinds(); got != "pause/ end/killed" {
			t.Errorf("webhook got %q, want the dialog's pause and the end once each", got)
		}
	})

	t.Run("preflight failed", func(t *testing.T) {
		h := newHookServer(t)
		agentCLI := &tmuxtest.Agent{Banner: "Accessing workspace:\n /p\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n Enter to confirm · Esc to cancel\n"}
		l := newFakeLoop(t, agentCLI, claudeOptions(Options{MaxIterations: 3, NotifyTo: []string{"webhook:" + h.URL + "/hook"}}))
		l.run()
		WaitNotifications(20 * time.Second)
		if got := h.kinds(); got != "end/preflight_failed" {
			t.Errorf("webhook got %q, want the pre-flight failure once", got)
		}
	})
}
