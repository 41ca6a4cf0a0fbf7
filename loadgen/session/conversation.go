package session

import (
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

// nextConversationTurn ends a conversation turn that completed before the conversation's
// last: it records the turn as a request of its own (endTurn), then puts the answer the
// target gave and the next user message into the history, and times the next request from
// now: the client sends it as soon as the answer is complete (a closed loop within the
// conversation).
func (s *streamState) nextConversationTurn() {
	p, m := s.p, s.m
	now := time.Now()
	m.duration = observed(now.Sub(s.intended))
	m.tokens.settle(p.Encoding)
	s.record(measure.OutcomeCompleted)
	m.endTurn(s.r.GoodputSLOs)
	s.r.Rec.turnRequests.Add(1)
	if !m.afterWarmup() {
		s.r.Rec.warmupRequests.Add(1)
	}
	answer := ""
	if k, ok := s.checker.(protocol.AnswerKeeper); ok {
		answer = k.Answer()
	}
	e, next := p.Session.Endpoint, p.Session.Turn+1
	e.Messages = append(e.Messages,
		protocol.Message{Role: "assistant", Text: answer},
		protocol.Message{Role: "user", Text: p.conversation.Turns[next]})
	ep := s.r.Endpoint
	e.MaxTokens = ep.TurnMaxTokens(p.conversation, p.Pick.Seed, next)
	if ep.MinTokens {
		e.MinTokens = e.MaxTokens
	}
	p.Session.Input = p.conversation.Turns[next]
	// From now, not the answer's end: a usage-less turn's count (settle) may have loaded the
	// tokenizer in between, once per process, and the next turn is sent only after it.
	s.intended, s.chunks, s.output = time.Now(), 0, false
	m.intended = s.intended
}

// endTurn records a conversation turn that completed as a request of its own, and clears the
// per-request values for the next turn (the connection's set-up and the start lag are the
// first request's). A turn that misses a goodput SLO costs the conversation its goodput.
func (m *sessionMetrics) endTurn(slos []verdict.SessionSLO) {
	for _, slo := range slos {
		if !slo.Met(m.sessionValue(slo.Metric())) {
			m.missedSLO = true
		}
	}
	m.flush()
	m.connect.Store(0)
	m.headers, m.firstEvent, m.firstChunk, m.firstThinking, m.duration, m.startLag = 0, 0, 0, 0, 0, 0
	m.tokens = tokenClock{usageOnly: m.tokens.usageOnly, text: m.tokens.text[:0]}
	m.scripted = scriptedLatency{}
	m.measures = m.measures[:0]
}
