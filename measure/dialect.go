package measure

import (
	"cmp"
	"slices"
	"time"

	"github.com/streambench/streambench/protocol"
)

// Measure kinds as summary.json names them: a dialect measure's values are µs or a count.
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

// MeasureValue is what Histograms.Record takes for m: a count as that many microseconds.
func MeasureValue(m protocol.Measure) time.Duration {
	if m.Kind == protocol.MeasureCount {
		return time.Duration(m.Count) * time.Microsecond
	}
	return m.Duration
}

// MergeMeasureInfos returns the measures of both lists, each once (a's first), sorted by name.
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
	return find(s.Measures, func(m MeasureInfo) bool { return m.Name == name })
}
