package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// TestResponsesDialectAgainstTheMock: openai-responses, the client playing each scenario's
// tool loop one request per turn, plays the whole default scenario set against the mock's
// /v1/responses with no violation and no unscripted error, its token metrics from the wire;
// mock faults fail the run with their rule and nothing else; the OpenAI-like stream without
// [DONE] passes by default.
func TestResponsesDialectAgainstTheMock(t *testing.T) {
	t.Parallel()
	names := slices.Sorted(maps.Keys(DefaultMix().Scenarios))
	profile := Profile{Dialect: "openai-responses", Weight: 1, Targets: []Target{{Slug: "mock"}}}
	for _, tc := range []struct {
		fault mockprovider.Fault
		want  []protocol.Rule
	}{
		// The mock as it is: every scenario, clean.
		{mockprovider.FaultNone, nil},
		// Text that is not the script's: the content rule.
		{mockprovider.FaultTextDiffers, []protocol.Rule{openairesponses.RContent}},
		// Items never closed: the item rule.
		{mockprovider.FaultResponsesNoItemDone, []protocol.Rule{openairesponses.RItem}},
		// OpenAI's own stream ends without [DONE]: tolerated by default.
		{mockprovider.FaultResponsesNoDone, nil},
	} {
		t.Run(string(tc.fault)+"-", func(t *testing.T) {
			t.Parallel()
			mockURL := startMock(t, tc.fault)
			run := runLoad(t, Config{
				Target: mockURL, MockURL: mockURL, Mix: mixOf(t, names, profile), MixName: "responses",
				Clients: 8, Sessions: 80, ScriptTimeScale: testScale, NoLeakCheck: true, // process-wide gauges: parallel tests share them
			})
			got, want := slices.Sorted(maps.Keys(run.Summary.Violations)), slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("violations %v, want %v\n%s", run.Summary.Violations, tc.want, describe(run))
			}
			c := run.Summary.Counters
			if c.SessionsStarted != 80 || c.Errors() != 0 {
				t.Errorf("counters: %s", describe(run))
			}
			if tc.want == nil {
				if !run.Summary.Verdict.Pass {
					t.Errorf("verdict: %s", describe(run))
				}
				ttft, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.TimeToFirstToken })
				if ttft.TotalCount() == 0 {
					t.Errorf("no time to first token measured from the wire: %s", describe(run))
				}
			}
		})
	}
}
