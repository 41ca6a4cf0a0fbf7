package session

import (
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// The target's own latency: ttfc and ttft include the delay the script schedules, so the
// session also records measured − scripted as ttfc.overhead and ttft.overhead.

// scriptedLatency is when the script has the first chunk and token due, from the request (0: unknown).
type scriptedLatency struct {
	chunk, token time.Duration
}

// scriptedFirst reads script as client c sees it, scaled by the mock's time scale: later turns after
// the earlier ones and their tools; a client driving its own turns timed within its first only, one
// sent the answer settled with both due at the final turn's last step.
func scriptedFirst(script *scenarios.Script, c protocol.Client, scale float64) scriptedLatency {
	var out scriptedLatency
	scaled := func(d time.Duration) time.Duration { return max(time.Duration(float64(d)*scale), 1) }
	if sa, ok := c.(protocol.SettledAnswer); ok && sa.AnswerSettled() {
		var base, last time.Duration
		for ti := range script.Turns {
			t := &script.Turns[ti]
			if t.HTTPStatus != 0 || t.ErrorAfterStep >= 0 {
				return out // no settled answer
			}
			if n := len(t.Steps); n > 0 {
				last = base + t.Steps[n-1].At
			}
			base += t.Length()
		}
		if last > 0 {
			out.chunk, out.token = scaled(last), scaled(last)
		}
		return out
	}
	_, clientTurns := c.(protocol.MultiTurn)
	seesThinking := c.Sees(protocol.FrameThinking)
	var base time.Duration
	for ti := range script.Turns {
		t := &script.Turns[ti]
		if t.HTTPStatus != 0 || (clientTurns && ti > 0) {
			break
		}
		for i, st := range t.Steps {
			if t.ErrorAfterStep >= 0 && i > t.ErrorAfterStep {
				break
			}
			switch {
			case st.Kind == scenarios.StepText && st.Text != "":
				if out.chunk == 0 {
					out.chunk = scaled(base + st.At)
				}
				if out.token == 0 && st.Tokens > 0 {
					out.token = scaled(base + st.At)
				}
				if out.token != 0 {
					return out
				}
			case st.Kind == scenarios.StepThinking && seesThinking && st.Tokens > 0 && out.token == 0:
				out.token = scaled(base + st.At)
			}
		}
		if t.ErrorAfterStep >= 0 {
			break
		}
		base += t.Length()
	}
	return out
}

// overheads are the metrics of measured − scripted latency.
var overheads = []measure.Metric{measure.FirstChunkOverhead, measure.FirstTokenOverhead}

// overhead is when the frame of metric (one of overheads) was measured and its latency beyond
// the script's (at least 0); ok is false when either time is unknown.
func (m *sessionMetrics) overhead(metric measure.Metric) (at, over time.Duration, ok bool) {
	measured, scripted := m.firstChunk, m.scripted.chunk
	if metric == measure.FirstTokenOverhead {
		measured, scripted = m.tokens.firstToken, m.scripted.token
	}
	return measured, max(measured-scripted, 0), measured != 0 && scripted != 0
}
