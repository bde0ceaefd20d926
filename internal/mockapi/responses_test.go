package mockapi

import (
	"context"
	"encoding/json"
	"io"
	"testing"
)

// responsesBody is a Codex-like request: a developer message, the user's
// prompt as input_text, and a tool, so it counts as a turn.
func responsesBody(stream bool, prompt string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "gpt-test", "stream": stream,
		"input": []any{
			map[string]any{"type": "message", "role": "developer",
				"content": []any{map[string]any{"type": "input_text", "text": "You are a coding agent."}}},
			map[string]any{"type": "message", "role": "user",
				"content": []any{map[string]any{"type": "input_text", "text": prompt}}},
		},
		"tools": []any{map[string]any{"type": "function", "name": "shell"}},
	})
	return string(b)
}

func TestResponsesText(t *testing.T) {
	s := start(t, Text("Hello from the mock."))
	resp := post(t, context.Background(), s.URL, "/v1/responses", responsesBody(true, "say hi"))
	evs := readSSE(t, resp.Body)
	want := "response.created,response.output_item.added,response.content_part.added," +
		"response.output_text.delta,response.output_text.delta,response.output_text.delta," +
		"response.output_text.done,response.content_part.done,response.output_item.done,response.completed"
	if got := names(evs); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	text := ""
	for i, e := range evs {
		if int(e.data["sequence_number"].(float64)) != i {
			t.Errorf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		if e.name == "response.output_text.delta" {
			text += e.data["delta"].(string)
		}
	}
	if text != "Hello from the mock." {
		t.Errorf("deltas join to %q", text)
	}
	done := evs[len(evs)-1].data["response"].(map[string]any)
	item := done["output"].([]any)[0].(map[string]any)
	if done["status"] != "completed" || done["usage"] == nil || item["type"] != "message" ||
		item["content"].([]any)[0].(map[string]any)["text"] != "Hello from the mock." {
		t.Errorf("response.completed: %v", done)
	}
	reqs := s.Turns()
	if len(reqs) != 1 || reqs[0].UserText() != "say hi" || reqs[0].Responses.Model != "gpt-test" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestResponsesFunctionCallAndError(t *testing.T) {
	s := start(t, ToolUse("shell", map[string]any{"command": []string{"touch", "x"}}),
		APIError(500, "server_error", "boom"))
	resp := post(t, context.Background(), s.URL, "/v1/responses", responsesBody(true, "make x"))
	evs := readSSE(t, resp.Body)
	item := evs[len(evs)-2].data["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "shell" || item["call_id"] == "" ||
		item["arguments"] != `{"command":["touch","x"]}` {
		t.Errorf("function call item: %v", item)
	}
	resp = post(t, context.Background(), s.URL, "/v1/responses", responsesBody(true, "again"))
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Message, Type string }
	}
	if resp.StatusCode != 500 || json.Unmarshal(body, &e) != nil || e.Error.Type != "server_error" || e.Error.Message != "boom" {
		t.Errorf("error: %d %s", resp.StatusCode, body)
	}
}
