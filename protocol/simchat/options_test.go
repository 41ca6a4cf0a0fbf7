package simchat

import (
	"encoding/json"
	"io"
	"slices"
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
		dialecttest.WantRules(t, judge(plain), []protocol.Rule{RToolGate}, frames)
	}
	// A scripted call that never streamed is named as the target names it: with its prefix.
	sc := dialecttest.Script(t, "preamble-tool", 7)
	s = dialecttest.Session(sc)
	noTools := relay(t, sc, true, Policy{IncludeThinking: true})
	vs := dialecttest.Check(t, noTools, s, func() protocol.Checker { return c.NewChecker(s) })
	call := s.Expected.Turns[0].ToolCalls[0]
	if !slices.ContainsFunc(vs, func(v protocol.Violation) bool {
		return v.Rule == RToolGate && strings.Contains(v.Detail, "("+"custom_"+call.Name+"), saw none")
	}) {
		t.Errorf("violations %v: want R-tool-gate naming custom_%s", vs, call.Name)
	}
	for _, bad := range []string{"mcp.tools", "has space", strings.Repeat("x", 33)} {
		if _, err := New().Configure("anthropic-all", protocol.Options{"toolPrefix": bad}); err == nil || !strings.Contains(err.Error(), "toolPrefix") {
			t.Errorf("toolPrefix %q: %v, want an error naming the option", bad, err)
		}
	}
}

// settle returns the frames a provider that runs its tools settled sends for sc: the final
// turn's text in one chunk, then the terminal (the legacy client's stream).
func settle(t *testing.T, sc *scenarios.Script) []string {
	return relay(t, sc, false, Policy{})
}

// TestLiveToolsOption: liveTools=false (by default for a slug with a "settled" part) is a
// provider that runs its tools settled: an opted-in client with policy all expects what a
// legacy one gets, the final text in one chunk and no live frame, and every live frame is
// R-settled-tools alone. Without the option such a stream is the false R-converge and
// R-tool-gate of issue 23.
func TestLiveToolsOption(t *testing.T) {
	t.Parallel()
	configure := func(slug string, opts protocol.Options) protocol.Client {
		t.Helper()
		c, err := New().Configure(slug, protocol.MergeOptions(protocol.Options{"optedIn": true, "policy": "all"}, opts))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		slug    string
		opts    protocol.Options
		settled bool
	}{
		{"vllm-all", protocol.Options{"liveTools": false}, true},
		{"openai-settled-all", nil, true},
		{"openai-settled-all", protocol.Options{"liveTools": true}, false},
		{"openai-all", nil, false},
	} {
		c := configure(tc.slug, tc.opts)
		for _, k := range []protocol.FrameKind{protocol.FrameThinking, protocol.FrameToolStart, protocol.FrameToolEnd, protocol.FrameReset} {
			if c.Sees(k) == tc.settled {
				t.Errorf("%s %v: Sees(%v) = %v, want %v", tc.slug, tc.opts, k, c.Sees(k), !tc.settled)
			}
		}
	}
	settled, live := configure("vllm-all", protocol.Options{"liveTools": false}), configure("vllm-all", nil)
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	for _, name := range []string{"preamble-tool", "parallel-tools", "thinking-answer", "tool-chain", "plain-answer", "provider-503-after-tool", "paused-for-input"} {
		sc := dialecttest.Script(t, name, 7)
		judge := func(c protocol.Client, frames []string) []protocol.Violation {
			s := dialecttest.Session(sc)
			return dialecttest.Check(t, frames, s, func() protocol.Checker { return c.NewChecker(s) })
		}
		frames := settle(t, sc)
		dialecttest.WantRules(t, judge(settled, frames), nil, frames)
		// The live stream of a provider with a live tool loop: R-settled-tools alone (a plain
		// answer streamed in pieces too).
		frames = relay(t, sc, true, all)
		dialecttest.WantRules(t, judge(settled, frames), []protocol.Rule{RSettledTools}, frames)
		if name == "preamble-tool" {
			// Today's verdict without the option: the settled stream is wrongly judged live.
			dialecttest.WantRules(t, judge(live, settle(t, sc)), []protocol.Rule{protocol.RConverge, RToolGate}, nil)
		}
	}
	// A legacy client of such a deployment is judged as any legacy client: a live stream is
	// R-legacy-settled and R-tool-gate, as before.
	legacy, err := New().Configure("vllm-all", protocol.Options{"liveTools": false, "policy": "all"})
	if err != nil {
		t.Fatal(err)
	}
	sc := dialecttest.Script(t, "preamble-tool", 7)
	s := dialecttest.Session(sc)
	frames := relay(t, sc, true, all)
	dialecttest.WantRules(t, dialecttest.Check(t, frames, s, func() protocol.Checker { return legacy.NewChecker(s) }),
		[]protocol.Rule{RLegacySettled, RToolGate}, frames)
}
