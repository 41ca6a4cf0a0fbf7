package mockprovider

import (
	"net/http"
	"strings"
	"testing"
)

// TestEndpointRequestHonoursMaxTokens: a request without a directive that asks for max_tokens
// (an application's request to an inference endpoint) is answered with that many generated
// tokens, on both wires; without max_tokens an OpenAI request still says how to select.
func TestEndpointRequestHonoursMaxTokens(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	ask := func(path, body string) (int, string) {
		resp := post(t, ts.Client(), ts.URL+path, body, nil)
		return resp.StatusCode, string(drain(resp))
	}
	status, body := ask(PathOpenAI, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":7,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}]}`)
	if status != http.StatusOK || !strings.Contains(body, `"completion_tokens":7`) || !strings.Contains(body, "data: [DONE]") {
		t.Errorf("openai max_tokens 7: status %d, want 200 and usage completion_tokens 7; body %s", status, body)
	}
	status, body = ask(PathOpenAI, `{"model":"m","stream":true,"max_completion_tokens":3,"messages":[{"role":"user","content":"hello"}]}`)
	if status != http.StatusOK || strings.Count(body, `"content":`) < 3 {
		t.Errorf("openai max_completion_tokens 3: status %d; body %s", status, body)
	}
	status, body = ask(PathAnthropic, `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hello"}]}`)
	if status != http.StatusOK || !strings.Contains(body, `"output_tokens":5`) {
		t.Errorf("anthropic max_tokens 5: status %d, want 200 and output_tokens 5; body %s", status, body)
	}
	status, body = ask(PathOpenAI, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "max_tokens") {
		t.Errorf("openai without max_tokens: status %d, want 400 naming max_tokens; body %s", status, body)
	}
	resp, err := ts.Client().Get(ts.URL + PathModels)
	if err != nil {
		t.Fatal(err)
	}
	b := drain(resp)
	if !strings.Contains(string(b), `"id":"`+Model+`"`) {
		t.Errorf("GET %s: %s", PathModels, b)
	}
}
