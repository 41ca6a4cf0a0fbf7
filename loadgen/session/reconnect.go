package session

import (
	"fmt"
	"net/http"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// resume plays a scripted reconnect after read dropped the stream: it stays away for the
// scripted delay and resumes with the last event id into the same checker. It reports false
// when the session ended.
//
//go:noinline
func (s *streamState) resume() bool {
	r, p := s.r, s.p
	s.dropped, s.reconnected = false, true
	last := s.dec.LastEventID()
	s.closeBody()
	s.turnTerminal, s.inBand = false, ""
	if d := time.Duration(float64(p.reconnect.Delay) * r.ScriptTimeScale); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
			s.touch() // the idle timeout counts from the resume
		case <-s.sctx.Done():
			t.Stop()
			if s.limit() != nil {
				s.res = s.finishUnfinished("while away before the scripted reconnect")
			} else {
				s.res = s.finishCut()
			}
			return false
		}
	}
	rc := p.Client.(protocol.Reconnector)
	req, err := rc.NewReconnectRequest(s.sctx, r.Target, p.Session, s.resp, last)
	if err != nil {
		s.res = s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: %w", p.ID, err))
		return false
	}
	ApplyStreamHeader(req, p.Header)
	resp, err := r.Client.Do(req)
	if err != nil {
		if s.ctx.Err() != nil {
			s.res = s.finishCut()
			return false
		}
		s.res = s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: reconnect: %w", p.ID, err))
		return false
	}
	s.setArrivals(resp.Body) // never the dropped connection's
	s.touch()
	resp.Body = s.watchBody(resp.Body)
	s.body = resp.Body
	if resp.StatusCode != http.StatusOK {
		s.httpError(req, resp)
		return false
	}
	s.res.Violations = append(s.res.Violations, p.Client.CheckHeaders(resp.Header, p.Session)...)
	if ro, ok := s.checker.(protocol.ReconnectObserver); ok {
		ro.Reconnected(last, resp.Header)
	}
	s.resp = resp
	s.head = nil
	s.dec = protocol.NewDecoder(p.Client, resp.Body)
	return true
}
