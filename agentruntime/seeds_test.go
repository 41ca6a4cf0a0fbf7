package agentruntime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// TestSeedFaultsReportTheirRuleAlone is the self-proof of the Sim seed rules: on the same
// session, the clean runtime's stream has no violation and the faulted one exactly the rule the
// fault breaks, nothing else.
func TestSeedFaultsReportTheirRuleAlone(t *testing.T) {
	t.Parallel()
	clean := newEnv(t, 0, Options{})
	for _, tc := range []faultCase{
		// A paused run reported as a plain success final.
		{"pause-not-reported", simChatOptIn, "openai-tools", "paused-for-input", "", "", protocol.RPaused},
		// Even a legacy client sees the final envelope.
		{"pause-not-reported", simChatLegacy, "anthropic-none", "paused-for-input", "", "", protocol.RPaused},
		// On the canvas, execution:completed without status paused.
		{"pause-not-reported", simCanvas, "openai-all", "paused-for-input", "", "", protocol.RPaused},
		// The preamble persisted in the final envelope's output.
		{"preamble-in-output", simChatOptIn, "openai-none", "preamble-tool", "", "Let me check", protocol.RFinalOutput},
		// The legacy client, whose answer chunk is still the settled final text.
		{"preamble-in-output", simChatLegacy, "anthropic-all", "tool-chain", "", "", protocol.RFinalOutput},
		// The canvas block and execution outputs.
		{"preamble-in-output", simCanvas, "anthropic-all", "preamble-tool", "", "Let me check", protocol.RFinalOutput},
		// Thinking from a model without thinking, though the policy includes it.
		{"nothink-thinking", simChatOptIn, "openai-nothink-all", "thinking-answer", "", `"event":"thinking"`, protocol.RThinkingCapability},
		// stream:thinking on the canvas, where no policy applies.
		{"nothink-thinking", simCanvas, "anthropic-nothink-all", "thinking-answer", "", `stream:thinking`, protocol.RThinkingCapability},
		// The execution timeout reported as a cancel: the error does not name the timeout.
		{"timeout-as-cancel", simChatOptIn, "openai-tools", "execution-timeout", "", cancelledMessage, protocol.RCancelNotTimeout},
		// On the canvas, execution:cancelled although nobody cancelled.
		{"timeout-as-cancel", simCanvas, "anthropic-all", "execution-timeout", "", simcanvas.TypeExecutionCancelled, protocol.RCancelNotTimeout},
		// Thinking past 524,288 UTF-16 code units.
		{"uncapped-thinking", simChatOptIn, "openai-thinking", "thinking-over-cap", "", `"event":"thinking"`, protocol.RThinkingCap},
		// On the canvas.
		{"uncapped-thinking", simCanvas, "anthropic-all", "thinking-over-cap", "", `stream:thinking`, protocol.RThinkingCap},
		// A provider that runs its tools settled streamed live: tool frames, a reset, the
		// preamble...
		{"live-settled-tools", simChatOptIn, "openai-settled-all", "preamble-tool", "", `"event":"tool"`, simchat.RSettledTools},
		// ...and thinking.
		{"live-settled-tools", simChatOptIn, "openai-settled-all", "thinking-answer", "", `"event":"thinking"`, simchat.RSettledTools},
	} {
		t.Run(tc.fault+"/"+tc.client.String()+"/"+tc.scenario, func(t *testing.T) {
			t.Parallel()
			_, _, vs := tc.play(t, clean, 3)
			if rules := rulesOf(vs); !slices.Equal(rules, []protocol.Rule{tc.rule}) {
				t.Errorf("checker reported %v, want [%s] alone: %+v", rules, tc.rule, vs)
			}
		})
	}
}

// TestSeedEndings shows what the clean runtime sends for each seed ending, beyond the checkers'
// verdicts: a paused run settles its tool and ends paused with no answer; an execution timeout
// settles the tool error and names the timeout; thinking stops at exactly the cap while the
// answer streams in full; a model without thinking sends none.
func TestSeedEndings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	for _, tc := range []struct {
		name     string
		client   clientKind
		slug     string
		scenario string
		want     []string // substrings of the stream, in order
		not      []string
	}{
		// The human-input tool ends before the paused final, which carries no answer text.
		{"paused chat", simChatOptIn, "openai-tools", "paused-for-input",
			[]string{`"phase":"start"`, `"phase":"end"`, `"status":"success"`, `{"event":"final","data":{"success":true,"status":"paused","output":{"content":""`, `"[DONE]"`}, []string{`"event":"error"`}},
		// The canvas: every tool settled, then execution:completed with status paused.
		{"paused canvas", simCanvas, "openai-all", "paused-for-input",
			[]string{`"phase":"end"`, `"type":"execution:completed"`, `"status":"paused"`, `[DONE]`}, []string{`block:completed`}},
		// The timed-out tool settles error, then the error terminal names the timeout.
		{"timeout chat", simChatOptIn, "openai-tools", "execution-timeout",
			[]string{`"phase":"end"`, `"status":"error"`, `{"event":"error","error":"Execution timed out"}`}, []string{`"event":"final"`}},
		// The canvas fails with execution:error, not execution:cancelled.
		{"timeout canvas", simCanvas, "anthropic-all", "execution-timeout",
			[]string{`"status":"error"`, `"type":"execution:error"`, `"error":"Execution timed out"`}, []string{`execution:cancelled`}},
		// A model without thinking: no thinking frame, the answer as usual.
		{"nothink chat", simChatOptIn, "anthropic-nothink-all", "thinking-answer",
			[]string{`"chunk":`, `"event":"final"`}, []string{`"event":"thinking"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := string(e.open(tc.client, tc.slug, tc.scenario, 5, t.Name()).body)
			at := 0
			for _, w := range tc.want {
				i := strings.Index(body[at:], w)
				if i < 0 {
					t.Fatalf("want %q after byte %d of the stream:\n%s", w, at, clipBody(body))
				}
				at += i + len(w)
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("want no %q in the stream:\n%s", n, clipBody(body))
				}
			}
		})
	}

	// The thinking cap: exactly the largest prefix within 524,288 UTF-16 code units (Sim counts
	// JavaScript string length, not bytes), answer in full. The scenario's thinking holds
	// multi-byte words, so the forwarded thinking is more bytes than units.
	sc, _ := scenarios.Embedded().Get("thinking-over-cap")
	exp := sc.Render(5).Expected()
	if simchat.UTF16Len(exp.AllThinking()) <= simchat.ThinkingCapUnits {
		t.Fatalf("thinking-over-cap thinks %d UTF-16 units, want more than the %d cap", simchat.UTF16Len(exp.AllThinking()), simchat.ThinkingCapUnits)
	}
	for _, c := range []clientKind{simChatOptIn, simCanvas} {
		body := e.open(c, "openai-all", "thinking-over-cap", 5, "cap-"+c.String()).body
		thinking, answer := thinkingAndAnswer(t, c, body)
		if units := simchat.UTF16Len(thinking); units != simchat.ThinkingCapUnits || len(thinking) <= units || !strings.HasPrefix(exp.AllThinking(), thinking) {
			t.Errorf("%s: forwarded %d bytes = %d UTF-16 units of thinking (a prefix of the script: %t), want the first %d units, more bytes than that",
				c, len(thinking), units, strings.HasPrefix(exp.AllThinking(), thinking), simchat.ThinkingCapUnits)
		}
		if answer != exp.FinalText() {
			t.Errorf("%s: answer %d bytes, want the full %d", c, len(answer), len(exp.FinalText()))
		}
	}
}

// thinkingAndAnswer concatenates the thinking and the answer chunks of a captured stream.
func thinkingAndAnswer(t *testing.T, c clientKind, body []byte) (thinking, answer string) {
	t.Helper()
	var th, an strings.Builder
	err := eachEvent(body, func(ev *sse.Event) {
		var f struct {
			Type  string `json:"type"`
			Event string `json:"event"`
			Chunk string `json:"chunk"`
			Data  json.RawMessage
		}
		if json.Unmarshal(ev.Data, &f) != nil {
			return
		}
		if c.dialect == simcanvas.Name {
			var d struct{ Text, Chunk string }
			_ = json.Unmarshal(f.Data, &d)
			switch f.Type {
			case simcanvas.TypeThinking:
				th.WriteString(d.Text)
			case simcanvas.TypeChunk:
				an.WriteString(d.Chunk)
			}
			return
		}
		switch {
		case f.Event == "thinking":
			var s string
			_ = json.Unmarshal(f.Data, &s)
			th.WriteString(s)
		case f.Event == "" && f.Chunk != "":
			an.WriteString(f.Chunk)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return th.String(), an.String()
}

// clipBody shortens a stream for a failure message.
func clipBody(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

// TestCanvasCancel: the user cancel request ends the execution execution:cancelled, with the
// running tool settled cancelled, and the checker (told of the cancel) accepts it; with the
// cancel-as-timeout fault the execution ends with the timeout's execution:error, reported as
// R-cancel-not-timeout alone. A second cancel of the finished execution is a 404, a malformed
// id a 400.
func TestCanvasCancel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault string
		want  string          // the terminal's type
		rules []protocol.Rule // the checker's verdict
	}{
		// The clean runtime.
		{"clean", "", simcanvas.TypeExecutionCancelled, nil},
		// The cancel reported as the execution timeout.
		{"cancel-as-timeout", "cancel-as-timeout", simcanvas.TypeExecutionError, []protocol.Rule{protocol.RCancelNotTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var f Faults
			if tc.fault != "" {
				var err error
				if f, err = ParseFaults([]string{tc.fault}); err != nil {
					t.Fatal(err)
				}
			}
			// Tools run for their scripted 1.2-1.5 s, so the cancel lands while one runs.
			e := newEnv(t, 0, Options{Faults: f, ToolTimeScale: 1})
			const slug, scenario = "openai-all", "stop-during-tool"
			req, err := http.NewRequest(http.MethodPost, e.url+"/api/workflows/"+slug+"/execute",
				strings.NewReader(`{"input":"`+directive(scenario, 2, t.Name())+`","stream":true}`))
			resp := e.send(t, req, err)
			var captured bytes.Buffer
			r := bufio.NewReader(io.TeeReader(resp.Body, &captured))
			readUntil(t, r, `"phase":"start"`)

			cl, err := simcanvas.New().Configure(slug, nil)
			if err != nil {
				t.Fatal(err)
			}
			stopReq, err := cl.(protocol.Stopper).NewStopRequest(t.Context(), e.url, &protocol.Session{ID: "c", Target: slug}, resp)
			if err != nil {
				t.Fatal(err)
			}
			stop, body := e.do(stopReq)
			if stop.StatusCode != http.StatusOK || !strings.Contains(body, `"success":true`) {
				t.Fatalf("cancel: %d %s", stop.StatusCode, body)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
			stream := captured.String()
			if !strings.Contains(stream, `"type":"`+tc.want+`"`) || !strings.Contains(stream, `"status":"cancelled"`) {
				t.Errorf("want %s and the tool settled cancelled:\n%s", tc.want, clipBody(stream))
			}

			sc, _ := scenarios.Embedded().Get(scenario)
			s := &protocol.Session{ID: "c", Target: slug, Expected: sc.Render(2).Expected()}
			ch := cl.NewChecker(s)
			ch.(protocol.StopObserver).StopSent()
			_ = replay(ch, []byte(stream))
			s.Aborted = true
			if got := rulesOf(ch.Finish(nil)); !slices.Equal(got, tc.rules) {
				t.Errorf("checker reported %v, want %v", got, tc.rules)
			}

			again, _ := e.do(mustRequest(t, stopReq.URL.String()))
			if again.StatusCode != http.StatusNotFound {
				t.Errorf("cancel of a finished execution: %d, want 404", again.StatusCode)
			}
			bad, _ := e.do(mustRequest(t, e.url+"/api/workflows/"+slug+"/executions/run_x/cancel"))
			if bad.StatusCode != http.StatusBadRequest {
				t.Errorf("cancel of a malformed id: %d, want 400", bad.StatusCode)
			}
		})
	}
}

// mustRequest is a POST {} to u.
func mustRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestModelRegistry: a deployments file's models list overrides the embedded registry, a model
// missing from it is taken to think, and an entry without a name is an error naming it.
func TestModelRegistry(t *testing.T) {
	t.Parallel()
	ds, err := ParseDeployments("d.yaml", []byte("deployments:\n  - {slug: a, wire: openai, model: o4-mini}\n  - {slug: b, wire: openai, model: mystery}\n  - {slug: c, wire: openai, model: gpt-4.1-nano}\nmodels:\n  - {name: o4-mini, thinking: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for slug, want := range map[string]bool{"a": false, "b": true, "c": false} {
		if d, _ := ds.Lookup(slug); d.ModelThinks() != want {
			t.Errorf("%s (%s): ModelThinks %v, want %v", slug, d.Model, d.ModelThinks(), want)
		}
	}
	if _, err := ParseDeployments("d.yaml", []byte("deployments:\n  - {slug: a, wire: openai, model: m}\nmodels:\n  - {thinking: true}\n")); err == nil || !strings.Contains(err.Error(), "d.yaml: models[0].name: missing") {
		t.Errorf("nameless model entry: %v", err)
	}
}

// TestSettledToolsDeployment: a deployment whose provider runs its tools settled (liveTools:
// false, openai-settled-all) sends opted-in and legacy clients alike the final turn's text in
// one chunk and no thinking, tool or chunk_reset frame, whatever its policy (all), as Sim's
// vLLM provider does; the sim-chat checker told so (the slug's "settled" part) finds nothing.
func TestSettledToolsDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	dep, ok := e.rt.deps.Lookup("openai-settled-all")
	if !ok || !dep.Policy().SettledTools || !dep.IncludeThinking || !dep.IncludeToolCalls {
		t.Fatalf("openai-settled-all: %+v, want policy all with settled tools", dep)
	}
	for _, scenario := range []string{"preamble-tool", "parallel-tools", "thinking-answer", "tool-chain", "provider-503-after-tool"} {
		for _, c := range []clientKind{simChatOptIn, simChatLegacy} {
			sc, _ := scenarios.Embedded().Get(scenario)
			exp := sc.Render(3).Expected()
			sr := e.open(c, dep.Slug, scenario, 3, "settled-"+scenario+"-"+c.String())
			body := string(sr.body)
			for _, not := range []string{`"event":"tool"`, `"event":"thinking"`, `"event":"chunk_reset"`} {
				if strings.Contains(body, not) {
					t.Errorf("%s %s: %s in the stream of a settled-tools deployment", scenario, c, not)
				}
			}
			_, answer := thinkingAndAnswer(t, c, sr.body)
			want, chunks := exp.FinalText(), 1
			if exp.ProviderError != "" {
				want, chunks = "", 0
			}
			if got := strings.Count(body, `"chunk":`); got != chunks || answer != want {
				t.Errorf("%s %s: %d chunks %q, want %d: %q", scenario, c, got, answer, chunks, want)
			}
			if vs := check(t, c, dep, scenario, 3, sr); len(vs) != 0 {
				t.Errorf("%s %s: violations %+v", scenario, c, vs)
			}
		}
	}
}
