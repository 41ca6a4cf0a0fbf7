package loadgen

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
)

// TestAbortBeforeHeaders: a client scripted to leave as soon as its request is written never
// sees a response head; the session is an abort, not an error, and the runtime cancels its
// provider stream (no R-abort) and leaks nothing: its own stream, provider stream and tool
// gauges, and the mock's, return to their baseline (the stack's config: the process's
// goroutines are every parallel test's). The same scenario with `after: 10s` (the stream is
// over by then) shows the head is measured when the client stays.
func TestAbortBeforeHeaders(t *testing.T) {
	t.Parallel()
	const doc = "name: %s\ntiming:\n  ttft: 200ms\n  itl: 10ms\nturns:\n  - text: {tokens: 40}\nclient:\n  abort: %s\n"
	for _, tc := range []struct {
		name, trigger string
		wantAborted   int64
		wantHeads     int64
	}{
		// leaves before the head: every session aborted, none saw a head
		{"before headers", "{beforeHeaders: true}", 6, 0},
		// the control: the trigger comes after the stream ended, so every head is measured
		{"after the stream", "{after: 10s}", 0, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "leave.yaml"), fmt.Appendf(nil, doc, "leave", tc.trigger), 0o644); err != nil {
				t.Fatal(err)
			}
			lib, err := scenarios.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			st := newStackOf(t, lib, testScale)
			cfg := st.config(mixOf(t, []string{"leave"}, optedInAll(), composeAll()), 3, 6)
			cfg.Library = lib
			run := runLoad(t, cfg)
			c := run.Summary.Counters
			if c.Outcome(measure.OutcomeAborted) != tc.wantAborted || c.Errors() != 0 || !run.Summary.Verdict.Pass {
				t.Errorf("want %d aborted, no errors, a pass:\n%s", tc.wantAborted, describe(run))
			}
			compared := map[string]bool{}
			for _, l := range run.Summary.Leaks {
				compared[l.Source+" "+l.Name] = true
			}
			for _, g := range []string{"runtime " + agentruntime.MetricClientStreamsOpen, "runtime " + agentruntime.MetricProviderStreams, "mock streambench_mock_active_streams"} {
				if !compared[g] {
					t.Errorf("leak check did not compare %s: %+v", g, run.Summary.Leaks)
				}
			}
			heads, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.Headers })
			if heads.TotalCount() != tc.wantHeads {
				t.Errorf("%d response heads measured, want %d", heads.TotalCount(), tc.wantHeads)
			}
		})
	}
}
