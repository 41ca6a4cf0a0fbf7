package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// langGraphProfile is the langgraph dialect against both providers' deployments, with opts.
func langGraphProfile(opts protocol.Options) Profile {
	return Profile{Dialect: "langgraph", Options: opts, Weight: 1, Targets: []Target{{Slug: "openai-all"}, {Slug: "anthropic-all"}}}
}

// TestLangGraphAgainstTheRuntime: the langgraph dialect plays the default scenarios against the
// reference runtime's run stream (stateless and thread routes, on_disconnect cancel and
// continue) with no violation; each langgraph fault switch fails its rule and nothing else.
func TestLangGraphAgainstTheRuntime(t *testing.T) {
	t.Parallel()
	all := slices.Sorted(maps.Keys(DefaultMix().Scenarios))
	all = slices.DeleteFunc(all, func(s string) bool { return s == "long-answer" }) // too slow for a unit test
	for _, tc := range []struct {
		name      string
		fault     string
		scenarios []string
		opts      protocol.Options
		want      []protocol.Rule
	}{
		// A correct runtime, stateless runs cancelled on disconnect: every scenario, clean.
		{"clean", "", all, nil, nil},
		// Thread runs that go on when the client leaves: clean too, aborts judged turned round.
		{"clean-thread-continue", "", all, protocol.Options{"path": "/threads/{thread}/runs/stream", "onDisconnect": "continue"}, nil},
		// Event ids that go backwards.
		{"bad-id", "langgraph-bad-id", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{protocol.RLangGraphEvent}},
		// No metadata event.
		{"no-metadata", "langgraph-no-metadata", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{protocol.RLangGraphLifecycle}},
		// States that do not hold what the chunks streamed.
		{"state-mismatch", "langgraph-state-mismatch", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{protocol.RLangGraphMessage}},
		// An error event without its fields, where the script fails.
		{"bad-error", "langgraph-bad-error", []string{"provider-error-midstream"}, nil, []protocol.Rule{protocol.RLangGraphError}},
		// A run cancelled although the request said continue.
		{"cancel-on-continue", "langgraph-cancel-on-continue", []string{"abort-mid-answer"}, protocol.Options{"onDisconnect": "continue"}, []protocol.Rule{protocol.RAbort}},
		// The runtime ignores disconnects: a cancel run runs on.
		{"no-cancel", "no-cancel", []string{"abort-mid-answer"}, nil, []protocol.Rule{protocol.RAbort}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scale := testScale
			if tc.fault == "no-cancel" || tc.fault == "langgraph-cancel-on-continue" {
				scale = 0.25 // the rest of the answer must outlast the abort tolerance
			}
			var faults []string
			if tc.fault != "" {
				faults = append(faults, tc.fault)
			}
			s := newStack(t, scale, faults...)
			sessions := int64(16)
			if tc.fault == "" {
				sessions = 60
			}
			cfg := s.config(mixOf(t, tc.scenarios, langGraphProfile(tc.opts)), 4, sessions)
			cfg.NoLeakCheck = true // process-wide gauges: parallel tests share them
			run := runLoad(t, cfg)
			got, want := slices.Sorted(maps.Keys(run.Summary.Violations)), slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("violations %v, want %v\n%s", run.Summary.Violations, tc.want, describe(run))
			}
			if run.Summary.Verdict.Pass != (tc.want == nil) {
				t.Errorf("verdict pass %v, want %v\n%s", run.Summary.Verdict.Pass, tc.want == nil, describe(run))
			}
			c := run.Summary.Counters
			if tc.want == nil {
				if c.SessionsStarted != sessions || c.Outcome(measure.OutcomeInBandError) != 0 {
					t.Errorf("counters: %s", describe(run))
				}
				ttft, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.TimeToFirstToken })
				if ttft.TotalCount() == 0 {
					t.Errorf("no time to first token measured: %s", describe(run))
				}
			}
		})
	}
}
