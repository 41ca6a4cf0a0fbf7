package clientturn_test

import (
	"net/http"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
)

// TestAnthropicMessagesFaults proves every rule can fail: each mock fault switch breaks its rule and nothing
// else, on a scenario that exercises it.
func TestAnthropicMessagesFaults(t *testing.T) {
	t.Parallel()
	Faults(t, mocktest.Start, anthropicmessages.New(), Configured(t, anthropicmessages.New(), NoTruth), []Fault[mockprovider.Fault]{
		// One changed byte of the answer: only the content rule sees it.
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", Want: []protocol.Rule{anthropicmessages.RContent}},
		// Without ground truth the same stream is structurally fine.
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", NoTruth: true},
		// A scripted mid-stream failure that never comes.
		{Fault: mockprovider.FaultDropError, Scenario: "provider-error-midstream", Want: []protocol.Rule{anthropicmessages.RError}},
		// Blocks never stopped: message_delta arrives with blocks open.
		{Fault: mockprovider.FaultAnthropicNoBlockStop, Scenario: "tool-chain", Want: []protocol.Rule{anthropicmessages.RBlock}},
		// The same without ground truth, on interleaved parallel tool blocks.
		{Fault: mockprovider.FaultAnthropicNoBlockStop, Scenario: "parallel-tools", NoTruth: true, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// The stream ends after message_delta without message_stop.
		{Fault: mockprovider.FaultAnthropicNoMessageStop, Scenario: "plain-answer", NoTruth: true, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// A ping before every event, message_start included, is accepted (leniency).
		{Fault: mockprovider.FaultAnthropicPingStorm, Scenario: "thinking-answer"},
		// OpenAI faults leave this wire alone.
		{Fault: mockprovider.FaultOpenAINoDone, Scenario: "plain-answer"},
	})
}

// TestAnthropicMessagesCheckError judges a non-200 answer's body and whether the script called for it.
func TestAnthropicMessagesCheckError(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	failing := NewSession(t, "provider-429", 1)
	plain := NewSession(t, "plain-answer", 1)
	later := NewSession(t, "provider-503-after-tool", 1) // its HTTP 503 is at turn 1
	CheckErrors(t, anthropicmessages.New(), anthropicmessages.RError, []ErrorCase{
		// The scripted 429 in the API's shape.
		{Name: "scripted", S: failing, H: jsonHeader, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		// An error page instead of the error JSON.
		{Name: "html", S: failing, H: http.Header{"Content-Type": {"text/html"}}, Body: `<html>502</html>`, Broken: true},
		// The error JSON with a text/plain content type.
		{Name: "content type", S: failing, H: http.Header{"Content-Type": {"text/plain"}}, Body: `{"type":"error","error":{"type":"api_error","message":"x"}}`, Broken: true},
		// The OpenAI error shape on the Anthropic wire.
		{Name: "openai shape", S: failing, H: jsonHeader, Body: `{"error":{"message":"x","type":"server_error"}}`, Broken: true},
		// A well-formed error in a session whose script does not fail: the session's
		// http_error outcome, not a violation.
		{Name: "unscripted", S: plain, H: jsonHeader, Body: `{"type":"error","error":{"type":"api_error","message":"boom"}}`},
		// A session whose script fails, at another turn: the wrong turn is a violation.
		{Name: "wrong turn", S: later, H: jsonHeader, Body: `{"type":"error","error":{"type":"overloaded_error","message":"boom"}}`, Broken: true},
	})
	// Without ground truth any well-formed error is the server's right.
	if vs := Configured(t, anthropicmessages.New(), NoTruth).CheckError(500, jsonHeader, []byte(`{"type":"error","error":{"type":"api_error","message":"x"}}`), plain); len(vs) > 0 {
		t.Errorf("no ground truth: %v", vs)
	}
}
