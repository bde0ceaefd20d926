// Package notify tells a person what a loop did, wherever they are: a
// desktop notification (notify-send), a webhook (a POST of the event as
// JSON, the fields the loop's hooks get), or an ntfy topic (ntfy.sh or a
// server of your own: a plain POST that reaches a phone).
//
// Deliveries never hold the loop up: each runs in a goroutine of its own,
// is tried a few times with a growing pause, and says how it went through
// the log function it is given. Wait lets a process that is about to exit
// (the loop's monitor) give the deliveries still under way a bounded time
// to finish.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/termtext"
)

// Kinds of target.
const (
	Desktop = "desktop"
	Webhook = "webhook"
	Ntfy    = "ntfy"
)

// DesktopCommand is the program a desktop notification runs.
const DesktopCommand = "notify-send"

// Target is where notifications go.
type Target struct {
	Kind string
	URL  string // webhook and ntfy
}

// Parse reads a target: "desktop", "webhook:URL" or "ntfy:URL" (an
// http or https URL; for ntfy the topic's, https://ntfy.sh/TOPIC).
func Parse(s string) (Target, error) {
	if s == Desktop {
		return Target{Kind: Desktop}, nil
	}
	kind, raw, ok := strings.Cut(s, ":")
	if !ok || (kind != Webhook && kind != Ntfy) {
		return Target{}, fmt.Errorf("unknown notification target '%s' (use desktop, webhook:URL or ntfy:URL)", termtext.Line(s))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("invalid %s URL '%s' (use an http:// or https:// URL)", kind, termtext.Line(raw))
	}
	return Target{Kind: kind, URL: raw}, nil
}

// ParseAll parses every target, dropping repeats.
func ParseAll(specs []string) ([]Target, error) {
	var out []Target
	for _, s := range specs {
		t, err := Parse(s)
		if err != nil {
			return nil, err
		}
		if !contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func contains(ts []Target, t Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// String is the target as Parse reads it.
func (t Target) String() string {
	if t.Kind == Desktop {
		return Desktop
	}
	return t.Kind + ":" + t.URL
}

// Name says where the target goes without its path or query, which may
// hold a secret (an ntfy topic, a webhook's token): for the log.
func (t Target) Name() string {
	if t.Kind == Desktop {
		return Desktop
	}
	host := "?"
	if u, err := url.Parse(t.URL); err == nil {
		host = u.Host
	}
	return t.Kind + " " + host
}

// Event is what happened, as a webhook receives it: the fields (and, for
// an end, the values) the loop's on-exit hooks get in their environment.
type Event struct {
	// Event is "end" (the loop ended), "pause" (it paused itself: a
	// dialog, an agent's WAIT file, a stop of its monitor) or "limit"
	// (it waits out a usage limit).
	Event      string `json:"event"`
	Worker     string `json:"worker"`
	ExitReason string `json:"exit_reason"`
	// ExitCode is the loop's exit code, for an end (null otherwise).
	ExitCode   *int   `json:"exit_code"`
	ExitDetail string `json:"exit_detail"`
	Iterations int    `json:"iterations"`
	// Merge says what --on-complete merge did, when it ran.
	Merge string `json:"merge,omitempty"`
}

// Title and Body are the event in words, for a desktop notification and
// an ntfy message.
func (e Event) Title() string {
	switch e.Event {
	case "end":
		code := 0
		if e.ExitCode != nil {
			code = *e.ExitCode
		}
		return fmt.Sprintf("swarm: %s %s (exit %d)", e.Worker, e.ExitReason, code)
	case "limit":
		return fmt.Sprintf("swarm: %s waits out a usage limit", e.Worker)
	}
	return fmt.Sprintf("swarm: %s paused", e.Worker)
}

func (e Event) Body() string {
	body := e.ExitDetail
	if e.Event == "end" {
		body = fmt.Sprintf("after %d iteration(s)", e.Iterations)
		if e.ExitDetail != "" {
			body += ": " + e.ExitDetail
		}
	}
	if e.Merge != "" {
		body += "\n" + e.Merge
	}
	return body
}

// Delivery timings.
const (
	// Attempts is how many times a delivery is tried.
	Attempts = 4
	// FirstBackoff is the pause after the first failed attempt; it
	// doubles after each.
	FirstBackoff = time.Second
	// AttemptTimeout bounds one attempt: a server that does not answer
	// is tried again, not waited for.
	AttemptTimeout = 10 * time.Second
	// Drain is how long a monitor that ends waits for the deliveries
	// under way: enough for every attempt of one (4 x 10 s, 1+2+4 s).
	Drain = 50 * time.Second
)

// Dispatcher delivers events in the background.
type Dispatcher struct {
	// Backoff is the pause after the first failed attempt (0:
	// FirstBackoff); tests shorten it.
	Backoff time.Duration
	// Client sends the HTTP requests (nil: one with AttemptTimeout).
	Client *http.Client
	wg     sync.WaitGroup
}

// Send delivers ev to every target, each in a goroutine of its own, and
// returns at once. log hears how each delivery went.
func (d *Dispatcher) Send(targets []Target, ev Event, log func(string)) {
	for _, t := range targets {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.deliver(t, ev, log)
		}()
	}
}

// Wait waits until every delivery sent has ended, or timeout; it reports
// whether they all did.
func (d *Dispatcher) Wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// deliver tries one delivery up to Attempts times, pausing between tries
// (doubling), and logs its outcome. An answer that trying again cannot
// change (a 4xx other than 429) ends it at once.
func (d *Dispatcher) deliver(t Target, ev Event, log func(string)) {
	pause := d.Backoff
	if pause <= 0 {
		pause = FirstBackoff
	}
	var err error
	for i := 1; i <= Attempts; i++ {
		var final bool
		if final, err = d.once(t, ev); err == nil {
			log(fmt.Sprintf("notified %s of %s", t.Name(), ev.Event))
			return
		}
		if final || i == Attempts {
			break
		}
		log(fmt.Sprintf("notification to %s failed (attempt %d/%d): %v; trying again in %s", t.Name(), i, Attempts, err, pause))
		clock.Real.Sleep(context.Background(), pause)
		pause *= 2
	}
	log(fmt.Sprintf("notification to %s of %s not delivered: %v", t.Name(), ev.Event, err))
}

// once makes one attempt; final is set when another could not succeed.
func (d *Dispatcher) once(t Target, ev Event) (final bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), AttemptTimeout)
	defer cancel()
	switch t.Kind {
	case Desktop:
		return desktop(ctx, ev)
	case Webhook:
		body, err := json.Marshal(ev)
		if err != nil {
			return true, err
		}
		return d.post(ctx, t.URL, "application/json", body, nil)
	case Ntfy:
		return d.post(ctx, t.URL, "text/plain; charset=utf-8", []byte(ev.Body()), map[string]string{"Title": headerText(ev.Title())})
	}
	return true, fmt.Errorf("unknown target kind %q", t.Kind)
}

// desktop runs notify-send; a missing one is final (spawn warned).
func desktop(ctx context.Context, ev Event) (bool, error) {
	bin, err := exec.LookPath(DesktopCommand)
	if err != nil {
		return true, fmt.Errorf("%s is not installed", DesktopCommand)
	}
	// "--": a body (an agent's reason) starting with '-' is no option.
	cmd := exec.CommandContext(ctx, bin, "--", termtext.Line(ev.Title()), desktopBody(ev.Body()))
	cmd.WaitDelay = time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("%w: %s", err, termtext.Line(strings.TrimSpace(string(out))))
	}
	return false, nil
}

// desktopBody is body for notify-send, which reads its body as markup
// (Pango's: <a href>, <img src>, <b>, entities): each line printable
// text, and &, < and > escaped, so an agent's text shows as written and
// names no link or image.
func desktopBody(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = termtext.Line(l)
	}
	return markupEscaper.Replace(strings.Join(lines, "\n"))
}

var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// statusText is an HTTP answer's status line as printed: the server
// writes its reason phrase, so it is made one line of printable text,
// and cut short.
func statusText(status string) string {
	s := termtext.Line(status)
	if r := []rune(s); len(r) > maxStatusText {
		s = string(r[:maxStatusText]) + "..."
	}
	return s
}

// maxStatusText bounds the status text a log line quotes.
const maxStatusText = 80

// post sends one POST and judges the answer.
func (d *Dispatcher) post(ctx context.Context, u, ctype string, body []byte, headers map[string]string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return true, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "swarm")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := d.Client
	if client == nil {
		client = &http.Client{Timeout: AttemptTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may hold a secret: not in the log
		}
		// It may quote what the server sent (a malformed answer).
		return false, errors.New(termtext.Line(err.Error()))
	}
	_ = resp.Body.Close() // only the status is read: a failed close costs a connection, not the delivery
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return false, fmt.Errorf("HTTP %s", statusText(resp.Status))
	}
	return true, fmt.Errorf("HTTP %s", statusText(resp.Status))
}

// headerText makes s fit an HTTP header: one printable line, and words
// outside ASCII in RFC 2047's encoding (which ntfy reads).
func headerText(s string) string {
	s = termtext.Line(s)
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}
