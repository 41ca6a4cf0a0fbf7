package mockprovider

import (
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// TestToolPrefix: a runtime that shows its tools to the model under prefixed names (Sim:
// custom_<title>) gets its calls under those names, from the directive's toolPrefix= or the
// X-Streambench-Tool-Prefix header, on both wires, without a copy of the scenario library; a
// request without it keeps the scripted names, and a prefix no wire allows is a 400.
func TestToolPrefix(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	client := ts.Client()
	read := func(resp *http.Response) string {
		b := drain(resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
		}
		return string(b)
	}
	prefixed, _ := scenarios.WithToolPrefix(directive("preamble-tool", 7, "p1"), "custom_")
	for _, tc := range []struct {
		name, path, body string
		headers          map[string]string
		want             string
	}{
		{"openai directive", PathOpenAI, openaiBody(prefixed, true), nil, `"name":"custom_get_weather"`},
		{"anthropic directive", PathAnthropic, anthropicBody(prefixed, true), nil, `"name":"custom_get_weather"`},
		{"openai header", PathOpenAI, openaiBody(directive("preamble-tool", 7, "p2"), true), map[string]string{HeaderToolPrefix: "mcp-"}, `"name":"mcp-get_weather"`},
		{"openai non-streaming", PathOpenAI, openaiBody(prefixed, false), nil, `"name":"custom_get_weather"`},
		{"none", PathOpenAI, openaiBody(directive("preamble-tool", 7, "p3"), true), nil, `"name":"get_weather"`},
	} {
		got := read(post(t, client, ts.URL+tc.path, tc.body, tc.headers))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: want %s in:\n%s", tc.name, tc.want, got)
		}
		if tc.name != "none" && strings.Contains(got, `"name":"get_weather"`) {
			t.Errorf("%s: the scripted name without its prefix:\n%s", tc.name, got)
		}
	}
	// A prefix no provider wire allows in a tool name is refused, naming where it came from.
	resp := post(t, client, ts.URL+PathOpenAI, openaiBody(directive("preamble-tool", 7, "p4"), true), map[string]string{HeaderToolPrefix: "bad.prefix"})
	b := drain(resp)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), HeaderToolPrefix) {
		t.Errorf("a bad prefix: HTTP %d %s, want 400 naming the header", resp.StatusCode, b)
	}
}
