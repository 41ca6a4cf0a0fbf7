package loadgen

import (
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simcanvas"
)

// canvasRedacted is sim-canvas against both providers' PII-redacting workflows.
func canvasRedacted() Profile {
	return Profile{Dialect: "sim-canvas", Weight: 1, Options: protocol.Options{"redacted": true},
		Targets: []Target{{Slug: "openai-redacted"}, {Slug: "anthropic-redacted"}}}
}

// canvasScenarios are the PII and reconnect scenarios, with a plain one and a tool loop.
var canvasScenarios = []string{"pii-answer", "pii-tool", "reconnect-mid-answer", "reconnect-after-end", "preamble-tool"}

// TestCanvasSeedsClean: PII-redacted blocks and reconnects against a correct runtime: no
// violations, no errors, and every resumable execution released (leak check not run here:
// the parallel fault tests share the process).
func TestCanvasSeedsClean(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	run := s.playNoLeakCheck(t, mixOf(t, canvasScenarios, canvas(), canvasRedacted()), 6, 40)
	sum := run.Summary
	if n := sum.TotalViolations(); n != 0 || !sum.Verdict.Pass {
		t.Fatalf("clean runtime: %d violations, verdict %v\n%s", n, sum.Verdict.Pass, describe(run))
	}
	if sum.Counters.Outcome(measure.OutcomeAborted) != 0 {
		t.Errorf("a reconnect is not an abort: %+v", sum.Counters)
	}
}

// TestCanvasSeedsFaults: each redaction and reconnect fault switch is caught by its rule and
// by nothing else.
func TestCanvasSeedsFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault     string
		scenarios []string
		profiles  []Profile
		rule      protocol.Rule
	}{
		// Live chunks, resets, thinking and tool frames for a redacted block.
		{"redact-live", []string{"pii-answer", "pii-tool"}, []Profile{canvasRedacted()}, simcanvas.RRedactLive},
		// The block's output with its PII.
		{"unredacted-output", []string{"pii-answer", "pii-tool"}, []Profile{canvasRedacted()}, simcanvas.RRedactOutput},
		// The chunks, reset, thinking and tool frames missed while away, replayed.
		{"replay-live-only", []string{"reconnect-after-end"}, []Profile{canvas()}, simcanvas.RReconnectLiveOnly},
		// The stream:done, block:completed and terminal missed while away, not replayed.
		{"drop-replay", []string{"reconnect-after-end"}, []Profile{canvas()}, simcanvas.RReconnectReplay},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, testScale, c.fault)
			run := s.playNoLeakCheck(t, mixOf(t, c.scenarios, c.profiles...), 4, 12)
			checkFaultRules(t, run, c.fault, []protocol.Rule{c.rule}, nil)
		})
	}
}
