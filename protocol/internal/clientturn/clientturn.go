// Package clientturn is what the provider-wire client dialects share, since they differ in
// frames, not in what a turn is: which turn a request plays and what it must produce, the
// conversation sent for it, streamed tool calls, the configured Client, and the judgements
// every checker makes alike (Judge).
package clientturn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// Turns is how many requests session s takes: one per scripted turn up to the one the provider
// fails at; one without ground truth (an unknown model's tool calls have no scripted answer).
func Turns(s *protocol.Session) int {
	exp := &s.Expected
	switch {
	case s.NoGroundTruth:
		return 1
	case exp.FailedTurn >= 0:
		return exp.FailedTurn + 1
	}
	return max(len(exp.Turns), 1)
}

// Expectation is what one turn's response must be.
type Expectation struct {
	Truth bool // false without ground truth
	// Turn is the scripted turn (to its failure); nil without ground truth or for an HTTP error.
	Turn        *scenarios.ExpectedTurn
	HTTPError   bool // the provider refuses this turn with an HTTP error
	StreamError bool // the provider fails this turn with an error frame mid-stream
}

// Expect resolves session s's current turn.
func Expect(s *protocol.Session) Expectation {
	if s.NoGroundTruth {
		return Expectation{}
	}
	exp := &s.Expected
	e := Expectation{Truth: true}
	if s.Turn < len(exp.Turns) {
		e.Turn = &exp.Turns[s.Turn]
	}
	if exp.FailedTurn == s.Turn && exp.ProviderError != "" {
		e.HTTPError = e.Turn == nil
		e.StreamError = e.Turn != nil
	}
	return e
}

// ModelRequest is the conversation for s's current turn as an agent that ran the tools sends
// it: the input, then each earlier turn's text, tool calls and scripted results; every scripted
// tool offered, Thinking when the script thinks. An endpoint session's is its own request.
func ModelRequest(s *protocol.Session, model string) *protocol.ModelRequest {
	if e := s.Endpoint; e != nil {
		return &protocol.ModelRequest{Model: model, Messages: e.Messages, MaxTokens: e.MaxTokens,
			MaxTokensField: e.MaxTokensField, MinTokens: e.MinTokens, IgnoreEOS: e.IgnoreEOS}
	}
	req := &protocol.ModelRequest{Model: model, Messages: []protocol.Message{{Role: "user", Text: s.Input}}}
	exp := &s.Expected
	seen := map[string]bool{}
	for i := range exp.Turns {
		t := &exp.Turns[i]
		req.Thinking = req.Thinking || t.Thinking != ""
		for _, c := range t.ToolCalls {
			if !seen[c.Name] {
				seen[c.Name] = true
				req.Tools = append(req.Tools, c.Name)
			}
		}
		if i >= s.Turn || s.NoGroundTruth {
			continue
		}
		msg := protocol.Message{Role: "assistant", Text: t.Text}
		for _, c := range t.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, protocol.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		req.Messages = append(req.Messages, msg)
		for _, c := range t.ToolCalls {
			req.Messages = append(req.Messages, protocol.Message{
				Role: "tool", Text: c.Result, ToolCallID: c.ID, IsError: c.Outcome == scenarios.OutcomeError,
			})
		}
	}
	return req
}

// Tool is one streamed tool call being assembled.
type Tool struct {
	ID, Name string
	Args     []byte // the argument pieces so far
}

// Tools assembles one stream's tool calls by position. Not safe for concurrent use.
type Tools struct{ List []Tool }

// Start opens the next tool call.
func (t *Tools) Start(id, name []byte) *Tool {
	t.List = append(t.List, Tool{ID: string(id), Name: string(name)})
	return &t.List[len(t.List)-1]
}

// JSONObject reports whether args is one JSON object.
func JSONObject(args []byte) bool {
	args = bytes.TrimSpace(args)
	return len(args) > 0 && args[0] == '{' && json.Valid(args)
}

// CompareTools reports whether got are exactly the scripted calls, else what differs first.
func CompareTools(got []Tool, want []scenarios.ScriptToolCall) (detail string, ok bool) {
	if len(got) != len(want) {
		return fmt.Sprintf("expected %d tool call(s), saw %d", len(want), len(got)), false
	}
	for i := range want {
		g, w := &got[i], &want[i]
		switch {
		case g.ID != w.ID:
			return fmt.Sprintf("tool call %d: expected id %q, saw %q", i, w.ID, g.ID), false
		case g.Name != w.Name:
			return fmt.Sprintf("tool call %d (%s): expected name %q, saw %q", i, w.ID, w.Name, g.Name), false
		case string(g.Args) != w.Arguments:
			return fmt.Sprintf("tool call %d (%s): expected arguments %s, saw %s", i, w.ID, clip(w.Arguments), clip(string(g.Args))), false
		}
	}
	return "", true
}

// IsJSON reports whether the response declares a JSON body (parameters allowed).
func IsJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// clip quotes s for a detail, at most 60 bytes of it.
func clip(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q…", s[:60])
	}
	return fmt.Sprintf("%q", s)
}
