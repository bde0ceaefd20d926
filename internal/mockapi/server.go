// Package mockapi is a scripted mock of the Anthropic Messages API on
// 127.0.0.1, for tests that drive a real agent CLI (Claude Code) without
// the network; it also answers OpenAI's Responses API (POST
// /v1/responses, what the Codex CLI speaks) from the same script. A script is a queue of replies (text, a Bash tool call, a
// 429, a 529, a subscription usage limit, a hang), or a function of the
// request; every request is recorded so tests can assert what the agent
// sent.
package mockapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultModel is the model named in answers when the request names none.
const DefaultModel = "claude-sonnet-4-5-20250929"

// Server is the mock. Set its fields before Start; the readers are safe
// to call at any time from any goroutine.
//
// Requests to /v1/messages and /v1/responses that offer tools are turns:
// Claude Code offers them for the turns of its conversation, and a turn
// gets the script's reply. Its side requests (the max_tokens:1 quota
// probe, title and topic generation) offer none and are not turns: they
// get a JSON object when they ask for structured output, as the
// session-title request does, else Text("OK").
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT) once started: the agent's
	// ANTHROPIC_BASE_URL.
	URL string
	// Logf, when set, receives one line per request (and every request to
	// an endpoint the mock does not know), e.g. t.Logf.
	Logf func(format string, args ...any)
	// Script, when set, answers turns before the queue: it returns the
	// reply for a request, or false to fall back to the queue.
	Script func(Request) (Reply, bool)

	// order makes recording a turn and taking its reply one step: the
	// requests take the replies in the order they were recorded, which
	// a test waiting for the first request to show relies on.
	order    sync.Mutex
	mu       sync.Mutex
	queue    []Reply
	requests []Request
	changed  chan struct{} // closed and replaced on every new request
	seq      int
	done     chan struct{}
	srv      *http.Server
	ln       net.Listener
	wg       sync.WaitGroup
	handlers sync.WaitGroup
}

// New returns an unstarted server whose queue holds replies.
func New(replies ...Reply) *Server {
	return &Server{queue: replies, changed: make(chan struct{}), done: make(chan struct{})}
}

// Start listens on a random port of 127.0.0.1 and serves until Close. It
// returns the base URL.
func (s *Server) Start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("mockapi: listen: %w", err)
	}
	s.ln = ln
	s.URL = "http://" + ln.Addr().String()
	handler := func(w http.ResponseWriter, r *http.Request) {
		// Counted so that Close waits for handlers: none may log through a
		// test's Logf after the test has ended.
		s.mu.Lock()
		select {
		case <-s.done:
			s.mu.Unlock()
			http.Error(w, "mockapi: closed", http.StatusServiceUnavailable)
			return
		default:
			s.handlers.Add(1)
		}
		s.mu.Unlock()
		defer s.handlers.Done()
		s.serve(w, r)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(handler), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln) // ends with ErrServerClosed at Close
	}()
	return s.URL, nil
}

// Close stops the server: hanging requests end, connections close.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
		close(s.done)
	}
	s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close() // closes the listener and connections: the test is done with them
		s.wg.Wait()
		s.handlers.Wait()
	}
}

// Pending is the number of queued replies not yet used up.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Turns returns the requests that consumed the script.
func (s *Server) Turns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Turn {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor blocks until cond holds for the requests received so far, or
// the timeout passes; it reports whether cond held. It wakes on every new
// request instead of polling.
func (s *Server) WaitFor(timeout time.Duration, cond func([]Request) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		reqs, changed := append([]Request(nil), s.requests...), s.changed
		s.mu.Unlock()
		if cond(reqs) {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return cond(s.Requests())
		}
	}
}

// record stores req (or updates the stored one at index i >= 0) and wakes
// the waiters. It returns the index.
func (s *Server) record(i int, req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 {
		s.requests = append(s.requests, req)
		i = len(s.requests) - 1
	} else {
		s.requests[i] = req
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return i
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// serve records the request, answers it and records the status.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{
		Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body,
	}
	if strings.HasPrefix(r.URL.Path, "/v1/messages") {
		var mb MessagesBody
		if json.Unmarshal(body, &mb) == nil {
			req.Messages = &mb
		}
	}
	if r.URL.Path == "/v1/responses" {
		var rb ResponsesBody
		if json.Unmarshal(body, &rb) == nil {
			req.Responses = &rb
		}
	}
	turn := r.Method == http.MethodPost && (r.URL.Path == "/v1/messages" || r.URL.Path == "/v1/responses")
	var reply Reply
	if turn {
		// TestHangEndsWhenClientGoesAway saw a second request take the
		// first one's reply (a hang) when the first one's handler was
		// descheduled between its record and its next: the second one
		// then hung, and the test with it, for 10 minutes.
		s.order.Lock()
	}
	idx := s.record(-1, req)
	switch {
	case turn:
		reply, req.Turn = s.next(req)
		s.order.Unlock()
		// Recorded as a turn before answering: a test can see a turn that
		// is still open (a hang, a slow stream).
		s.record(idx, req)
		req.Status = s.answer(w, r, req, reply)
	case r.Method == http.MethodHead && r.URL.Path == "/":
		// Claude Code probes the base URL with HEAD / at start.
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		req.Status = http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body) / 4})
	default:
		s.logf("mockapi: unknown request %s %s %s", r.Method, r.URL.RequestURI(), truncate(body, 300))
		req.Status = http.StatusNotFound
		writeJSON(w, http.StatusNotFound, errorBody("not_found_error", "Not found: "+r.URL.Path))
	}
	req.End = time.Now()
	s.record(idx, req)
	s.logf("mockapi: %s %s turn=%v tools=%d stream=%v -> %d %s", r.Method, r.URL.Path,
		req.Turn, toolCount(req), streamed(req), req.Status, describe(reply, req))
}

// next picks the reply for a /v1/messages or /v1/responses request: a
// side request (one offering no tools) gets sideReply; a turn gets
// Script's reply, else the head of the queue (kept while its Times lasts),
// else Text("OK").
func (s *Server) next(req Request) (Reply, bool) {
	if !req.HasTools() {
		return sideReply(req), false
	}
	if s.Script != nil {
		if r, ok := s.Script(req); ok {
			return r, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Text("OK"), true
	}
	r := s.queue[0]
	switch {
	case r.Times < 0:
	case r.Times > 1:
		s.queue[0].Times--
	default:
		s.queue = s.queue[1:]
	}
	return r, true
}

// answer writes reply and returns the status sent (0: none, for a hang).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req Request, reply Reply) int {
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("mock%06d", s.seq)
	s.mu.Unlock()
	w.Header().Set("request-id", "req_"+id)
	if reply.ThinkTime > 0 {
		select {
		case <-r.Context().Done():
			return 0
		case <-s.done:
			return 0
		case <-time.After(reply.ThinkTime):
		}
	}
	switch reply.Kind {
	case KindHang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return 0
	case KindError:
		body := errorBody(reply.ErrorType, reply.ErrorMessage)
		body["request_id"] = "req_" + id
		if req.Responses != nil {
			body = openAIError(reply.ErrorType, reply.ErrorMessage)
		}
		writeJSON(w, reply.Status, body)
		return reply.Status
	}
	if req.Path == "/v1/responses" {
		return s.answerResponses(w, r, req, reply, id)
	}
	model := DefaultModel
	if req.Messages != nil && req.Messages.Model != "" {
		model = req.Messages.Model
	}
	a := newAnswer(reply, id, model, len(req.Body)/4)
	if req.Messages != nil && req.Messages.Stream {
		if err := writeStream(r.Context(), w, a.events(), reply.ChunkDelay); err != nil && !errors.Is(err, context.Canceled) {
			s.logf("mockapi: stream: %v", err)
		}
		return http.StatusOK
	}
	writeJSON(w, http.StatusOK, a.message())
	return http.StatusOK
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client that went away is the test's to notice
}

func toolCount(r Request) int {
	switch {
	case r.Messages != nil:
		return len(r.Messages.Tools)
	case r.Responses != nil:
		return len(r.Responses.Tools)
	}
	return 0
}

func streamed(r Request) bool {
	return (r.Messages != nil && r.Messages.Stream) || (r.Responses != nil && r.Responses.Stream)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// describe is a short label of what a request was answered with, for logs.
func describe(r Reply, req Request) string {
	if req.Path != "/v1/messages" && req.Path != "/v1/responses" {
		return ""
	}
	switch r.Kind {
	case KindToolUse:
		return "tool_use " + r.Tool
	case KindError:
		return "error " + r.ErrorType
	case KindHang:
		return "hang"
	}
	return fmt.Sprintf("text %q", truncate([]byte(r.Text), 40))
}

// sideReply answers a side request: Claude Code asks for a session title
// as structured output ({"title": ...}, output_config.format json_schema),
// so a request with a JSON schema gets an object with its required string
// properties filled in; anything else gets "OK".
func sideReply(req Request) Reply {
	var body struct {
		OutputConfig struct {
			Format struct {
				Type   string `json:"type"`
				Schema struct {
					Properties map[string]struct {
						Type string `json:"type"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if json.Unmarshal(req.Body, &body) != nil || body.OutputConfig.Format.Type != "json_schema" {
		return Text("OK")
	}
	obj := map[string]any{}
	for _, name := range body.OutputConfig.Format.Schema.Required {
		switch body.OutputConfig.Format.Schema.Properties[name].Type {
		case "boolean":
			obj[name] = false
		case "number", "integer":
			obj[name] = 0
		default:
			obj[name] = "Mock " + name
		}
	}
	js, _ := json.Marshal(obj)
	return Text(string(js))
}
