package measure

import (
	"cmp"
	"slices"
	"time"

	"github.com/streambench/streambench/protocol"
)

// Dialect measures are quantities a dialect's checker measures on its own streams
// (protocol.Measurer: a compose child's time to first delta, children per run, the approval
// round trip). Each is recorded like every latency, in an HdrHistogram keyed by
// Metric(name) × scenario × dialect, and listed in Summary.Measures with its kind, which says
// how to read the histogram's values: microseconds for a latency, the count itself for a count.

// Measure kinds as summary.json names them.
const (
	MeasureKindLatency = "latency"
	MeasureKindCount   = "count"
)

// MeasureInfo names one dialect measure a run recorded and its kind.
type MeasureInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // MeasureKindLatency or MeasureKindCount
}

// KindOf is the summary.json kind of a protocol measure kind.
func KindOf(k protocol.MeasureKind) string {
	if k == protocol.MeasureCount {
		return MeasureKindCount
	}
	return MeasureKindLatency
}

// MeasureValue is what Histograms.Record takes for m: its duration for a latency, and for a
// count a duration of that many microseconds, so the histogram holds the count itself.
func MeasureValue(m protocol.Measure) time.Duration {
	if m.Kind == protocol.MeasureCount {
		return time.Duration(m.Count) * time.Microsecond
	}
	return m.Duration
}

// MergeMeasureInfos returns the measures of both lists, sorted by name, each once (a's kind
// wins when both name one).
func MergeMeasureInfos(a, b []MeasureInfo) []MeasureInfo {
	out := slices.Clone(a)
	for _, m := range b {
		if !slices.ContainsFunc(out, func(o MeasureInfo) bool { return o.Name == m.Name }) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(x, y MeasureInfo) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

// Measure returns the dialect measure named name, if the run recorded one.
func (s *Summary) Measure(name string) (MeasureInfo, bool) {
	for _, m := range s.Measures {
		if m.Name == name {
			return m, true
		}
	}
	return MeasureInfo{}, false
}

// IsCount tells whether metric m is a dialect measure of kind count in this run.
func (s *Summary) IsCount(m Metric) bool {
	info, ok := s.Measure(string(m))
	return ok && info.Kind == MeasureKindCount
}
