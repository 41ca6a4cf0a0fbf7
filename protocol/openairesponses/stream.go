package openairesponses

import (
	"fmt"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// NewStream decodes a streamed response with the checker's parser: reasoning and summary text
// as thinking, each function_call item a tool call, one ModelTurnEnd at response.completed or
// .incomplete (tool_use when the turn called a function, max_tokens when incomplete), then
// io.EOF. An error event or response.failed is a *protocol.ProviderError, a body ending before
// a terminal io.ErrUnexpectedEOF. It decodes, it does not judge.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(body)}}
}

type stream struct {
	jsonwire.Stream
	view eventView
	// calls maps an output_index to its tool index (-1: not a function_call).
	calls  []int
	ncalls int
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.Queue.Next(ev, s.readFrame) }

func (s *stream) readFrame() error {
	data, err := s.Read(Name, "events")
	if err == io.EOF {
		return fmt.Errorf("openai-responses stream: ended after %d events without response.completed: %w", s.N, io.ErrUnexpectedEOF)
	}
	if err != nil || len(data) == 0 || string(data) == "[DONE]" {
		return err
	}
	if err := parseEvent(&s.Scan, data, &s.view); err != nil {
		return fmt.Errorf("openai-responses stream: event %d (%s): %w", s.N, jsonwire.Excerpt(data), err)
	}
	v := &s.view
	switch string(v.typ) {
	case "response.output_item.added":
		if !v.hasItem || string(v.item.typ) != "function_call" {
			return nil
		}
		if v.outputIndex < 0 || v.outputIndex >= maxItems {
			return fmt.Errorf("openai-responses stream: event %d: output_index %d out of range [0, %d)", s.N, v.outputIndex, maxItems)
		}
		for len(s.calls) <= v.outputIndex {
			s.calls = append(s.calls, -1)
		}
		s.calls[v.outputIndex] = s.ncalls
		s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolStart, ToolIndex: s.ncalls, ToolID: string(v.item.callID), ToolName: string(v.item.name)})
		s.ncalls++
	case "response.output_text.delta":
		s.Queue.PushText(protocol.ModelText, v.delta)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		s.Queue.PushText(protocol.ModelThinking, v.delta)
	case "response.function_call_arguments.delta":
		if v.outputIndex < 0 || v.outputIndex >= len(s.calls) || s.calls[v.outputIndex] < 0 {
			return fmt.Errorf("openai-responses stream: event %d: arguments for output_index %d, which is no function_call", s.N, v.outputIndex)
		}
		if len(v.delta) > 0 {
			s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: s.calls[v.outputIndex], Text: string(v.delta)})
		}
	case "response.completed", "response.incomplete":
		stop := protocol.StopEndTurn
		switch {
		case string(v.typ) == "response.incomplete":
			stop = protocol.StopMaxToken
		case s.ncalls > 0:
			stop = protocol.StopToolUse
		}
		s.Queue.End(stop, protocol.Usage{OutputTokens: v.response.outputTokens})
	case "response.failed":
		return &protocol.ProviderError{Status: http.StatusOK, Type: "server_error", Message: string(v.response.errMessage)}
	case "error":
		msg := v.message
		if msg == nil {
			msg = v.errMessage
		}
		return &protocol.ProviderError{Status: http.StatusOK, Type: "server_error", Message: string(msg)}
	}
	return nil
}
