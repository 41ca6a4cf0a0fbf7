package interop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
)

// RouteOutcome is the judgement of a run against a route in front of the mock meant to cancel
// its provider request when its client leaves (an AI SDK chat route wired to abortSignal).
type RouteOutcome struct {
	// Cancel is the cancel latency (client abort → the mock saw the route's provider request
	// lose its client) over every scenario, in µs; Max its largest value.
	Cancel            TTFC
	Max               int64
	TTFT              TTFC     // for context
	Sessions, Aborted int64    // started; aborted or stopped on purpose
	Known             []string // each known finding the run showed, "R-RULE×N" or "OUTCOME×N"
	NoMock            bool     // no cancel latency was required (Known.NoMock)
	Failures          []string // why the outcome fails; empty: it passes
}

// Pass reports whether the run was clean and measured a cancel latency.
func (o *RouteOutcome) Pass() bool { return len(o.Failures) == 0 }

// Known is what a route is known to do wrong (docs/INTEROP.md), reported and not failing.
type Known struct {
	Rules []protocol.Rule
	// Outcomes are error outcomes its sessions are known to end with (truncated: a server that
	// drops a provider's mid-stream error and ends the stream without its terminal).
	Outcomes []measure.Outcome
	NoMock   bool // the route's model is not the mock: no cancel latency can be measured
}

// JudgeRoute judges run: sessions started, no unscripted errors, leaks or violations, not
// interrupted, and a cancel latency measured (aborts that never reached the mock prove
// nothing). What known lists is reported in Known and does not fail the outcome.
func JudgeRoute(run *measure.Run, known Known) RouteOutcome {
	o := RouteOutcome{NoMock: known.NoMock}
	fail := func(format string, args ...any) { o.Failures = append(o.Failures, fmt.Sprintf(format, args...)) }
	s := &run.Summary
	o.Sessions, o.Aborted = s.Counters.SessionsStarted, s.Counters.Outcome(measure.OutcomeAborted)
	// Merged cannot drop values: every histogram of a run shares NewHistogram's range.
	cancel, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.CancelLatency })
	ttft, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.TimeToFirstToken })
	o.Cancel, o.TTFT, o.Max = quantiles(cancel), quantiles(ttft), cancel.Max()
	checkRun(fail, "", s, known.Outcomes)
	for _, oc := range known.Outcomes {
		if n := s.Counters.Outcome(oc); n > 0 {
			o.Known = append(o.Known, fmt.Sprintf("%s×%d", oc, n))
		}
	}
	abort := ""
	if n := s.Violations[protocol.RAbort]; n > 0 && !slices.Contains(known.Rules, protocol.RAbort) {
		abort = fmt.Sprintf("R-abort×%d", n)
	}
	if v := otherViolations(s.Violations, known.Rules); v != "" || abort != "" {
		fail("violations: %s", strings.Trim(abort+", "+v, ", "))
	}
	for _, r := range known.Rules {
		if n := s.Violations[r]; n > 0 {
			o.Known = append(o.Known, fmt.Sprintf("%s×%d", r, n))
		}
	}
	if o.Cancel.Count == 0 && !known.NoMock {
		fail("no cancel latency measured (%d sessions aborted): were the aborts' provider streams open, and was --mock given?", o.Aborted)
	}
	return o
}

// Report writes the outcome for people.
func (o *RouteOutcome) Report(route string) string {
	var b strings.Builder
	if o.NoMock && o.Cancel.Count == 0 {
		fmt.Fprintf(&b, "%s cancel latency: not measured (its model is not the mock), %d sessions aborted or stopped\n", route, o.Aborted)
	} else {
		fmt.Fprintf(&b, "%s cancel latency (client abort → the mock saw the route's provider request go), %d aborts measured of %d aborted or stopped: p50 %s, p99 %s, max %s\n",
			route, o.Cancel.Count, o.Aborted, ms(o.Cancel.P50), ms(o.Cancel.P99), ms(o.Max))
	}
	fmt.Fprintf(&b, "%s TTFT over %d streams: p50 %s, p99 %s (%d sessions)\n", route, o.TTFT.Count, ms(o.TTFT.P50), ms(o.TTFT.P99), o.Sessions)
	if len(o.Known) > 0 {
		fmt.Fprintf(&b, "%s known findings (reported, not failing; docs/INTEROP.md): %s\n", route, strings.Join(o.Known, ", "))
	}
	writeVerdict(&b, o.Failures)
	return b.String()
}

// ms formats µs as milliseconds.
func ms(us int64) string { return fmt.Sprintf("%.1f ms", float64(us)/1000) }

// writeVerdict ends a report: PASS, or FAIL and each failure.
func writeVerdict(b *strings.Builder, failures []string) {
	if len(failures) == 0 {
		b.WriteString("PASS\n")
		return
	}
	b.WriteString("FAIL\n")
	for _, f := range failures {
		fmt.Fprintf(b, "  - %s\n", f)
	}
}

// ParseRules parses rule names (a --known flag's values) against the default dialects' rules.
func ParseRules(names []string) ([]protocol.Rule, error) {
	var rules []protocol.Rule
	for _, n := range names {
		r, err := dialects.Default().Rules().Parse(n)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}
