package mockapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// The OpenAI Responses API, as OpenAI's Codex CLI speaks it (POST
// /v1/responses, always streamed): enough of it for a scripted text
// answer, a function call, errors and hangs from the same script as the
// Messages API.

// ResponsesBody is the part of a Responses API request body tests read.
type ResponsesBody struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools,omitempty"`
}

// inputItem is the part of an item of Input that userText reads: a
// message's role and content (a string, or input_text parts).
type inputItem struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// userText joins the input_text of the user messages.
func (b *ResponsesBody) userText() string {
	var parts []string
	for _, raw := range b.Input {
		var it inputItem
		if json.Unmarshal(raw, &it) != nil || it.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(it.Content, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var cs []struct{ Type, Text string }
		_ = json.Unmarshal(it.Content, &cs) // content of another form has no text parts
		for _, c := range cs {
			if c.Type == "input_text" {
				parts = append(parts, c.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// respItem builds the output item of a reply: an assistant message, or a
// function_call whose arguments are the tool input as a JSON string.
func respItem(r Reply, id string, done bool) map[string]any {
	status := "in_progress"
	if done {
		status = "completed"
	}
	if r.Kind == KindToolUse {
		args := ""
		if done {
			js, _ := json.Marshal(r.ToolInput)
			args = string(js)
		}
		return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id,
			"name": r.Tool, "arguments": args, "status": status}
	}
	content := []any{}
	if done {
		content = append(content, map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}})
	}
	return map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant",
		"status": status, "content": content}
}

// respObject is the response object of response.created / completed.
func respObject(id, model string, output []any, done bool) map[string]any {
	o := map[string]any{"id": "resp_" + id, "object": "response", "created_at": time.Now().Unix(),
		"model": model, "status": "in_progress", "output": output}
	if done {
		o["status"] = "completed"
		o["usage"] = map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 15,
		}
	}
	return o
}

// responsesEvents is the SSE stream for a text or function-call reply:
// response.created, the item added, its deltas and done events, the item
// done, response.completed (Codex fails a stream that ends without it).
func responsesEvents(r Reply, id, model string) []sseEvent {
	ev := []sseEvent{
		{"response.created", map[string]any{"response": respObject(id, model, []any{}, false)}},
		{"response.output_item.added", map[string]any{"output_index": 0, "item": respItem(r, id, false)}},
	}
	if r.Kind == KindToolUse {
		js, _ := json.Marshal(r.ToolInput)
		for _, piece := range split(string(js), 3) {
			ev = append(ev, sseEvent{"response.function_call_arguments.delta", map[string]any{
				"item_id": "fc_" + id, "output_index": 0, "delta": piece}})
		}
		ev = append(ev, sseEvent{"response.function_call_arguments.done", map[string]any{
			"item_id": "fc_" + id, "output_index": 0, "arguments": string(js)}})
	} else {
		part := map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0}
		ev = append(ev, sseEvent{"response.content_part.added", with(part, "part",
			map[string]any{"type": "output_text", "text": "", "annotations": []any{}})})
		for _, piece := range split(r.Text, 3) {
			ev = append(ev, sseEvent{"response.output_text.delta", with(part, "delta", piece)})
		}
		ev = append(ev, sseEvent{"response.output_text.done", with(part, "text", r.Text)},
			sseEvent{"response.content_part.done", with(part, "part",
				map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}})})
	}
	item := respItem(r, id, true)
	ev = append(ev,
		sseEvent{"response.output_item.done", map[string]any{"output_index": 0, "item": item}},
		sseEvent{"response.completed", map[string]any{"response": respObject(id, model, []any{item}, true)}})
	for i := range ev {
		ev[i].data["type"] = ev[i].name
		ev[i].data["sequence_number"] = i
	}
	return ev
}

// with copies m with one more key.
func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// answerResponses writes a text or tool reply to a Responses request.
func (s *Server) answerResponses(w http.ResponseWriter, r *http.Request, req Request, reply Reply, id string) int {
	model := DefaultModel
	if req.Responses != nil && req.Responses.Model != "" {
		model = req.Responses.Model
	}
	ev := responsesEvents(reply, id, model)
	if req.Responses == nil || !req.Responses.Stream {
		writeJSON(w, http.StatusOK, ev[len(ev)-1].data["response"])
		return http.StatusOK
	}
	if err := writeStream(r.Context(), w, ev, reply.ChunkDelay); err != nil {
		s.logf("mockapi: stream: %v", err)
	}
	return http.StatusOK
}

// openAIError is the OpenAI error body: {"error": {message, type, code}}.
func openAIError(errType, message string) map[string]any {
	return map[string]any{"error": map[string]any{
		"message": message, "type": errType, "param": nil, "code": errType,
	}}
}

func (r Request) responsesText() string {
	if r.Responses == nil {
		return ""
	}
	return r.Responses.userText()
}
