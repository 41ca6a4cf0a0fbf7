package loadgen

import (
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
			run := playFaultedMock(t, tc.fault, tc.want, "responses", 80, profile)
			if tc.want == nil {
				ttft, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.TimeToFirstToken })
				if ttft.TotalCount() == 0 {
					t.Errorf("no time to first token measured from the wire: %s", describe(run))
				}
			}
		})
	}
}
