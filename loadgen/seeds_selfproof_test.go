package loadgen

import (
	"maps"
	"slices"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

// nothinkAll is the opted-in client of a deployment whose model has no thinking.
func nothinkAll() Profile {
	return Profile{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1,
		Targets: []Target{{Slug: "openai-nothink-all", Options: protocol.Options{"policy": "all"}}}}
}

// nothinkCanvas is the canvas client of such a workflow.
func nothinkCanvas() Profile {
	return Profile{Dialect: "sim-canvas", Weight: 1, Targets: []Target{{Slug: "anthropic-nothink-all"}}}
}

// settledAll is the opted-in client of a deployment whose provider runs its tools settled,
// told so by the option (as `load --option liveTools=false` tells it), with a tool prefix: the
// mock names its calls custom_<name> (the directive's toolPrefix) and the tool frames of a
// live relay carry them.
func settledAll() Profile {
	return Profile{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true, "liveTools": false, "toolPrefix": "custom_"}, Weight: 1,
		Targets: []Target{{Slug: "openai-settled-all", Options: protocol.Options{"policy": "all"}}}}
}

// TestSelfProofSeedFaults: each Sim seed fault switch fails a load run with its rule alone, and
// the same sessions against the clean runtime pass (the canvas stop scenarios send the user
// cancel request through the generator's Stopper path).
func TestSelfProofSeedFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault     string
		scenarios []string
		profiles  []Profile
		want      protocol.Rule
	}{
		// A paused run reported as completed, to opted-in, legacy and canvas clients.
		{"pause-not-reported", []string{"paused-for-input"}, []Profile{optedInAll(), legacyAll(), canvas()}, protocol.RPaused},
		// The preamble persisted in the final output.
		{"preamble-in-output", []string{"preamble-tool", "tool-chain"}, []Profile{optedInAll(), legacyAll(), canvas()}, protocol.RFinalOutput},
		// Thinking from models without thinking.
		{"nothink-thinking", []string{"thinking-answer"}, []Profile{nothinkAll(), nothinkCanvas()}, protocol.RThinkingCapability},
		// The execution timeout reported as a cancel.
		{"timeout-as-cancel", []string{"execution-timeout"}, []Profile{optedInAll(), legacyAll(), canvas()}, protocol.RCancelNotTimeout},
		// The canvas user cancel reported as the timeout.
		{"cancel-as-timeout", []string{"stop-during-tool"}, []Profile{canvas()}, protocol.RCancelNotTimeout},
		// Thinking past 524,288 UTF-16 code units.
		{"uncapped-thinking", []string{"thinking-over-cap"}, []Profile{optedInAll(), canvas()}, protocol.RThinkingCap},
		// A provider that runs its tools settled streamed live (thinking, tool frames with the
		// prefixed names, resets).
		{"live-settled-tools", []string{"preamble-tool", "parallel-tools", "thinking-answer", "provider-503-after-tool"}, []Profile{settledAll()}, simchat.RSettledTools},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			for _, fault := range []string{"", c.fault} {
				var faults []string
				if fault != "" {
					faults = []string{fault}
				}
				s := newStack(t, testScale, faults...)
				run := s.playNoLeakCheck(t, mixOf(t, c.scenarios, c.profiles...), 4, 12)
				got := run.Summary.Violations
				switch {
				case fault == "" && (len(got) != 0 || !run.Summary.Verdict.Pass):
					t.Errorf("clean runtime: violations %v, verdict %v\n%s", got, run.Summary.Verdict.Pass, describe(run))
				case fault != "" && (!slices.Equal(slices.Sorted(maps.Keys(got)), []protocol.Rule{c.want}) || run.Summary.Verdict.Pass):
					t.Errorf("fault %s: violations %v (verdict %v), want %s alone\n%s", fault, got, run.Summary.Verdict.Pass, c.want, describe(run))
				}
			}
		})
	}
}

// TestToolPrefixThroughTheStack: the sim-chat option toolPrefix=custom_ puts toolPrefix in the
// directive, the mock names its calls custom_<name>, the reference runtime runs them under those
// names and its tool frames carry them: the checker, expecting the prefixed names (and R-tool-gate
// for any other), finds nothing, for opted-in and legacy clients.
func TestToolPrefixThroughTheStack(t *testing.T) {
	t.Parallel()
	prefixed := func(p Profile) Profile {
		p.Options = protocol.MergeOptions(p.Options, protocol.Options{"toolPrefix": "custom_"})
		return p
	}
	s := newStack(t, testScale)
	run := s.playNoLeakCheck(t, mixOf(t, []string{"preamble-tool", "parallel-tools", "tool-error", "tool-chain"}, prefixed(optedInAll()), prefixed(legacyAll())), 4, 16)
	if len(run.Summary.Violations) != 0 || !run.Summary.Verdict.Pass {
		t.Errorf("toolPrefix=custom_: violations %v, verdict %v\n%s", run.Summary.Violations, run.Summary.Verdict.Pass, describe(run))
	}
}
