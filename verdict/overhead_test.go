package verdict_test

import (
	"testing"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/verdict"
)

// TestOnOverhead: a threshold on ttfc or ttft becomes the same one on its overhead when the
// run recorded the overhead within the threshold's scope; any other threshold, or a scope
// without the overhead, stays as given. The fixture records ttfc.overhead for every key and
// ttft.overhead for plain-answer on sim-chat only.
func TestOnOverhead(t *testing.T) {
	t.Parallel()
	run := fixture.Run(t, fixture.Options{Seed: 7})
	for _, tc := range []struct {
		expr, want string
	}{
		{"ttfc.p99<300ms", "ttfc.overhead.p99<300ms"},                                                                           // the common case
		{"ttft.p50 <= 1s", "ttft.overhead.p50 <= 1s"},                                                                           // ttft, spacing kept
		{"ttfc{scenario=tool-loop}.p95<1s", "ttfc.overhead{scenario=tool-loop}.p95<1s"},                                         // scoped, recorded there
		{"ttft{scenario=plain-answer,dialect=sim-chat}.max<2s", "ttft.overhead{scenario=plain-answer,dialect=sim-chat}.max<2s"}, // both scopes
		{"ttft{dialect=compose}.p99<1s", "ttft{dialect=compose}.p99<1s"},                                                        // no ttft.overhead for compose
		{"ttfc.overhead.p99<50ms", "ttfc.overhead.p99<50ms"},                                                                    // already the overhead
		{"connect.p99<50ms", "connect.p99<50ms"},                                                                                // not a scripted latency
		{"errors<1%", "errors<1%"},                                                                                              // not a latency
	} {
		th, err := verdict.ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, changed := verdict.OnOverhead(th, run)
		if got.Expr != tc.want || changed != (tc.want != tc.expr) {
			t.Errorf("OnOverhead(%q) = %q, %v; want %q", tc.expr, got.Expr, changed, tc.want)
		}
		if changed {
			// The rewritten threshold judges the overhead: the same value verdict.Value reads.
			res := mustJudge(t, run, verdict.Config{Thresholds: []verdict.Threshold{got}})
			var found bool
			for _, c := range res.Checks {
				found = found || c.Name == tc.want
			}
			if !found {
				t.Errorf("Judge with %q has no check of that name", tc.want)
			}
		}
	}
}
