package mockprovider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// TestSelectors: a directive's child= and toolPrefix=, and their headers, select what the mock
// plays. X-Streambench-Child (or child=, which a gateway that drops the header still passes)
// plays a swarm child's script (its text, not the conversation's) and records its path; a path
// the scenario lacks, or a header and a directive that disagree, is a 400 naming them. A runtime
// that shows its tools to the model under prefixed names (Sim: custom_<title>) gets its calls
// under those names, from toolPrefix= or X-Streambench-Tool-Prefix, on both wires, without a
// copy of the scenario library; a request without it keeps the scripted names, and a prefix no
// wire allows is a 400 naming where it came from. A request without a directive that asks for
// max_tokens (an application's request to an inference endpoint) is answered with that many
// generated tokens, on both wires; without max_tokens an OpenAI request still says how to select.
func TestSelectors(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 0})
	child, _ := scenarios.WithChild(directive("swarm-depth2", 1, "kid-directive"), "0.1")
	prefixed, _ := scenarios.WithToolPrefix(directive("preamble-tool", 7, "p1"), "custom_")
	const scripted, custom = `"name":"get_weather"`, `"name":"custom_get_weather"`
	const hello = `"messages":[{"role":"user","content":"hello"}]}`
	for _, tc := range []struct {
		name, path, body string
		headers          map[string]string
		status           int
		want             []string
		unwanted         string // must not appear ("" skips)
	}{
		{"child header", PathOpenAI, openaiBody(directive("swarm-depth2", 1, "kid"), true), map[string]string{HeaderChild: "0.1"},
			http.StatusOK, []string{`" B"`, "Vendor"}, ""},
		{"unknown child", PathOpenAI, openaiBody(directive("swarm-depth2", 1, "nokid"), true), map[string]string{HeaderChild: "0.9"},
			http.StatusBadRequest, []string{`no swarm child at path \"0.9\"`}, ""},
		{"child directive", PathOpenAI, openaiBody(child, true), nil,
			http.StatusOK, []string{`" B"`, "Vendor"}, ""},
		{"child header 0, directive 0.1", PathOpenAI, openaiBody(child, true), map[string]string{HeaderChild: "0"},
			http.StatusBadRequest, []string{`in the directive`}, ""},
		{"openai prefix directive", PathOpenAI, openaiBody(prefixed, true), nil,
			http.StatusOK, []string{custom}, scripted},
		{"anthropic prefix directive", PathAnthropic, anthropicBody(prefixed, true), nil,
			http.StatusOK, []string{custom}, scripted},
		{"openai prefix header", PathOpenAI, openaiBody(directive("preamble-tool", 7, "p2"), true), map[string]string{HeaderToolPrefix: "mcp-"},
			http.StatusOK, []string{`"name":"mcp-get_weather"`}, scripted},
		{"openai prefix non-streaming", PathOpenAI, openaiBody(prefixed, false), nil,
			http.StatusOK, []string{custom}, scripted},
		{"no prefix", PathOpenAI, openaiBody(directive("preamble-tool", 7, "p3"), true), nil,
			http.StatusOK, []string{scripted}, ""},
		{"bad prefix", PathOpenAI, openaiBody(directive("preamble-tool", 7, "p4"), true), map[string]string{HeaderToolPrefix: "bad.prefix"},
			http.StatusBadRequest, []string{HeaderToolPrefix}, ""},
		{"endpoint openai max_tokens 7", PathOpenAI,
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":7,` +
				`"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}]}`, nil,
			http.StatusOK, []string{`"completion_tokens":7`, "data: [DONE]"}, ""},
		{"endpoint anthropic max_tokens 5", PathAnthropic, `{"model":"m","stream":true,"max_tokens":5,` + hello, nil,
			http.StatusOK, []string{`"output_tokens":5`}, ""},
		{"endpoint openai without max_tokens", PathOpenAI, `{"model":"m","stream":true,` + hello, nil,
			http.StatusBadRequest, []string{"max_tokens"}, ""},
	} {
		resp := post(t, ts.Client(), ts.URL+tc.path, tc.body, tc.headers)
		got := string(drain(resp))
		if resp.StatusCode != tc.status {
			t.Errorf("%s: HTTP %d, want %d:\n%s", tc.name, resp.StatusCode, tc.status, got)
		}
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s: want %s in:\n%s", tc.name, want, got)
			}
		}
		if tc.unwanted != "" && strings.Contains(got, tc.unwanted) {
			t.Errorf("%s: %s (the scripted name without its prefix) in:\n%s", tc.name, tc.unwanted, got)
		}
	}
	resp := post(t, ts.Client(), ts.URL+PathOpenAI, `{"model":"m","stream":true,"max_completion_tokens":3,`+hello, nil)
	if got := string(drain(resp)); resp.StatusCode != http.StatusOK || strings.Count(got, `"content":`) < 3 {
		t.Errorf("endpoint openai max_completion_tokens 3: HTTP %d, want 200 and 3 content deltas:\n%s", resp.StatusCode, got)
	}
	resp, err := ts.Client().Get(ts.URL + PathModels)
	if err != nil {
		t.Fatal(err)
	}
	if b := drain(resp); !strings.Contains(string(b), `"id":"`+Model+`"`) {
		t.Errorf("GET %s: %s", PathModels, b)
	}
	if rec := onlySession(t, srv, "kid"); rec.Child != "0.1" {
		t.Errorf("record child %q, want 0.1", rec.Child)
	}
	b, _ := json.Marshal(srv.Sessions("kid")[0])
	if !strings.Contains(string(b), `"child":"0.1"`) {
		t.Errorf("record JSON lacks the child: %s", b)
	}
}
