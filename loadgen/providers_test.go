package loadgen

import (
	"context"
	"maps"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/scenarios"
)

// providerProfiles are the two provider-wire client dialects, straight against the mock.
func providerProfiles() []Profile {
	return []Profile{
		{Dialect: "openai-chat", Weight: 1, Targets: []Target{{Slug: "mock"}}},
		{Dialect: "anthropic-messages", Weight: 1, Targets: []Target{{Slug: "mock"}}},
	}
}

// startMock serves the embedded library at testScale with fault on its own server.
func startMock(t *testing.T, fault mockprovider.Fault) string {
	t.Helper()
	mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: testScale, Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mock)
	srv.Config.Protocols = mockprovider.Protocols()
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// playFaultedMock plays the default mix's scenarios through profiles against a mock with fault,
// and checks the run broke exactly want's rules, started sessions without an error, and
// passed when want is nil.
func playFaultedMock(t *testing.T, fault mockprovider.Fault, want []protocol.Rule, mixName string, sessions int64, profiles ...Profile) *measure.Run {
	t.Helper()
	mockURL := startMock(t, fault)
	run := runLoad(t, Config{
		Target: mockURL, MockURL: mockURL, Mix: mixOf(t, slices.Sorted(maps.Keys(DefaultMix().Scenarios)), profiles...), MixName: mixName,
		Clients: 8, Sessions: sessions, ScriptTimeScale: testScale, NoLeakCheck: true, // process-wide gauges: parallel tests share them
	})
	if got := slices.Sorted(maps.Keys(run.Summary.Violations)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("violations %v, want %v\n%s", run.Summary.Violations, want, describe(run))
	}
	if c := run.Summary.Counters; c.SessionsStarted != sessions || c.Errors() != 0 {
		t.Errorf("counters: %s", describe(run))
	}
	if want == nil && !run.Summary.Verdict.Pass {
		t.Errorf("verdict: %s", describe(run))
	}
	return run
}

// TestProviderDialectsAgainstTheMock: openai-chat and anthropic-messages, the client playing
// each scenario's tool loop one request per turn, play the whole default scenario set against
// the mock with no violation and no unscripted error; aborts are joined with the mock's
// records (cancel latency); each mock fault switch fails the run with its rule and nothing
// unrelated.
func TestProviderDialectsAgainstTheMock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault mockprovider.Fault
		want  []protocol.Rule
	}{
		// The mock as it is: every scenario, both wires, clean.
		{mockprovider.FaultNone, nil},
		// Text that is not the script's: each wire's content rule.
		{mockprovider.FaultTextDiffers, []protocol.Rule{openaichat.RContent, anthropicmessages.RContent}},
		// No usage chunk: the openai wire's usage rule only.
		{mockprovider.FaultOpenAINoUsage, []protocol.Rule{openaichat.RUsage}},
		// No message_stop: the anthropic wire's message rule only.
		{mockprovider.FaultAnthropicNoMessageStop, []protocol.Rule{anthropicmessages.RMessage}},
		// A tolerated variant (reasoning as delta.reasoning): clean.
		{mockprovider.FaultOpenAIReasoningField, nil},
	} {
		t.Run(string(tc.fault)+"-", func(t *testing.T) {
			t.Parallel()
			run := playFaultedMock(t, tc.fault, tc.want, "providers", 120, providerProfiles()...)
			if tc.want == nil {
				cancel, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.CancelLatency })
				if cancel.TotalCount() == 0 {
					t.Errorf("no cancel latency measured for the aborted sessions")
				}
			}
		})
	}
}

// TestProviderDialectPlaysEveryTurn: a multi-turn session sends one request per scripted turn,
// each carrying the earlier turns (the mock plays the turn the conversation has reached).
func TestProviderDialectPlaysEveryTurn(t *testing.T) {
	t.Parallel()
	mockURL := startMock(t, mockprovider.FaultNone)
	run := runLoad(t, Config{
		Target: mockURL, MockURL: mockURL, Mix: mixOf(t, []string{"tool-chain"}, providerProfiles()...), MixName: "providers",
		Clients: 2, Sessions: 4, ScriptTimeScale: testScale, NoLeakCheck: true,
	})
	if len(run.Summary.Violations) != 0 || run.Summary.Counters.SessionsOK != 4 {
		t.Fatalf("%s", describe(run))
	}
	recs, err := mockrecords.Client{URL: mockURL}.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := scenarios.Embedded().Get("tool-chain")
	turns := map[int]int{}
	for _, r := range recs {
		turns[r.Turn]++
	}
	want := len(sc.Render(1).Turns)
	for turn := range want {
		if turns[turn] != 4 {
			t.Errorf("turn %d requested %d times, want once per session (4): %v", turn, turns[turn], turns)
		}
	}
}
