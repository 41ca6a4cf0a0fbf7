// Package interop judges streambench runs made through software no one here wrote: a hop
// between the runtime and the provider (an AI gateway such as Portkey), compared by JudgeHop
// with the same workload played directly, and a route in front of the mock (JudgeRoute).
package interop

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// HopExpectation is what a hop is known to do, so a run through it passes on everything else.
type HopExpectation struct {
	// CancelsUpstream says whether the hop ends its upstream request when the runtime leaves.
	// When false, every aborted session whose provider stream was open must break R-abort and
	// none may show a cancel latency; when true the hop must cancel like the direct run.
	CancelsUpstream bool
	// Metric is the latency compared (default measure.FirstChunk; measure.TimeToFirstToken for
	// a generator speaking a provider wire to the gateway).
	Metric measure.Metric
	// Known are rules beyond R-abort the hop is known to break (Portkey's R-anthropic-error):
	// reported, not failing, and required, so a hop that stops breaking one says so.
	Known []protocol.Rule
}

// TTFC is a first-chunk (or first-token) latency at two quantiles, in µs, over Count streams.
type TTFC struct {
	Count    int64
	P50, P99 int64
}

// HopOutcome is the comparison of a run through a hop with its direct yardstick.
type HopOutcome struct {
	// Live is over every scenario on the dialects whose first chunk is live (not
	// sim-chat-legacy's, the settled answer); Plain over plain-answer on them.
	DirectLive, ViaLive, DirectPlain, ViaPlain TTFC
	// KeyMedianP50 is the median over the Keys scenario × dialect keys measured in both runs of
	// via's p50 minus direct's: like with like, so stalls hitting a few keys move it less.
	KeyMedianP50 int64
	Keys         int
	// Aborted counts sessions aborted or stopped on purpose through the hop; the Cancels,
	// cancel latencies measured (the provider saw the client leave in time).
	Aborted, ViaAbortViolations, DirectAbortViolations int64
	ViaCancels, DirectCancels                          int64
	// Known is via's violations of the known rules; Failures why the outcome fails (empty: it
	// passes).
	Known    map[protocol.Rule]int64
	Metric   measure.Metric
	Failures []string
}

// OverheadP50 is the hop's added latency at p50 on plain-answer, in µs: one scenario with a
// fixed scripted TTFT, so the difference is the hop's, not a shift between the mix's clusters
// of TTFTs.
func (o *HopOutcome) OverheadP50() int64 { return o.ViaPlain.P50 - o.DirectPlain.P50 }

// OverheadP99 is the hop's added latency at p99 on plain-answer, in µs.
func (o *HopOutcome) OverheadP99() int64 { return o.ViaPlain.P99 - o.DirectPlain.P99 }

// Pass reports whether the outcome is as expected.
func (o *HopOutcome) Pass() bool { return len(o.Failures) == 0 }

const legacyDialect = "sim-chat-legacy"

// JudgeHop compares via (through the hop) with direct: both must be free of errors, leaks and
// violations, except R-abort through a hop that does not cancel upstream, which every judged
// abort must then break; and it measures the latency the hop adds.
func JudgeHop(direct, via *measure.Run, exp HopExpectation) HopOutcome {
	o := HopOutcome{Metric: cmp.Or(exp.Metric, measure.FirstChunk)}
	fail := func(format string, args ...any) { o.Failures = append(o.Failures, fmt.Sprintf(format, args...)) }
	var dropped [2]int64
	o.DirectLive, o.DirectPlain, dropped[0] = ttfcOf(direct.Histograms, o.Metric)
	o.ViaLive, o.ViaPlain, dropped[1] = ttfcOf(via.Histograms, o.Metric)
	if dropped[0]+dropped[1] > 0 {
		fail("%s histograms: %d values dropped merging (direct %d, via %d)", o.Metric, dropped[0]+dropped[1], dropped[0], dropped[1])
	}
	o.KeyMedianP50, o.Keys = keyMedianP50(direct.Histograms, via.Histograms, o.Metric)
	o.Aborted = via.Summary.Counters.Outcome(measure.OutcomeAborted)
	o.ViaAbortViolations = via.Summary.Violations[protocol.RAbort]
	o.DirectAbortViolations = direct.Summary.Violations[protocol.RAbort]
	o.ViaCancels = cancelCount(via.Histograms)
	o.DirectCancels = cancelCount(direct.Histograms)

	for _, r := range []struct {
		name     string
		run      *measure.Run
		measured int64
		known    []protocol.Rule // the yardstick has no hop to excuse
	}{{"direct", direct, o.DirectLive.Count, nil}, {"via", via, o.ViaLive.Count, exp.Known}} {
		s := &r.run.Summary
		checkRun(fail, r.name+" run: ", s, nil)
		if others := otherViolations(s.Violations, r.known); others != "" {
			fail("%s run: violations other than R-abort%s: %s", r.name, knownSuffix(r.known), others)
		}
		if r.measured == 0 {
			fail("%s run: no %s measured", r.name, o.Metric)
		}
	}
	for _, rule := range exp.Known {
		if o.Known == nil {
			o.Known = map[protocol.Rule]int64{}
		}
		o.Known[rule] = via.Summary.Violations[rule]
		if o.Known[rule] == 0 {
			fail("via run: no %s: the hop no longer breaks this known rule (update HopExpectation.Known)", rule)
		}
	}
	if o.DirectAbortViolations > 0 {
		fail("direct run: %d R-abort: the reference runtime itself did not cancel, so the hop cannot be judged", o.DirectAbortViolations)
	}
	if o.DirectCancels == 0 {
		fail("direct run: no cancel latency measured: the workload has no abort the mock could judge")
	}
	switch {
	case exp.CancelsUpstream && (o.ViaAbortViolations > 0 || o.ViaCancels == 0):
		fail("via run: the hop should cancel upstream, but %d aborts broke R-abort and %d cancels were measured", o.ViaAbortViolations, o.ViaCancels)
	case !exp.CancelsUpstream && o.ViaCancels > 0:
		fail("via run: %d aborts reached the provider in time: the hop now cancels its upstream request (update HopExpectation.CancelsUpstream)", o.ViaCancels)
	case !exp.CancelsUpstream && o.ViaAbortViolations == 0:
		fail("via run: no R-abort: expected one on every abort whose provider stream was open (%d sessions aborted)", o.Aborted)
	}
	return o
}

// checkRun fails a run (each message after prefix) that started no session, has error outcomes
// beyond known, leaks or was interrupted.
func checkRun(fail func(string, ...any), prefix string, s *measure.Summary, known []measure.Outcome) {
	if s.Counters.SessionsStarted == 0 {
		fail("%sno session started", prefix)
	}
	if n := s.Counters.ErrorsExcept(known); n > 0 {
		fail("%s%d sessions with an error outcome (%v; HTTP %v)", prefix, n, s.Counters.Outcomes, s.Counters.HTTPErrors)
	}
	if n := s.FailedLeaks(); n > 0 {
		fail("%s%d leak-check gauges over tolerance", prefix, n)
	}
	if s.Interrupted {
		fail("%sinterrupted", prefix)
	}
}

// knownSuffix names the known rules in a failure message (" and R-x, R-y"; "" when none).
func knownSuffix(known []protocol.Rule) string {
	if len(known) == 0 {
		return ""
	}
	names := make([]string, len(known))
	for i, r := range known {
		names[i] = string(r)
	}
	return " and " + strings.Join(names, ", ")
}

// otherViolations lists the violations by rule except R-abort and the known ones ("" when none).
func otherViolations(v map[protocol.Rule]int64, known []protocol.Rule) string {
	var out []string
	for _, r := range slices.Sorted(maps.Keys(v)) {
		if r != protocol.RAbort && !slices.Contains(known, r) && v[r] > 0 {
			out = append(out, fmt.Sprintf("%s×%d", r, v[r]))
		}
	}
	return strings.Join(out, ", ")
}

// ttfcOf merges metric over the live-chunk dialects, every scenario and plain-answer alone;
// dropped counts values outside the merged histograms' range.
func ttfcOf(h *measure.Histograms, metric measure.Metric) (live, plain TTFC, dropped int64) {
	all, pa := measure.NewHistogram(), measure.NewHistogram()
	for _, k := range h.Keys() {
		if k.Metric != metric || k.Dialect == legacyDialect {
			continue
		}
		dropped += all.Merge(h.Get(k))
		if k.Scenario == "plain-answer" {
			dropped += pa.Merge(h.Get(k))
		}
	}
	return quantiles(all), quantiles(pa), dropped
}

// keyMedianP50 is HopOutcome.KeyMedianP50 and Keys.
func keyMedianP50(direct, via *measure.Histograms, metric measure.Metric) (int64, int) {
	var diffs []int64
	for _, k := range direct.Keys() {
		if k.Metric != metric || k.Dialect == legacyDialect || via.Count(k) == 0 || direct.Count(k) == 0 {
			continue
		}
		diffs = append(diffs, via.Get(k).ValueAtQuantile(50)-direct.Get(k).ValueAtQuantile(50))
	}
	if len(diffs) == 0 {
		return 0, 0
	}
	slices.Sort(diffs)
	return diffs[len(diffs)/2], len(diffs)
}

func quantiles(h *hdrhistogram.Histogram) TTFC {
	if h.TotalCount() == 0 {
		return TTFC{}
	}
	return TTFC{Count: h.TotalCount(), P50: h.ValueAtQuantile(50), P99: h.ValueAtQuantile(99)}
}

// cancelCount is how many aborts had a cancel latency measured.
func cancelCount(h *measure.Histograms) int64 {
	merged, _ := h.Merged(func(k measure.Key) bool { return k.Metric == measure.CancelLatency })
	return merged.TotalCount()
}

// Report writes the outcome for people.
func (o *HopOutcome) Report(hop string) string {
	diff := func(us int64) string { return fmt.Sprintf("%+.1f ms", float64(us)/1000) }
	name := cmp.Or(strings.ToUpper(string(o.Metric)), "TTFC")
	var b strings.Builder
	fmt.Fprintf(&b, "%s plain-answer (live-chunk dialects): direct p50 %s p99 %s (%d streams); via %s p50 %s p99 %s (%d streams)\n",
		name, ms(o.DirectPlain.P50), ms(o.DirectPlain.P99), o.DirectPlain.Count, hop, ms(o.ViaPlain.P50), ms(o.ViaPlain.P99), o.ViaPlain.Count)
	fmt.Fprintf(&b, "%s every scenario merged: direct p50 %s p99 %s (%d streams); via %s p50 %s p99 %s (%d streams): %s p50, %s p99 (moves with the mix)\n",
		name, ms(o.DirectLive.P50), ms(o.DirectLive.P99), o.DirectLive.Count, hop, ms(o.ViaLive.P50), ms(o.ViaLive.P99), o.ViaLive.Count,
		diff(o.ViaLive.P50-o.DirectLive.P50), diff(o.ViaLive.P99-o.DirectLive.P99))
	fmt.Fprintf(&b, "%s %s overhead: p50 %s, p99 %s (plain-answer); median over %d scenario × dialect keys of the p50 difference %s\n",
		hop, name, diff(o.OverheadP50()), diff(o.OverheadP99()), o.Keys, diff(o.KeyMedianP50))
	fmt.Fprintf(&b, "aborts: via %s %d sessions aborted or stopped, R-abort on %d, cancel reached the provider on %d; direct: R-abort on %d, cancel measured on %d\n",
		hop, o.Aborted, o.ViaAbortViolations, o.ViaCancels, o.DirectAbortViolations, o.DirectCancels)
	for _, r := range slices.Sorted(maps.Keys(o.Known)) {
		fmt.Fprintf(&b, "known finding: via %s %d × %s\n", hop, o.Known[r], r)
	}
	writeVerdict(&b, o.Failures)
	return b.String()
}
