package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
)

// aguiAll is ag-ui against both providers' deployments.
func aguiAll() Profile {
	return Profile{Dialect: "ag-ui", Weight: 1, Targets: []Target{{Slug: "openai-all"}, {Slug: "anthropic-all"}}}
}

// aguiScenarios is the default mix's scenarios but long-answer (2,000 tokens: too slow here).
func aguiScenarios() []string {
	names := slices.Sorted(maps.Keys(DefaultMix().Scenarios))
	return slices.DeleteFunc(names, func(n string) bool { return n == "long-answer" })
}

// TestAGUIAgainstTheRuntime: ag-ui plays the default scenarios against the reference
// runtime's /agui/{agent} with no violation; scripted errors end in RUN_ERROR (scripted_error).
func TestAGUIAgainstTheRuntime(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	run := runLoad(t, s.config(mixOf(t, aguiScenarios(), aguiAll()), 6, 60))
	sum := run.Summary
	if n := sum.TotalViolations(); n != 0 || !sum.Verdict.Pass {
		t.Fatalf("%d violations, verdict %v\n%s", n, sum.Verdict.Pass, describe(run))
	}
	c := sum.Counters
	if c.SessionsStarted != 60 || c.Outcome(measure.OutcomeInBandError) != 0 || c.Outcome(measure.OutcomeTruncated) != 0 {
		t.Errorf("counters: %s", describe(run))
	}
	if c.Outcome(measure.OutcomeScriptedError) == 0 || c.Outcome(measure.OutcomeCompleted) == 0 {
		t.Errorf("want completed and scripted_error sessions: %s", describe(run))
	}
}

// TestAGUIFaults: each ag-ui fault switch is caught by its rule and nothing else.
func TestAGUIFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault     string
		scenarios []string
		want      protocol.Rule
	}{
		{"agui-no-run-started", []string{"plain-answer"}, agui.RRun},
		{"agui-open-message", []string{"plain-answer"}, agui.RMessage},
		{"agui-open-reasoning", []string{"thinking-answer"}, agui.RReasoning},
		{"agui-open-tool", []string{"preamble-tool"}, agui.RTool},
		{"agui-open-step", []string{"plain-answer"}, agui.RStep},
		{"agui-bad-state-delta", []string{"preamble-tool"}, agui.RState},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, testScale, tc.fault)
			run := runLoad(t, s.config(mixOf(t, tc.scenarios, aguiAll()), 2, 4))
			got := slices.Sorted(maps.Keys(run.Summary.Violations))
			if !slices.Equal(got, []protocol.Rule{tc.want}) {
				t.Errorf("violations %v, want only %s\n%s", run.Summary.Violations, tc.want, describe(run))
			}
			if run.Summary.Verdict.Pass {
				t.Errorf("verdict PASS with fault %s", tc.fault)
			}
		})
	}
}
