package mockprovider

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// TestFaultOption rejects unknown fault names by name and lists every fault.
func TestFaultOption(t *testing.T) {
	t.Parallel()
	_, err := New(Options{Library: scenarios.Embedded(), Fault: "no-such-fault"})
	if err == nil || !strings.Contains(err.Error(), `unknown fault "no-such-fault"`) || !strings.Contains(err.Error(), "openai-no-done") {
		t.Fatalf("New with an unknown fault: %v", err)
	}
	if got := len(Faults()); got != len(faultSpecs) || got < 10 {
		t.Errorf("Faults() lists %d, want all %d", got, len(faultSpecs))
	}
}

// TestFaultRewrites checks each byte-level fault on the wire it names, and that it leaves the
// other wire alone; the client dialects' tests prove which rule each one breaks.
func TestFaultRewrites(t *testing.T) {
	t.Parallel()
	const directive = "[[streambench scenario=parallel-tools seed=3]]"
	tests := []struct {
		fault   Fault
		path    string
		body    string
		missing string // in the clean stream, absent from the faulty one
	}{
		// The end marker goes.
		{FaultOpenAINoDone, PathOpenAI, openaiBody(directive, true), "data: [DONE]"},
		// Tool call deltas lose their index.
		{FaultOpenAIToolNoIndex, PathOpenAI, openaiBody(directive, true), `"tool_calls":[{"index":`},
		// The usage chunk goes.
		{FaultOpenAINoUsage, PathOpenAI, openaiBody(directive, true), `"prompt_tokens"`},
		// finish_reason tool_calls becomes stop.
		{FaultOpenAIWrongFinish, PathOpenAI, openaiBody(directive, true), `"finish_reason":"tool_calls"`},
		// No block is stopped.
		{FaultAnthropicNoBlockStop, PathAnthropic, anthropicBody(directive, true), "event: content_block_stop"},
		// No message_stop.
		{FaultAnthropicNoMessageStop, PathAnthropic, anthropicBody(directive, true), "event: message_stop"},
	}
	read := func(url, body string) string {
		resp := post(t, http.DefaultClient, url, body, nil)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: HTTP %d, %v: %s", url, resp.StatusCode, err, b)
		}
		return string(b)
	}
	_, clean := newTestMock(t, Options{TimeScale: 0})
	for _, tt := range tests {
		_, faulty := newTestMock(t, Options{TimeScale: 0, Fault: tt.fault})
		if !strings.Contains(read(clean.URL+tt.path, tt.body), tt.missing) {
			t.Fatalf("%s: the clean stream has no %q", tt.fault, tt.missing)
		}
		if got := read(faulty.URL+tt.path, tt.body); strings.Contains(got, tt.missing) {
			t.Errorf("%s: the stream still has %q:\n%s", tt.fault, tt.missing, got)
		}
		other, otherBody := PathAnthropic, anthropicBody(directive, true)
		if tt.path == PathAnthropic {
			other, otherBody = PathOpenAI, openaiBody(directive, true)
		}
		if got, want := normalize(read(faulty.URL+other, otherBody)), normalize(read(clean.URL+other, otherBody)); got != want {
			t.Errorf("%s: changed the other wire:\n%s\nwant:\n%s", tt.fault, got, want)
		}
	}
}

// responseIdentity matches what differs between two plays of one turn: ids (from the request
// sequence), created times and the signatures derived from ids.
var responseIdentity = regexp.MustCompile(`sb\d+|"created(?:_at)?":\d+|"signature":"[^"]*"`)

func normalize(stream string) string { return responseIdentity.ReplaceAllString(stream, "…") }

// TestFaultsOnEveryRequestShape plays every fault switch on every wire, streamed and as a
// non-streaming answer, beside the same request to a clean mock: the response changes exactly
// where the fault applies (its wire, or every wire; answers only for the faults that mean
// something there), and a changed answer is still JSON.
func TestFaultsOnEveryRequestShape(t *testing.T) {
	t.Parallel()
	scenarioOf := map[Fault]string{
		FaultDropError:            "provider-error-midstream",
		FaultResponsesNoFailed:    "provider-error-midstream",
		FaultOpenAIToolNoIndex:    "parallel-tools",
		FaultOpenAIWrongFinish:    "parallel-tools",
		FaultOpenAIReasoningField: "thinking-answer",
	}
	wires := []struct{ name, path string }{{"openai", PathOpenAI}, {"anthropic", PathAnthropic}, {responsesWireName, PathResponses}}
	body := func(wire, text string, stream bool) string {
		switch wire {
		case "openai":
			return openaiBody(text, stream)
		case "anthropic":
			return anthropicBody(text, stream)
		}
		b, _ := json.Marshal(map[string]any{"model": "mock-model", "stream": stream, "input": text})
		return string(b)
	}
	read := func(url, body string) string {
		resp := post(t, http.DefaultClient, url, body, nil)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "application/json" && !json.Valid(b) {
			t.Errorf("POST %s: the answer is not JSON:\n%s", url, b)
		}
		return strconv.Itoa(resp.StatusCode) + " " + normalize(string(b))
	}
	_, clean := newTestMock(t, Options{TimeScale: 0})
	for f, spec := range faultSpecs {
		_, faulty := newTestMock(t, Options{TimeScale: 0, Fault: f})
		text := directive(cmp.Or(scenarioOf[f], "plain-answer"), 3, "")
		for _, wire := range wires {
			for _, stream := range []bool{true, false} {
				applies := (spec.wire == "" || spec.wire == wire.name) && (stream || spec.wire == "" || answerFaults[f] != nil)
				b := body(wire.name, text, stream)
				got, want := read(faulty.URL+wire.path, b), read(clean.URL+wire.path, b)
				shape := map[bool]string{true: "stream", false: "answer"}[stream]
				switch {
				case applies && got == want:
					t.Errorf("%s on the %s %s: unchanged:\n%s", f, wire.name, shape, got)
				case !applies && got != want:
					t.Errorf("%s on the %s %s: changed where it does not apply:\n%s\nwant:\n%s", f, wire.name, shape, got, want)
				}
			}
		}
	}
}
