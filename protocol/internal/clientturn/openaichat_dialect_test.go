package clientturn_test

import (
	"net/http"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openaichat"
)

// TestOpenAIChatFaults proves every rule can fail: each mock fault switch breaks its rule and nothing
// else, on a scenario that exercises it.
func TestOpenAIChatFaults(t *testing.T) {
	t.Parallel()
	Faults(t, mocktest.Start, openaichat.New(), Configured(t, openaichat.New(), NoTruth), []Fault[mockprovider.Fault]{
		// One changed byte of the answer: only the content rule sees it.
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", Want: []protocol.Rule{openaichat.RContent}},
		// Without ground truth the same stream is structurally fine.
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", NoTruth: true},
		// A scripted mid-stream failure that never comes.
		{Fault: mockprovider.FaultDropError, Scenario: "provider-error-midstream", Want: []protocol.Rule{openaichat.RError}},
		// Tool call deltas without their index cannot be assembled.
		{Fault: mockprovider.FaultOpenAIToolNoIndex, Scenario: "parallel-tools", Want: []protocol.Rule{openaichat.RToolCall}},
		// finish_reason stop on a tool turn (ground truth) …
		{Fault: mockprovider.FaultOpenAIWrongFinish, Scenario: "tool-chain", Want: []protocol.Rule{openaichat.RFinish}},
		// … and tool_calls on a plain answer, wrong even without ground truth.
		{Fault: mockprovider.FaultOpenAIWrongFinish, Scenario: "plain-answer", NoTruth: true, Want: []protocol.Rule{openaichat.RFinish}},
		// include_usage asked for, no usage chunk sent: against the script a violation …
		{Fault: mockprovider.FaultOpenAINoUsage, Scenario: "plain-answer", Want: []protocol.Rule{openaichat.RUsage}},
		// … and without ground truth (a real server: TGI, some gateways) allowed, the
		// tokens then estimated from the text.
		{Fault: mockprovider.FaultOpenAINoUsage, Scenario: "plain-answer", NoTruth: true},
		// The stream closes after the usage chunk without data: [DONE].
		{Fault: mockprovider.FaultOpenAINoDone, Scenario: "plain-answer", Want: []protocol.Rule{openaichat.RDone}},
		// delta.reasoning instead of delta.reasoning_content is accepted (leniency).
		{Fault: mockprovider.FaultOpenAIReasoningField, Scenario: "thinking-answer"},
		// Anthropic faults leave this wire alone.
		{Fault: mockprovider.FaultAnthropicNoBlockStop, Scenario: "tool-chain"},
	})
}

// TestOpenAIChatCheckError judges a non-200 answer's body and whether the script called for it.
func TestOpenAIChatCheckError(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	failing := NewSession(t, "provider-429", 1)
	plain := NewSession(t, "plain-answer", 1)
	later := NewSession(t, "provider-503-after-tool", 1) // its HTTP 503 is at turn 1
	CheckErrors(t, openaichat.New(), openaichat.RError, []ErrorCase{
		// The scripted 429 in the API's shape.
		{Name: "scripted", S: failing, H: jsonHeader, Body: `{"error":{"message":"slow down","type":"rate_limit_error"}}`},
		// An error page instead of the error JSON.
		{Name: "html", S: failing, H: http.Header{"Content-Type": {"text/html"}}, Body: `<html>502</html>`, Broken: true},
		// The error JSON with a text/plain content type.
		{Name: "content type", S: failing, H: http.Header{"Content-Type": {"text/plain"}}, Body: `{"error":{"message":"x"}}`, Broken: true},
		// A well-formed error in a session whose script does not fail: the session's
		// http_error outcome, not a violation.
		{Name: "unscripted", S: plain, H: jsonHeader, Body: `{"error":{"message":"boom","type":"server_error"}}`},
		// A session whose script fails, at another turn: the wrong turn is a violation.
		{Name: "wrong turn", S: later, H: jsonHeader, Body: `{"error":{"message":"boom","type":"server_error"}}`, Broken: true},
	})
	// Without ground truth any well-formed error is the server's right.
	if vs := Configured(t, openaichat.New(), NoTruth).CheckError(500, jsonHeader, []byte(`{"error":{"message":"x"}}`), plain); len(vs) > 0 {
		t.Errorf("no ground truth: %v", vs)
	}
}
