package session

import (
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// Dialect measures (protocol.Measurer) are flushed with a session's latencies, under their names.

// watch notes the stream's checker, taking the measures of the one it replaces.
func (m *sessionMetrics) watch(c protocol.Checker) {
	m.takeMeasures()
	m.measurer, _ = c.(protocol.Measurer)
}

// takeMeasures collects the current checker's measures, once it finished.
func (m *sessionMetrics) takeMeasures() {
	if m.measurer != nil {
		m.measures = append(m.measures, m.measurer.Measures()...)
		m.measurer = nil
	}
}

// MeasureInfos lists the measures recorded so far, sorted by name.
func (r *Recorder) MeasureInfos() []measure.MeasureInfo {
	var out []measure.MeasureInfo
	r.measureKinds.Range(func(k, v any) bool {
		out = append(out, measure.MeasureInfo{Name: k.(string), Kind: v.(string)})
		return true
	})
	return measure.MergeMeasureInfos(out, nil)
}
