// Package clientturn is what the provider-wire client dialects (openaichat, anthropicmessages)
// share: which turn of the script a request plays and what it must produce, the conversation a
// client acting as the agent sends for that turn, the assembly of streamed tool calls, the
// configured client itself (Client, told its wire by a Wire: name, request encoder, error rule
// and shape, checker), and what every checker judges alike (Judge). The dialects differ in
// frames, not in what a turn is, so this lives once; each dialect package keeps its frames'
// parser and its checker's rules.
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

// Turns is how many requests session s takes when the client plays the tool loop: one per
// scripted turn up to and including the one the provider fails at; one without ground truth,
// since the tool calls an unknown model makes cannot be answered from the script.
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
	// Truth is false in no-ground-truth mode: only structure is judged.
	Truth bool
	// Turn is the scripted turn (what was streamed before a failure, for a failed turn); nil
	// without ground truth or for a turn the provider refuses with an HTTP error.
	Turn *scenarios.ExpectedTurn
	// HTTPError: the provider answers this turn with an HTTP error before any stream.
	HTTPError bool
	// StreamError: the provider fails this turn with an error frame mid-stream.
	StreamError bool
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

// ModelRequest is the conversation for s's current turn: the user's input, then for each
// earlier turn the assistant's scripted text and tool calls and the scripted tool results,
// as an agent that ran the tools would send it. Tools offers every scripted tool's name, so a
// real model behind a gateway may call them too; Thinking asks for reasoning when the script
// has some.
//
// An endpoint session (Session.Endpoint) is sent as an application would: its messages and
// MaxTokens (in the field it names), and vLLM's min_tokens and ignore_eos when asked, nothing else.
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
	// Args is the concatenation of the argument pieces so far.
	Args []byte
}

// Tools assembles one stream's tool calls by position (the OpenAI index, the Anthropic
// tool_use order). Not safe for concurrent use; each checker owns one.
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

// CompareTools reports whether got are exactly the scripted calls (ids, names, arguments byte
// for byte, order), and otherwise what differs first.
func CompareTools(got []Tool, want []scenarios.ScriptToolCall) (detail string, ok bool) {
	if len(got) != len(want) {
		return sprintf("expected %d tool call(s), saw %d", len(want), len(got)), false
	}
	for i := range want {
		g, w := &got[i], &want[i]
		switch {
		case g.ID != w.ID:
			return sprintf("tool call %d: expected id %q, saw %q", i, w.ID, g.ID), false
		case g.Name != w.Name:
			return sprintf("tool call %d (%s): expected name %q, saw %q", i, w.ID, w.Name, g.Name), false
		case string(g.Args) != w.Arguments:
			return sprintf("tool call %d (%s): expected arguments %s, saw %s", i, w.ID, clip(w.Arguments), clip(string(g.Args))), false
		}
	}
	return "", true
}

// IsJSON reports whether the response declares a JSON body (parameters allowed).
func IsJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// clip quotes s for a detail, at most 60 bytes of it.
func clip(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q…", s[:60])
	}
	return fmt.Sprintf("%q", s)
}
