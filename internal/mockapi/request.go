package mockapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Request is one request the mock received, kept so that tests can assert
// what the agent sent (its prompt, its tool results, its side requests).
type Request struct {
	Time   time.Time
	Method string
	Path   string // URL path without the query
	Query  string
	Header http.Header
	Body   []byte
	// Messages is the decoded body of POST /v1/messages and
	// /v1/messages/count_tokens; nil for other paths or undecodable bodies.
	Messages *MessagesBody
	// Responses is the decoded body of POST /v1/responses (OpenAI's
	// Responses API, spoken by the Codex CLI); nil otherwise.
	Responses *ResponsesBody
	// Turn is true when the request consumed a reply of the script (see
	// Server); false for side requests and other endpoints.
	Turn bool
	// Status is the HTTP status the mock answered with (0 for a hang that
	// ended without an answer).
	Status int
	// End is when the mock finished answering; zero while the request is
	// still open (streaming or hanging).
	End time.Time
}

// MessagesBody is the part of a Messages API request body the tests read.
type MessagesBody struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system,omitempty"`
	Messages  []Message       `json:"messages"`
	Tools     []struct {
		Name string `json:"name"`
	} `json:"tools,omitempty"`
}

// Message is one conversation message; Content is a string or an array of
// content blocks, as the API allows both.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Block is a content block of a message (text, tool_use, tool_result, ...).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Blocks returns the message's content as blocks; a string content is one
// text block.
func (m Message) Blocks() []Block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var bs []Block
	_ = json.Unmarshal(m.Content, &bs) // content of another form has no blocks
	return bs
}

// Text joins the text blocks of the message with newlines.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Blocks() {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ResultText is the text of a tool_result block (string or text blocks).
func (b Block) ResultText() string {
	return Message{Content: b.Content}.Text()
}

// LastUser returns the last user message of the request, if any.
func (r Request) LastUser() (Message, bool) {
	if r.Messages == nil {
		return Message{}, false
	}
	for i := len(r.Messages.Messages) - 1; i >= 0; i-- {
		if m := r.Messages.Messages[i]; m.Role == "user" {
			return m, true
		}
	}
	return Message{}, false
}

// UserText joins the text of every user message: Claude Code wraps the
// typed prompt in extra blocks (system reminders), so tests look for the
// prompt inside this rather than compare it.
func (r Request) UserText() string {
	if r.Messages == nil {
		return r.responsesText()
	}
	var parts []string
	for _, m := range r.Messages.Messages {
		if m.Role == "user" {
			parts = append(parts, m.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResults returns the tool_result blocks of the last user message.
func (r Request) ToolResults() []Block {
	m, ok := r.LastUser()
	if !ok {
		return nil
	}
	var out []Block
	for _, b := range m.Blocks() {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// HasTools reports whether the request offered the model any tools.
func (r Request) HasTools() bool {
	return (r.Messages != nil && len(r.Messages.Tools) > 0) ||
		(r.Responses != nil && len(r.Responses.Tools) > 0)
}
