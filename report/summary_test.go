package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/report"
)

// TestWriteSummary prints a failed run's terminal summary: one row per tallied scenario ×
// dialect with its quantiles and error outcomes, the outcomes, CPU per frame, violations, the leak and the
// reasons; a passing run says PASS and prints no cut line.
func TestWriteSummary(t *testing.T) {
	t.Parallel()
	run := fixture.Run(t, fixture.Options{Seed: 1, Leak: true, Violations: map[protocol.Rule]int64{protocol.RTerminal: 2}})
	tally := report.SessionTally{
		Sessions:   map[measure.Key]int64{{Scenario: "plain-answer", Dialect: "sim-chat"}: 600, {Scenario: "tool-loop", Dialect: "sim-chat"}: 500},
		Errors:     map[measure.Key]int64{{Scenario: "tool-loop", Dialect: "sim-chat"}: 1},
		Violations: map[measure.Key]int64{{Scenario: "tool-loop", Dialect: "sim-chat"}: 2},
		CPU:        time.Second,
	}
	var b strings.Builder
	if err := report.WriteSummary(&b, run, tally); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"scenario", "plain-answer", "tool-loop", "ms", "errors", "outcomes: completed 1670, scripted_error 30, aborted 300", "µs CPU per received frame",
		"violations: 2: " + string(protocol.RTerminal) + " 2", "LEAK ", "verdict: FAIL",
		"tokens: 72000 output, 2400.0 tokens/s, 55.67 requests/s; ttft p50", "tpot p50", "goodput: 1670 of 1700 judged sessions (98.2%), 55.67/s (ttft<100ms, tpot<10ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(out, "verdict: FAIL\n") {
		t.Errorf("the summary does not open with the headline's verdict:\n%s", out)
	}
	_, perKey, _ := strings.Cut(out, "sessions  errors")
	perKey, _, _ = strings.Cut(perKey, "\n\n")
	if strings.Contains(perKey, "compose") {
		t.Errorf("a dialect with no tallied sessions got a row in the per-key table:\n%s", out)
	}
	if strings.Index(out, "Worst keys") > strings.Index(out, "sessions  errors") {
		t.Errorf("the per-key table comes before the headline's worst keys:\n%s", out)
	}

	pass := fixture.Run(t, fixture.Options{Seed: 2})
	b.Reset()
	if err := report.WriteSummary(&b, pass, report.SessionTally{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "verdict: PASS") || strings.Contains(b.String(), "cancelled") {
		t.Errorf("passing run:\n%s", b.String())
	}
}
