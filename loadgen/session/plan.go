package session

import (
	"net/http"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// Plan is everything about one session that is known before it starts.
type Plan struct {
	Pick Pick
	// ID names the session on the wire (the directive, X-Streambench-Session) and in results.
	ID       string
	Client   protocol.Client
	Label    string // the dialect part of the histogram keys (sim-chat-optedin, ...)
	Session  *protocol.Session
	Header   http.Header // the profile's request headers (nil: none)
	Encoding string      // counts output tokens if no usage report comes
	// trigger is the scripted abort (or stop, when stop is set), fired at triggerAt from the
	// request when timed. The rendered Script is not kept: at thousands of open streams its
	// steps would dominate memory.
	trigger      *scenarios.Trigger
	stop         bool
	triggerAt    time.Duration
	timed        bool
	reconnect    *scenarios.Reconnect // for clients that can
	scripted     scriptedLatency
	conversation *endpoint.Conversation // replayed turn by turn (nil: one request)
}

// Pick is which session to play: its index, the scenario and seed, and the target it is sent to.
type Pick struct {
	Index    uint64
	Scenario string
	Seed     uint64
	Target   string
}

// Request is what one mix profile × target sends: its configured client, its headers, and
// the model tokenizer's encoding (modeltokens.ForModel) for usage-less sessions.
type Request struct {
	Client   protocol.Client
	Header   http.Header
	Encoding string
}

// Planner makes sessions' plans; set its fields before the first Plan. Safe for concurrent use.
type Planner struct {
	Library         *scenarios.Library
	NoGroundTruth   bool               // judge structure only (a real model's content)
	Endpoint        *endpoint.Workload // set: each session is an endpoint workload's request
	ScriptTimeScale float64            // the mock's time scale

	// scripts recycles rendered scripts: a step per token of garbage per session grew a busy
	// stream's memory past an idle one's.
	scripts sync.Pool
}

// Plan is the plan of the session pick, named id, sent as req; the scenario must exist.
func (pl *Planner) Plan(pick Pick, req Request, id string) *Plan {
	sc, _ := pl.Library.Get(pick.Scenario)
	prev, _ := pl.scripts.Get().(*scenarios.Script)
	script := sc.RenderReusing(pick.Seed, prev)
	defer pl.scripts.Put(script)
	input := scenarios.Directive{Scenario: pick.Scenario, Seed: pick.Seed, Session: id}.String()
	if sc.Prompt != "" {
		input += " " + sc.Prompt
	}
	so, ownOption := req.Client.(protocol.StructureOnly) // the client judges structure only by an option of its own
	p := &Plan{
		Pick: pick, ID: id, Client: req.Client, Header: req.Header, Encoding: req.Encoding,
		Label: req.Client.Label(),
		Session: &protocol.Session{
			ID: id, Target: pick.Target, Input: input,
			Expected:      script.Expected(),
			NoGroundTruth: pl.NoGroundTruth || ownOption && so.StructureOnly(),
		},
	}
	if e := pl.Endpoint; e != nil {
		ereq, conv := e.Request(pick.Index, pick.Seed)
		p.Session.Endpoint, p.Session.NoGroundTruth, p.conversation = ereq, true, conv
		p.Session.Input = ereq.Messages[len(ereq.Messages)-1].Text
		return p // no client action
	}
	if !p.Session.NoGroundTruth {
		p.scripted = scriptedFirst(script, p.Client, pl.ScriptTimeScale)
	}
	p.trigger = script.Client.Abort
	if p.trigger == nil && script.Client.Stop != nil {
		_, canStop := p.Client.(protocol.Stopper)
		p.trigger, p.stop = script.Client.Stop, canStop
	}
	if p.trigger != nil {
		p.triggerAt, p.timed = pl.triggerTime(p, script, p.trigger)
	}
	if _, ok := p.Client.(protocol.Reconnector); ok {
		p.reconnect = script.Client.Reconnect
	}
	return p
}

// triggerTime is when a time-based trigger fires, from the request: After, or the scripted
// moment of thinking or a tool the client cannot see; false for frame-triggered actions.
func (pl *Planner) triggerTime(p *Plan, script *scenarios.Script, t *scenarios.Trigger) (time.Duration, bool) {
	var at time.Duration
	var ok bool
	switch {
	case t.After > 0:
		return t.After, true
	case t.DuringThinking && !p.Client.Sees(protocol.FrameThinking):
		at, ok = scriptedThinking(script)
	case t.DuringTool && !p.Client.Sees(protocol.FrameToolStart):
		at, ok = scriptedTool(script)
	}
	return time.Duration(float64(at) * pl.ScriptTimeScale), ok
}

// scriptedThinking is the middle of the script's first thinking span, from the first request.
func scriptedThinking(s *scenarios.Script) (time.Duration, bool) {
	var base time.Duration
	for ti := range s.Turns {
		t := &s.Turns[ti]
		for i, st := range t.Steps {
			if st.Kind != scenarios.StepThinking {
				continue
			}
			end := st.At + time.Millisecond
			for _, next := range t.Steps[i+1:] {
				if next.Kind != scenarios.StepThinking {
					end = next.At
					break
				}
			}
			return base + (st.At+end)/2, true
		}
		base += t.Length()
	}
	return 0, false
}

// scriptedTool is the middle of the first turn with tools' shortest tool, from the first request.
func scriptedTool(s *scenarios.Script) (time.Duration, bool) {
	var base time.Duration
	for ti := range s.Turns {
		t := &s.Turns[ti]
		if len(t.ToolCalls) > 0 {
			var end time.Duration
			if n := len(t.Steps); n > 0 {
				end = t.Steps[n-1].At
			}
			shortest := t.ToolCalls[0].Duration
			for _, c := range t.ToolCalls[1:] {
				shortest = min(shortest, c.Duration)
			}
			return base + end + shortest/2, true
		}
		base += t.Length()
	}
	return 0, false
}

// ApplyHeader adds a profile's headers to req (Host sets the request's host).
func ApplyHeader(req *http.Request, header http.Header) {
	for name, vs := range header {
		if name == "Host" && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[name] = vs
	}
}

// ApplyStreamHeader is ApplyHeader for a stream request, which asks for identity coding unless
// the headers chose one: none would allow any, and a compressed stream is a finding (R-headers).
func ApplyStreamHeader(req *http.Request, header http.Header) {
	ApplyHeader(req, header)
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
}
