package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streambench/streambench/measure"
)

// SessionTally is what a live run counts that its saved results do not hold: sessions, error
// sessions and violations per scenario × dialect (Key.Metric empty), and the generator's CPU.
type SessionTally struct {
	Sessions, Errors, Violations map[measure.Key]int64
	CPU                          time.Duration
}

// NewSessionTally returns an empty tally.
func NewSessionTally() SessionTally {
	return SessionTally{Sessions: map[measure.Key]int64{}, Errors: map[measure.Key]int64{}, Violations: map[measure.Key]int64{}}
}

// SavedTally is the tally of a saved run: its sessions per key (the rest was not saved).
func SavedTally(run *measure.Run) SessionTally {
	tally := NewSessionTally()
	for _, k := range run.Histograms.Keys() {
		if k.Metric == measure.StreamDuration {
			tally.Sessions[measure.Key{Scenario: k.Scenario, Dialect: k.Dialect}] = run.Histograms.Count(k)
		}
	}
	return tally
}

// WriteSummary writes the terminal summary of a run that just ended.
func WriteSummary(w io.Writer, run *measure.Run, tally SessionTally) error {
	s := &run.Summary
	if err := NewHeadline(run).write(w, textStyle); err != nil {
		return err
	}
	fmt.Fprintln(w)
	ms := func(us int64) string { return fmt.Sprintf("%.1fms", float64(us)/1000) }
	sorted := slices.SortedFunc(maps.Keys(tally.Sessions), measure.Key.Compare)
	if len(sorted) > 0 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scenario\tdialect\tsessions\terrors\tttfc p50\tttfc p99\tgap p99\tviolations\t")
		dash := false
		for _, k := range sorted {
			ttfc, _ := s.Metric(measure.Key{Metric: measure.FirstChunk, Scenario: k.Scenario, Dialect: k.Dialect})
			gap, _ := s.Metric(measure.Key{Metric: measure.ChunkGap, Scenario: k.Scenario, Dialect: k.Dialect})
			row := []string{k.Scenario, k.Dialect, fmt.Sprint(tally.Sessions[k]), fmt.Sprint(tally.Errors[k]), "-", "-", "-", fmt.Sprint(tally.Violations[k])}
			if ttfc.Count > 0 {
				row[4], row[5] = ms(ttfc.P50), ms(ttfc.P99)
			}
			if gap.Count > 0 {
				row[6] = ms(gap.P99)
			}
			dash = dash || slices.Contains(row, "-")
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if dash {
			fmt.Fprintln(w, "(-: the key recorded none: no live answer chunk, as from a PII-redacted canvas block or an abort before the answer; no gap, as for a legacy client's single chunk)")
		}
		fmt.Fprintln(w)
	}
	c := s.Counters
	fmt.Fprintf(w, "run %s: %s, sessions started %d, ok %d, failed %d (by an error outcome or a violation), late starts %d, dropped starts %d, frames %d, bytes %d\n",
		s.RunID, s.Ended.Sub(s.Started).Round(time.Millisecond), c.SessionsStarted, c.SessionsOK, c.SessionsFailed, c.LateStarts, c.DroppedStarts, c.Frames, c.Bytes)
	writeTokens(w, run)
	writeMeasures(w, run)
	if c.Frames > 0 && tally.CPU > 0 {
		fmt.Fprintf(w, "this process: %.1f µs CPU per received frame (%s CPU for %d frames)\n",
			float64(tally.CPU.Microseconds())/float64(c.Frames), tally.CPU.Round(time.Millisecond), c.Frames)
	}
	writeLeakCheck(w, s)
	if s.ProviderRequests != nil {
		p := measure.TotalProviderRequests(s.ProviderRequests)
		retried := BoolText(p.Retries > 0, " (after HTTP "+measure.RetriesText(p.RetriesByStatus)+")", "")
		fmt.Fprintf(w, "provider requests (mock): %d for %d sessions, %d retries%s\n", p.Requests, p.Sessions, p.Retries, retried)
	}
	return nil
}

// writeLeakCheck says what the leak check compared per process, found and could not check.
func writeLeakCheck(w io.Writer, s *measure.Summary) {
	sources, gauges := leakSources(s.Leaks)
	for _, src := range sources {
		fmt.Fprintf(w, "leak check %s: %d gauges (%s)\n", src, len(gauges[src]), strings.Join(gauges[src], ", "))
	}
	for _, l := range s.Leaks {
		if !l.OK {
			fmt.Fprintf(w, "LEAK %s %s: %g → %g (tolerance %g)\n", l.Source, l.Name, l.Before, l.After, l.Tolerance)
		}
	}
	for _, n := range s.LeaksNotChecked {
		fmt.Fprintf(w, "leak check %s: not checked — %s\n", notCheckedWhat(n), n.Reason)
	}
}

// leakSources are the sources of leaks in order, with the gauges compared of each.
func leakSources(leaks []measure.Leak) (sources []string, gauges map[string][]string) {
	gauges = map[string][]string{}
	for _, l := range leaks {
		if gauges[l.Source] == nil {
			sources = append(sources, l.Source)
		}
		gauges[l.Source] = append(gauges[l.Source], l.Name)
	}
	return sources, gauges
}

// notCheckedWhat names what the leak check could not compare: a source, or a gauge of it.
func notCheckedWhat(n measure.LeakNotChecked) string {
	return strings.TrimSuffix(n.Source+" "+n.Name, " ")
}

// writeTokens prints the token metrics' percentiles over every key, tokens/s and goodput.
func writeTokens(w io.Writer, run *measure.Run) {
	s := &run.Summary
	if s.Tokens == nil || s.Tokens.OutputTokens == 0 {
		return
	}
	var parts []string
	for _, m := range []measure.Metric{measure.TimeToFirstToken, measure.TimeToFirstOutput, measure.TimePerOutputToken, measure.InterTokenLatency, measure.StreamDuration} {
		if st, n := overall(run, m); n > 0 {
			name := string(m)
			if m == measure.StreamDuration {
				name = "e2e (duration)"
			}
			parts = append(parts, fmt.Sprintf("%s p50 %.1fms p90 %.1fms p95 %.1fms p99 %.1fms", name,
				float64(st.P50)/1000, float64(st.P90)/1000, float64(st.P95)/1000, float64(st.P99)/1000))
		}
	}
	t := s.Tokens
	est := ""
	if t.Estimated {
		est = fmt.Sprintf(" (estimated with %s: %d tokens of %d sessions without a usage report)", t.EstimatedMethod(), t.EstimatedTokens, t.EstimatedSessions)
	}
	fmt.Fprintf(w, "tokens: %d output, %.1f tokens/s, %.2f requests/s%s; %s\n", t.OutputTokens, t.OutputTokensPerSecond, t.RequestsPerSecond, est, strings.Join(parts, ", "))
	g := t.Goodput
	slos := cmp.Or(strings.Join(g.SLOs, ", "), "no SLO given")
	fmt.Fprintf(w, "goodput: %d of %d judged sessions (%.1f%%), %.2f/s (%s)\n", g.Sessions, g.Judged, 100*g.Share, g.PerSecond, slos)
}

// overall is m's statistics over every scenario and dialect, and how many keys hold it: the
// histograms merged, or without them each statistic's worst key.
func overall(r *measure.Run, m measure.Metric) (measure.MetricSummary, int) {
	if r.Histograms != nil {
		h, n := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == m })
		return measure.SummarizeOne(measure.Key{Metric: m}, h), n
	}
	st, n := measure.MetricSummary{Key: measure.Key{Metric: m}}, 0
	for _, ms := range r.Summary.Metrics {
		if ms.Metric == m && ms.Count > 0 {
			st.Count += ms.Count
			st.P50, st.P90, st.P95, st.P99 = max(st.P50, ms.P50), max(st.P90, ms.P90), max(st.P95, ms.P95), max(st.P99, ms.P99)
			n++
		}
	}
	return st, n
}

// OutcomeLine lists the outcomes that occurred: "completed 950, http_error 10 (503×10) ERROR".
func OutcomeLine(c measure.Counters) string {
	var parts []string
	for _, o := range measure.Outcomes() {
		n := c.Outcomes[o]
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%s %d", o, n)
		if o == measure.OutcomeHTTPError && len(c.HTTPErrors) > 0 {
			p += " (" + c.HTTPStatuses() + ")"
		}
		if o.IsError() {
			p += " ERROR"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
