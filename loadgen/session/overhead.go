package session

import (
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// The target's own latency. A session's ttfc and ttft include the delay its script schedules
// before the mock sends the frame (a scripted TTFT of 300 ms, a tool that runs 200 ms), so
// an SLO on them judges the script as much as the target. The plan knows the script, so it
// knows when a target that added nothing would have delivered each frame; the session records
// measured − scripted as ttfc.overhead and ttft.overhead, in its shard's histograms like every
// latency.

// scriptedLatency is when a session's script has its first answer chunk (chunk) and its first
// output token (token) due at a client that adds nothing, from the request; 0 when the script
// does not say (no ground truth, the provider fails first, a turn the client drives itself).
type scriptedLatency struct {
	chunk, token time.Duration
}

// scriptedFirst reads script as client c sees it, its times scaled by the mock's time scale.
//
// A streaming client's first chunk is due with the first text step the provider sends, and
// its first token with the first thinking step (when c is sent thinking) or text step that
// carries a token. Later turns start after the earlier ones and their tools (turnLength), as
// the reference runtime runs them; a client that drives its own turns (protocol.MultiTurn)
// is only timed within its first. A client sent the answer settled (protocol.SettledAnswer)
// has both due when the final turn's last step is sent.
func scriptedFirst(script *scenarios.Script, c protocol.Client, scale float64) scriptedLatency {
	var out scriptedLatency
	scaled := func(d time.Duration) time.Duration { return max(time.Duration(float64(d)*scale), 1) }
	if sa, ok := c.(protocol.SettledAnswer); ok && sa.AnswerSettled() {
		var base, last time.Duration
		for ti := range script.Turns {
			t := &script.Turns[ti]
			if t.HTTPStatus != 0 || t.ErrorAfterStep >= 0 {
				return out // a failed conversation has no settled answer
			}
			if n := len(t.Steps); n > 0 {
				last = base + t.Steps[n-1].At
			}
			base += turnLength(t)
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
		base += turnLength(t)
	}
	return out
}

// putOverhead records measured − scripted under metric when both are known; the shard lock
// must be held. A frame that came before its scripted time (the script's estimate, not a
// target faster than its provider) records 0.
func (m *sessionMetrics) putOverhead(metric measure.Metric, measured, scripted time.Duration) {
	if measured == 0 || scripted == 0 {
		return
	}
	m.putZero(metric, max(measured-scripted, 0))
}
