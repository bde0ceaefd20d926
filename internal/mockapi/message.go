package mockapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// block is a content block of an answer, as the API returns it.
type block struct {
	Type  string         `json:"type"`
	Text  *string        `json:"text,omitempty"`
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// answer is the message a reply turns into.
type answer struct {
	id, model, stopReason string
	blocks                []block
	inputTokens           int
	outputTokens          int
	cacheRead, cacheWrite int
}

func strp(s string) *string { return &s }

// newAnswer builds the assistant message for a text or tool_use reply.
func newAnswer(r Reply, id, model string, inputTokens int) answer {
	a := answer{id: "msg_" + id, model: model, stopReason: "end_turn", inputTokens: inputTokens}
	if r.Kind == KindText || r.Text != "" {
		a.blocks = append(a.blocks, block{Type: "text", Text: strp(r.Text)})
	}
	if r.Kind == KindToolUse {
		input := r.ToolInput
		if input == nil {
			input = map[string]any{}
		}
		a.blocks = append(a.blocks, block{Type: "tool_use", ID: "toolu_" + id, Name: r.Tool, Input: input})
		a.stopReason = "tool_use"
	}
	a.outputTokens = 1
	for _, b := range a.blocks {
		if b.Text != nil {
			a.outputTokens += len(*b.Text)/4 + 1
		}
		a.outputTokens += len(b.Input) * 4
	}
	if u := r.Usage; u != nil {
		a.inputTokens, a.outputTokens, a.cacheRead, a.cacheWrite = u.Input, u.Output, u.CacheRead, u.CacheCreation
	}
	return a
}

func (a answer) usage(output int) map[string]any {
	return map[string]any{
		"input_tokens":                a.inputTokens,
		"cache_creation_input_tokens": a.cacheWrite,
		"cache_read_input_tokens":     a.cacheRead,
		"output_tokens":               output,
		"service_tier":                "standard",
	}
}

// message is the non-streaming response body.
func (a answer) message() map[string]any {
	blocks := a.blocks
	if blocks == nil {
		blocks = []block{}
	}
	return map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": blocks, "stop_reason": a.stopReason, "stop_sequence": nil,
		"usage": a.usage(a.outputTokens),
	}
}

// events is the SSE stream of the answer, in the order and shapes the API
// sends: message_start (empty content, stop_reason null), ping, per block a
// content_block_start (empty text / empty input), its deltas and a
// content_block_stop, then message_delta (stop reason, output tokens) and
// message_stop.
func (a answer) events() []sseEvent {
	start := a.message()
	start["content"] = []block{}
	start["stop_reason"] = nil
	start["usage"] = a.usage(1)
	ev := []sseEvent{
		{"message_start", map[string]any{"type": "message_start", "message": start}},
		{"ping", map[string]any{"type": "ping"}},
	}
	for i, b := range a.blocks {
		ev = append(ev, blockEvents(i, b)...)
	}
	return append(ev,
		sseEvent{"message_delta", map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": a.stopReason, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": a.outputTokens},
		}},
		sseEvent{"message_stop", map[string]any{"type": "message_stop"}},
	)
}

// blockEvents streams one block: text in a few text_delta pieces, tool
// input as input_json_delta pieces of its JSON.
func blockEvents(i int, b block) []sseEvent {
	startBlock := map[string]any{"type": b.Type, "text": ""}
	deltaType, field, full := "text_delta", "text", ""
	if b.Type == "tool_use" {
		startBlock = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
		deltaType, field = "input_json_delta", "partial_json"
		js, _ := json.Marshal(b.Input)
		full = string(js)
	} else if b.Text != nil {
		full = *b.Text
	}
	ev := []sseEvent{{"content_block_start", map[string]any{
		"type": "content_block_start", "index": i, "content_block": startBlock,
	}}}
	for _, piece := range split(full, 3) {
		ev = append(ev, sseEvent{"content_block_delta", map[string]any{
			"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": deltaType, field: piece},
		}})
	}
	return append(ev, sseEvent{"content_block_stop", map[string]any{
		"type": "content_block_stop", "index": i,
	}})
}

// split cuts s into at most n pieces on rune boundaries, so the client has
// to join deltas as it would for the real API.
func split(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 {
		return nil
	}
	size := (len(rs) + n - 1) / n
	var out []string
	for len(rs) > 0 {
		k := min(size, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}

type sseEvent struct {
	name string
	data map[string]any
}

// writeStream sends the events as text/event-stream, flushing each one,
// pausing delay between them; it stops early when ctx ends.
func writeStream(ctx context.Context, w http.ResponseWriter, events []sseEvent, delay time.Duration) error {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for i, e := range events {
		if i > 0 && delay > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
		}
		js, err := json.Marshal(e.data)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, js); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
	}
	return nil
}

// errorBody is the API's error JSON.
func errorBody(errType, message string) map[string]any {
	return map[string]any{
		"type":  "error",
		"error": map[string]any{"type": errType, "message": message},
	}
}
