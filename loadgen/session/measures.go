package session

import (
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// Dialect measures (protocol.Measurer): a session keeps its checker's measures with its other
// values and flushes them into its shard's histograms at its end, each under the measure's
// name (measure.Metric(name) × scenario × dialect), as every latency. Their kinds are kept by
// the Recorder for summary.json's "measures" list, which says how a report or a gate reads them.

// watch notes the stream's checker (a multi-turn session has one per turn): the measures of the
// one it replaces are taken first.
func (m *sessionMetrics) watch(c protocol.Checker) {
	m.takeMeasures()
	m.measurer, _ = c.(protocol.Measurer)
}

// takeMeasures collects the current checker's measures (once: its Finish has been called).
func (m *sessionMetrics) takeMeasures() {
	if m.measurer != nil {
		m.measures = append(m.measures, m.measurer.Measures()...)
		m.measurer = nil
	}
}

// putMeasures records the session's measures; the shard lock must be held.
func (m *sessionMetrics) putMeasures() {
	for _, ms := range m.measures {
		k := measure.Key{Metric: measure.Metric(ms.Name), Scenario: m.scenario, Dialect: m.dialect}
		if err := m.shard.hist.Record(k, measure.MeasureValue(ms)); err != nil {
			m.rec.RecordErrs.Add(1)
		}
	}
}

// noteMeasureKinds remembers the kinds of the session's measures for the summary; it takes
// the Recorder's lock only for a name it has not seen yet.
func (m *sessionMetrics) noteMeasureKinds() {
	for _, ms := range m.measures {
		if _, ok := m.rec.measureKinds.Load(ms.Name); !ok {
			m.rec.measureKinds.LoadOrStore(ms.Name, measure.KindOf(ms.Kind))
		}
	}
}

// measureInfos lists the measures recorded so far, sorted by name.
func (r *Recorder) MeasureInfos() []measure.MeasureInfo {
	var out []measure.MeasureInfo
	r.measureKinds.Range(func(k, v any) bool {
		out = append(out, measure.MeasureInfo{Name: k.(string), Kind: v.(string)})
		return true
	})
	return measure.MergeMeasureInfos(out, nil)
}
