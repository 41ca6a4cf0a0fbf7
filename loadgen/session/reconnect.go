package session

import (
	"fmt"
	"net/http"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// resume plays a scenario's client.reconnect (protocol.Reconnector clients): read dropped the
// stream after the scripted chunks; this closes it, stays away for the scripted delay (on the
// script's clock, like every scripted time) and resumes it with the last event id seen, into
// the same checker, which is told first (protocol.ReconnectObserver). It reports false when
// the session ended (s.res holds its result).
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
			s.touch() // away on purpose: the idle timeout counts from the resume
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
	ApplyHeader(req, p.Header)
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		if s.ctx.Err() != nil {
			s.res = s.finishCut()
			return false
		}
		s.res = s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: reconnect: %w", p.ID, err))
		return false
	}
	s.setArrivals(resp.Body) // the new connection's, never the dropped one's
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
