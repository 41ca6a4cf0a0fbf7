package anthropicmessages

import (
	"net/http"
	"slices"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/scenarios"
)

// TestLibraryClean plays every embedded scenario, every turn, against the mock: a correct
// provider breaks no rule, with ground truth and without.
func TestLibraryClean(t *testing.T) {
	t.Parallel()
	url := clienttest.StartMock(t, mockprovider.FaultNone)
	multi := 0
	for _, mode := range []struct {
		name string
		d    *Dialect
	}{{"ground-truth", New()}, {"no-ground-truth", New(WithNoGroundTruth())}} {
		for _, name := range scenarios.Embedded().Names() {
			for seed := uint64(1); seed <= 3; seed++ {
				s := clienttest.NewSession(t, name, seed)
				res := clienttest.Play(t, mode.d, url, s)
				if len(res.Violations) > 0 {
					t.Errorf("%s %s seed %d: %d requests, statuses %v: %v", mode.name, name, seed, res.Requests, res.Statuses, res.Violations)
				}
				if !clientturn.NoGroundTruth(&mode.d.Client) {
					clienttest.CheckKinds(t, s, res)
				}
				if res.Requests > 1 {
					multi++
				}
				if want := mode.d.Turns(s); res.Requests != want {
					t.Errorf("%s %s seed %d: %d requests, want %d", mode.name, name, seed, res.Requests, want)
				}
			}
		}
	}
	if multi == 0 {
		t.Error("no session played more than one turn: the tool loop was never exercised")
	}
}

// TestFaults proves every rule can fail: each mock fault switch breaks its rule and nothing
// else, on a scenario that exercises it.
func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault    mockprovider.Fault
		scenario string
		noTruth  bool
		want     []protocol.Rule
	}{
		// One changed byte of the answer: only the content rule sees it.
		{mockprovider.FaultTextDiffers, "plain-answer", false, []protocol.Rule{protocol.RAnthropicContent}},
		// Without ground truth the same stream is structurally fine.
		{mockprovider.FaultTextDiffers, "plain-answer", true, nil},
		// A scripted mid-stream failure that never comes.
		{mockprovider.FaultDropError, "provider-error-midstream", false, []protocol.Rule{protocol.RAnthropicError}},
		// Blocks never stopped: message_delta arrives with blocks open.
		{mockprovider.FaultAnthropicNoBlockStop, "tool-chain", false, []protocol.Rule{protocol.RAnthropicBlock}},
		// The same without ground truth, on interleaved parallel tool blocks.
		{mockprovider.FaultAnthropicNoBlockStop, "parallel-tools", true, []protocol.Rule{protocol.RAnthropicBlock}},
		// The stream ends after message_delta without message_stop.
		{mockprovider.FaultAnthropicNoMessageStop, "plain-answer", true, []protocol.Rule{protocol.RAnthropicMessage}},
		// A ping before every event, message_start included, is accepted (leniency).
		{mockprovider.FaultAnthropicPingStorm, "thinking-answer", false, nil},
		// OpenAI faults leave this wire alone.
		{mockprovider.FaultOpenAINoDone, "plain-answer", false, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault)+"/"+tt.scenario, func(t *testing.T) {
			t.Parallel()
			url := clienttest.StartMock(t, tt.fault)
			d := New()
			if tt.noTruth {
				d = New(WithNoGroundTruth())
			}
			res := clienttest.Play(t, d, url, clienttest.NewSession(t, tt.scenario, 7))
			if got := clienttest.Rules(res.Violations); !slices.Equal(got, tt.want) {
				t.Errorf("rules %v, want %v; violations: %v", got, tt.want, res.Violations)
			}
		})
	}
}

// TestCheckError judges a non-200 answer's body and whether the script called for it.
func TestCheckError(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	failing := clienttest.NewSession(t, "provider-429", 1)
	plain := clienttest.NewSession(t, "plain-answer", 1)
	tests := []struct {
		name   string
		s      *protocol.Session
		h      http.Header
		body   string
		broken bool
	}{
		// The scripted 429 in the API's shape.
		{"scripted", failing, jsonHeader, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, false},
		// An error page instead of the error JSON.
		{"html", failing, http.Header{"Content-Type": {"text/html"}}, `<html>502</html>`, true},
		// The error JSON with a text/plain content type.
		{"content type", failing, http.Header{"Content-Type": {"text/plain"}}, `{"type":"error","error":{"type":"api_error","message":"x"}}`, true},
		// The OpenAI error shape on the Anthropic wire.
		{"openai shape", failing, jsonHeader, `{"error":{"message":"x","type":"server_error"}}`, true},
		// A well-formed error where the script streams.
		{"unscripted", plain, jsonHeader, `{"type":"error","error":{"type":"api_error","message":"boom"}}`, true},
	}
	for _, tt := range tests {
		vs := New().CheckError(http.StatusTooManyRequests, tt.h, []byte(tt.body), tt.s)
		if got := len(vs) > 0; got != tt.broken {
			t.Errorf("%s: violations %v, want broken=%t", tt.name, vs, tt.broken)
		}
		for _, v := range vs {
			if v.Rule != protocol.RAnthropicError {
				t.Errorf("%s: rule %s, want %s", tt.name, v.Rule, protocol.RAnthropicError)
			}
		}
	}
	// Without ground truth any well-formed error is the server's right.
	if vs := New(WithNoGroundTruth()).CheckError(500, jsonHeader, []byte(`{"type":"error","error":{"type":"api_error","message":"x"}}`), plain); len(vs) > 0 {
		t.Errorf("no ground truth: %v", vs)
	}
}
