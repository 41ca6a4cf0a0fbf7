package session

import (
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

// nextConversationTurn records a completed turn as a request of its own and extends the history.
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
	// From now: settle may have loaded the tokenizer since the answer's end.
	s.intended, s.chunks, s.output = time.Now(), 0, false
	m.intended = s.intended
}

// endTurn flushes a completed turn for the next; one that misses a goodput SLO costs the conversation's.
func (m *sessionMetrics) endTurn(slos []verdict.SessionSLO) {
	m.missedSLO = m.missedSLO || !m.meetsSLOs(slos)
	m.flush()
	m.connect.Store(0)
	m.headers, m.firstEvent, m.firstChunk, m.firstThinking, m.duration, m.startLag = 0, 0, 0, 0, 0, 0
	m.tokens = tokenClock{usageOnly: m.tokens.usageOnly, text: m.tokens.text[:0]}
	m.scripted = scriptedLatency{}
	m.measures = m.measures[:0]
}
