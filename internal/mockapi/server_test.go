package mockapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start runs a server for the test and closes it at cleanup.
func start(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	s := New(replies...)
	s.Logf = t.Logf
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// turnBody is a request body that offers a tool, so it counts as a turn.
func turnBody(stream bool, userContent string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "claude-test", "max_tokens": 100, "stream": stream,
		"messages": json.RawMessage(userContent),
		"tools":    []map[string]any{{"name": "Bash", "input_schema": map[string]any{"type": "object"}}},
	})
	return string(b)
}

func post(t *testing.T, ctx context.Context, url, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type event struct {
	name string
	data map[string]any
}

// readSSE parses a text/event-stream body into events.
func readSSE(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
		case line == "":
			if cur.name != "" {
				if cur.data["type"] != cur.name {
					t.Errorf("event %s has data type %v", cur.name, cur.data["type"])
				}
				out = append(out, cur)
			}
			cur = event{}
		}
	}
	return out
}

func names(evs []event) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.name)
	}
	return strings.Join(n, ",")
}

// deltas joins the text (or partial JSON) of the deltas of block i.
func deltas(evs []event, i int) string {
	var sb strings.Builder
	for _, e := range evs {
		if e.name != "content_block_delta" || int(e.data["index"].(float64)) != i {
			continue
		}
		d := e.data["delta"].(map[string]any)
		switch d["type"] {
		case "text_delta":
			sb.WriteString(d["text"].(string))
		case "input_json_delta":
			sb.WriteString(d["partial_json"].(string))
		}
	}
	return sb.String()
}

func TestStreamingText(t *testing.T) {
	s := start(t, Text("Hello from the mock, ünïcode included."))
	resp := post(t, context.Background(), s.URL, "/v1/messages",
		turnBody(true, `[{"role":"user","content":"say hi"}]`))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("content-type"), "text/event-stream") {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
	}
	evs := readSSE(t, resp.Body)
	want := "message_start,ping,content_block_start,content_block_delta,content_block_delta," +
		"content_block_delta,content_block_stop,message_delta,message_stop"
	if got := names(evs); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	msg := evs[0].data["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["model"] != "claude-test" || msg["stop_reason"] != nil ||
		len(msg["content"].([]any)) != 0 || !strings.HasPrefix(msg["id"].(string), "msg_") {
		t.Errorf("message_start: %v", msg)
	}
	if cb := evs[2].data["content_block"].(map[string]any); cb["type"] != "text" || cb["text"] != "" {
		t.Errorf("content_block_start: %v", cb)
	}
	if got := deltas(evs, 0); got != "Hello from the mock, ünïcode included." {
		t.Errorf("text %q", got)
	}
	md := evs[7].data
	if md["delta"].(map[string]any)["stop_reason"] != "end_turn" || md["usage"].(map[string]any)["output_tokens"] == nil {
		t.Errorf("message_delta: %v", md)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || !reqs[0].Turn || reqs[0].UserText() != "say hi" || reqs[0].Status != 200 {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestToolUseThenResult(t *testing.T) {
	s := start(t, Bash("touch made.txt"), Text("done"))
	resp := post(t, context.Background(), s.URL, "/v1/messages",
		turnBody(true, `[{"role":"user","content":[{"type":"text","text":"make it"}]}]`))
	evs := readSSE(t, resp.Body)
	cb := evs[2].data["content_block"].(map[string]any)
	if cb["type"] != "tool_use" || cb["name"] != "Bash" || !strings.HasPrefix(cb["id"].(string), "toolu_") {
		t.Fatalf("content_block_start: %v", cb)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(deltas(evs, 0)), &input); err != nil || input["command"] != "touch made.txt" {
		t.Fatalf("tool input %q: %v", deltas(evs, 0), err)
	}
	if sr := evs[len(evs)-2].data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason %v", sr)
	}
	id := cb["id"].(string)
	resp = post(t, context.Background(), s.URL, "/v1/messages", turnBody(false,
		`[{"role":"user","content":"make it"},{"role":"assistant","content":[{"type":"tool_use","id":"`+id+
			`","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+
			`","content":"ok"}]}]`))
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text string }
		Usage      struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "done" {
		t.Errorf("non-streaming answer %+v", msg)
	}
	tr := s.Requests()[1].ToolResults()
	if len(tr) != 1 || tr[0].ToolUseID != id || tr[0].ResultText() != "ok" {
		t.Errorf("tool results %+v", tr)
	}
}

func TestErrors(t *testing.T) {
	resets := time.Unix(1900000000, 0)
	s := start(t, RateLimit(3*time.Second).Repeat(2), Overloaded(), UsageLimit("five_hour", resets),
		APIError(400, "invalid_request_error", "bad"))
	cases := []struct {
		status      int
		errType     string
		header, val string
	}{
		{429, "rate_limit_error", "retry-after", "3"},
		{429, "rate_limit_error", "retry-after", "3"},
		{529, "overloaded_error", "", ""},
		{429, "rate_limit_error", "anthropic-ratelimit-unified-reset", "1900000000"},
		{400, "invalid_request_error", "", ""},
		{200, "", "", ""}, // script used up: Default
	}
	for i, c := range cases {
		resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"x"}]`))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status {
			t.Fatalf("%d: status %d, want %d: %s", i, resp.StatusCode, c.status, body)
		}
		if c.header != "" && resp.Header.Get(c.header) != c.val {
			t.Errorf("%d: %s = %q, want %q", i, c.header, resp.Header.Get(c.header), c.val)
		}
		if c.errType == "" {
			continue
		}
		var e struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != c.errType || e.Error.Message == "" {
			t.Errorf("%d: body %s", i, body)
		}
	}
}

func TestUsageLimitHeaders(t *testing.T) {
	h := UsageLimit("", time.Unix(100, 0)).Header
	if h.Get("anthropic-ratelimit-unified-status") != "rejected" || h.Get("anthropic-ratelimit-unified-overage-status") != "rejected" ||
		h.Get("anthropic-ratelimit-unified-representative-claim") != "" {
		t.Errorf("no claim: %v", h)
	}
	h = UsageLimit("seven_day", time.Unix(100, 0)).Header
	if h.Get("anthropic-ratelimit-unified-representative-claim") != "seven_day" || h.Get("anthropic-ratelimit-unified-overage-status") != "" {
		t.Errorf("claim: %v", h)
	}
}

func TestSideRequestsAndOtherEndpoints(t *testing.T) {
	s := start(t, Text("turn answer"))
	// A title request: no tools, structured output.
	title := `{"model":"claude-haiku","max_tokens":32000,"messages":[{"role":"user","content":"x"}],` +
		`"output_config":{"format":{"type":"json_schema","schema":{"type":"object",` +
		`"properties":{"title":{"type":"string"}},"required":["title"]}}}}`
	resp := post(t, context.Background(), s.URL, "/v1/messages", title)
	var msg struct{ Content []struct{ Text string } }
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != `{"title":"Mock title"}` {
		t.Errorf("title answer %+v %v", msg, err)
	}
	resp = post(t, context.Background(), s.URL, "/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	var ct map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || resp.StatusCode != 200 || ct["input_tokens"] <= 0 {
		t.Errorf("count_tokens %d %v %v", resp.StatusCode, ct, err)
	}
	resp = post(t, context.Background(), s.URL, "/v1/other", `{}`)
	if resp.StatusCode != 404 {
		t.Errorf("unknown endpoint: %d", resp.StatusCode)
	}
	head, err := http.Head(s.URL + "/")
	if err != nil || head.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", head, err)
	}
	head.Body.Close()
	if s.Pending() != 1 || len(s.Turns()) != 0 || len(s.Requests()) != 4 {
		t.Errorf("side requests consumed the script: pending %d, turns %d, requests %d",
			s.Pending(), len(s.Turns()), len(s.Requests()))
	}
	if r := s.Requests()[2]; r.Path != "/v1/other" || r.Status != 404 || string(r.Body) != "{}" {
		t.Errorf("unknown request recorded as %+v", r)
	}
}

func TestScriptFunction(t *testing.T) {
	s := start(t, Text("from queue"))
	s.Script = func(r Request) (Reply, bool) {
		if strings.Contains(r.UserText(), "ping") {
			return Text("pong"), true
		}
		return Reply{}, false
	}
	for _, c := range []struct{ in, want string }{{"ping", "pong"}, {"other", "from queue"}, {"other", "OK"}} {
		resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"`+c.in+`"}]`))
		var msg struct{ Content []struct{ Text string } }
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Content[0].Text != c.want {
			t.Errorf("%s: got %+v, want %s", c.in, msg, c.want)
		}
	}
}

func TestHangEndsWhenClientGoesAway(t *testing.T) {
	s := start(t, Hang(), Text("after"))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages",
			strings.NewReader(turnBody(true, `[{"role":"user","content":"x"}]`)))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	if !s.WaitFor(10*time.Second, func(rs []Request) bool { return len(rs) == 1 }) {
		t.Fatal("request not recorded")
	}
	// Another request is answered while the hang stays open.
	resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"y"}]`))
	if resp.StatusCode != 200 {
		t.Fatalf("second request: %d", resp.StatusCode)
	}
	select {
	case err := <-errc:
		t.Fatalf("hang answered: %v", err)
	default:
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled request succeeded")
	}
	if !s.WaitFor(10*time.Second, func(rs []Request) bool { return !rs[0].End.IsZero() && rs[0].Status == 0 }) {
		t.Errorf("after hang: %+v pending %d", s.Requests(), s.Pending())
	}
}

func TestCloseEndsHang(t *testing.T) {
	s := New(Hang())
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Post(s.URL+"/v1/messages", "application/json",
			strings.NewReader(turnBody(false, `[{"role":"user","content":"x"}]`)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	s.WaitFor(10*time.Second, func(rs []Request) bool { return len(rs) == 1 })
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on a hanging request")
	}
	<-done
	s.Close() // idempotent
}

func TestSlowStreamAndRepeatForever(t *testing.T) {
	s := start(t, Text("slow").Slow(20*time.Millisecond), Overloaded().Repeat(-1))
	began := time.Now()
	resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(true, `[{"role":"user","content":"x"}]`))
	evs := readSSE(t, resp.Body)
	if d := time.Since(began); d < time.Duration(len(evs)-1)*20*time.Millisecond {
		t.Errorf("%d events in %v: not paced", len(evs), d)
	}
	for range 3 {
		resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"x"}]`))
		if resp.StatusCode != 529 {
			t.Fatalf("status %d, want 529 for ever", resp.StatusCode)
		}
	}
}

// Think holds the first byte back for its time (the agent's spinner runs
// meanwhile), then answers as usual.
func TestThinkDelaysTheFirstByte(t *testing.T) {
	const think = 300 * time.Millisecond
	s := start(t, Text("after thought").Think(think))
	began := time.Now()
	resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"x"}]`))
	body, _ := io.ReadAll(resp.Body)
	if d := time.Since(began); d < think || resp.StatusCode != 200 || !strings.Contains(string(body), "after thought") {
		t.Fatalf("status %d after %v: %s", resp.StatusCode, d, body)
	}
}

// A reply's usage is what the answer reports, streamed (message_start's
// input and cache counts, message_delta's output) and not: the agent
// prices a turn from it.
func TestReplyUsage(t *testing.T) {
	u := Usage{Input: 4000, Output: 120, CacheRead: 30000, CacheCreation: 500}
	s := start(t, Text("priced").WithUsage(u), Text("default"))
	evs := readSSE(t, post(t, context.Background(), s.URL, "/v1/messages", turnBody(true, `[{"role":"user","content":"hi"}]`)).Body)
	start := evs[0].data["message"].(map[string]any)["usage"].(map[string]any)
	if start["input_tokens"] != float64(4000) || start["cache_read_input_tokens"] != float64(30000) || start["cache_creation_input_tokens"] != float64(500) {
		t.Errorf("message_start usage %v", start)
	}
	if out := evs[len(evs)-2].data["usage"].(map[string]any)["output_tokens"]; out != float64(120) {
		t.Errorf("message_delta output tokens %v", out)
	}
	resp := post(t, context.Background(), s.URL, "/v1/messages", turnBody(false, `[{"role":"user","content":"hi"}]`))
	var msg map[string]any
	json.NewDecoder(resp.Body).Decode(&msg)
	if in := msg["usage"].(map[string]any)["input_tokens"].(float64); in <= 0 || in == 4000 {
		t.Errorf("default usage: input tokens %v, want the body's length / 4", in)
	}
}
