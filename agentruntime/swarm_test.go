package agentruntime

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// TestSwarmStream: swarms stream every child's start, deltas, tools and done (or error)
// between the parent's delegation tool_start and tool_end, and the compose checker finds
// nothing wrong; every child turn was one provider request, recorded with its path.
func TestSwarmStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	dep, _ := e.rt.deps.Lookup("openai-all")
	for _, tc := range []struct {
		scenario string
		// frames must each appear in the stream.
		frames []string
		// requests is how many child provider requests the mock records.
		requests int
	}{
		// Depth 2: researcher-a calls a tool and delegates to analyst-a1 (2 turns), analyst-a1
		// and researcher-b answer at once (1 turn each).
		{"swarm-depth2", []string{`"depth":2`, `"runKeyChain":["run_`, `"type":"swarm_child_tool_end","runKey":"researcher-a","toolName":"web_search"`}, 4},
		// A failing child: swarm_child_error with the scripted message; the parent still ends done.
		{"swarm-child-error", []string{`"type":"swarm_child_error","runKey":"windows-check","error":"windows runner unavailable"`, `"type":"done"`}, 3},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			session := strings.ReplaceAll(t.Name(), "/", "-")
			sr := e.open(composeClient, "openai-all", tc.scenario, 3, session)
			body := string(sr.body)
			if vs := check(t, composeClient, dep, tc.scenario, 3, sr); len(vs) > 0 {
				t.Errorf("violations: %+v", vs)
			}
			for _, f := range tc.frames {
				if !strings.Contains(body, f) {
					t.Errorf("stream lacks %s", f)
				}
			}
			children := 0
			for _, rec := range e.mock.Sessions(session) {
				if rec.Child != "" {
					children++
				}
			}
			if children != tc.requests {
				t.Errorf("mock recorded %d child requests, want %d", children, tc.requests)
			}
		})
	}
}

// TestSwarmFaults is the self-proof of the swarm rules checked on the stream: each fault is
// reported as its rule and nothing else, on a scenario the clean runtime passes.
func TestSwarmFaults(t *testing.T) {
	t.Parallel()
	clean := newEnv(t, 0, Options{})
	for _, tc := range []faultCase{
		// A child's done never comes: the run ends done with the child open.
		{fault: "child-no-done", scenario: "swarm-depth2", rule: compose.RSwarmClose},
		// Reversed chains: the chain does not end with the runKey.
		{fault: "child-bad-chain", scenario: "swarm-depth2", rule: compose.RSwarmChain},
		// A delta for a child that already finished.
		{fault: "child-delta-after-done", scenario: "swarm-depth2", rule: compose.RSwarmOrder},
		// The last child's done arrives after the parent's done.
		{fault: "done-before-children", scenario: "swarm-depth2", rule: compose.RSwarmParentDone},
		// Every child's text differs from its script by one character.
		{fault: "child-wrong-text", scenario: "swarm-child-error", rule: compose.RSwarmContent},
	} {
		tc.client, tc.slug = composeClient, "anthropic-all"
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			_, _, vs := tc.play(t, clean, 5)
			rules := rulesOf(vs)
			if !slices.Equal(rules, []protocol.Rule{tc.rule}) {
				t.Errorf("checker reported %v (%+v), want %s alone", rules, vs, tc.rule)
			}
			t.Logf("%s: %+v", tc.fault, vs)
		})
	}
}

// A gateway that drops the child selection (header and directive) makes the mock play every
// child its run's script, which delegates again: the runtime refuses delegations past
// scenarios.MaxSwarmDepth, so the stream still ends instead of fanning out without end, and the
// children the directive names are played right when only the header is dropped.
func TestSwarmChildSelectionThroughAGateway(t *testing.T) {
	t.Parallel()
	childKey := regexp.MustCompile(` child=[0-9.]+`)
	for _, tc := range []struct {
		name string
		// dropDirective also strips child= from the request body (a gateway that rewrites
		// the prompt, or a runtime of another make).
		dropDirective bool
	}{{"header dropped", false}, {"header and directive dropped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 0})
			if err != nil {
				t.Fatal(err)
			}
			gateway := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Del(scenarios.ChildHeader)
				body, _ := io.ReadAll(r.Body)
				if tc.dropDirective {
					body = childKey.ReplaceAll(body, nil)
				}
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				mock.ServeHTTP(w, r)
			}))
			gateway.Config.Protocols = mockprovider.Protocols()
			gateway.Start()
			t.Cleanup(gateway.Close)
			rt, err := New(Options{ProviderURL: gateway.URL, Heartbeat: -1})
			if err != nil {
				t.Fatal(err)
			}
			rts := httptest.NewServer(rt.Handler())
			t.Cleanup(func() { rts.Close(); _ = rt.Close() })
			e := &env{t: t, mock: mock, mockURL: gateway.URL, rt: rt, url: rts.URL, client: rts.Client()}
			sr := e.open(composeClient, "openai-all", "swarm-depth2", 3, "gw")
			body := string(sr.body)
			if !strings.Contains(body, `"type":"done"`) {
				t.Fatalf("stream did not end done:\n%s", clipTail(body))
			}
			refused := strings.Contains(body, "delegation refused")
			if refused != tc.dropDirective {
				t.Errorf("a delegation refused at the depth limit: %v, want %v", refused, tc.dropDirective)
			}
		})
	}
}

// clipTail is the last 2 KiB of s, for a failure message.
func clipTail(s string) string { return s[max(0, len(s)-2048):] }
