package simchat

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// prefixTools returns frames with every tool frame's name prefixed, as a target that shows
// its tools to the model under prefixed names sends them.
func prefixTools(frames []string, prefix string) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		if strings.Contains(f, `"event":"tool"`) {
			f = strings.Replace(f, `"name":"`, `"name":"`+prefix, 1)
		}
		out[i] = f
	}
	return out
}

// TestToolPrefixOption: with toolPrefix the client asks the mock (its directive's toolPrefix=)
// for prefixed tool names and the checker expects them in tool frames; without it the same
// frames are R-tool-gate's, as before. A prefix no provider wire allows is refused.
func TestToolPrefixOption(t *testing.T) {
	t.Parallel()
	c, err := New().Configure("anthropic-all", protocol.Options{"optedIn": true, "toolPrefix": "custom_"})
	if err != nil {
		t.Fatal(err)
	}
	s := &protocol.Session{ID: "s1", Target: "anthropic-all", Input: "[[streambench scenario=preamble-tool seed=7 session=s1]] hi"}
	req, err := c.NewRequest(t.Context(), "http://rt", s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(req.Body)
	var body RequestBody
	if err := json.Unmarshal(b, &body); err != nil || body.Input == nil {
		t.Fatalf("body %s: %v", b, err)
	}
	if d, found, err := scenarios.ParseDirective(*body.Input); err != nil || !found || d.ToolPrefix != "custom_" || d.Session != "s1" {
		t.Errorf("request input %q: directive %+v %v, want toolPrefix=custom_", *body.Input, d, err)
	}
	if s.Input != "[[streambench scenario=preamble-tool seed=7 session=s1]] hi" {
		t.Errorf("the session's input changed: %q", s.Input)
	}

	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	for _, name := range []string{"preamble-tool", "parallel-tools", "tool-error"} {
		sc := dialecttest.Script(t, name, 7)
		frames := prefixTools(relay(t, sc, true, all), "custom_")
		s := dialecttest.Session(sc)
		judge := func(c protocol.Client) []protocol.Violation {
			return dialecttest.Check(t, frames, s, func() protocol.Checker { return c.NewChecker(s) })
		}
		dialecttest.WantRules(t, judge(c), nil, frames)
		plain, err := New().Configure("anthropic-all", protocol.Options{"optedIn": true})
		if err != nil {
			t.Fatal(err)
		}
		dialecttest.WantRules(t, judge(plain), []protocol.Rule{protocol.RToolGate}, frames)
	}
	for _, bad := range []string{"mcp.tools", "has space", strings.Repeat("x", 33)} {
		if _, err := New().Configure("anthropic-all", protocol.Options{"toolPrefix": bad}); err == nil || !strings.Contains(err.Error(), "toolPrefix") {
			t.Errorf("toolPrefix %q: %v, want an error naming the option", bad, err)
		}
	}
}
