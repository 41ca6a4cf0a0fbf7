package openairesponses

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// NewStream decodes a streamed response into normalized events, with the checker's frame
// parser: reasoning and reasoning summary text as thinking, output text as text, each
// function_call item as a tool call (its arguments by output_index), and one ModelTurnEnd at
// response.completed or response.incomplete (stop reason tool_use when the turn called a
// function, max_tokens when incomplete; usage.output_tokens as Usage.OutputTokens), io.EOF after
// it. An error event or response.failed is a *protocol.ProviderError with Status 200; a body
// that ends before a terminal is io.ErrUnexpectedEOF. It decodes, it does not judge: the
// Checker does.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{dec: sse.NewDecoder(body)}
}

// stream is the ModelStream of one response.
type stream struct {
	dec    *sse.Decoder
	ev     sse.Event
	scan   jsonwire.Scanner
	view   eventView
	frames int
	queue  jsonwire.EventQueue
	// calls maps an output_index to its tool index (-1: not a function_call).
	calls  []int
	ncalls int
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.queue.Next(ev, s.readFrame) }

// readFrame decodes one SSE event into s.queue (possibly nothing).
func (s *stream) readFrame() error {
	if err := s.dec.Next(&s.ev); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("openai-responses stream: ended after %d events without response.completed: %w", s.frames, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("openai-responses stream: after %d events: %w", s.frames, err)
	}
	s.frames++
	data := bytes.TrimSpace(s.ev.Data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return nil
	}
	if err := parseEvent(&s.scan, data, &s.view); err != nil {
		return fmt.Errorf("openai-responses stream: event %d (%s): %w", s.frames, jsonwire.Excerpt(data), err)
	}
	v := &s.view
	switch string(v.typ) {
	case "response.output_item.added":
		if !v.hasItem || string(v.item.typ) != "function_call" {
			return nil
		}
		if v.outputIndex < 0 || v.outputIndex >= maxItems {
			return fmt.Errorf("openai-responses stream: event %d: output_index %d out of range [0, %d)", s.frames, v.outputIndex, maxItems)
		}
		for len(s.calls) <= v.outputIndex {
			s.calls = append(s.calls, -1)
		}
		s.calls[v.outputIndex] = s.ncalls
		s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolStart, ToolIndex: s.ncalls, ToolID: string(v.item.callID), ToolName: string(v.item.name)})
		s.ncalls++
	case "response.output_text.delta":
		if len(v.delta) > 0 {
			s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelText, Text: string(v.delta)})
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if len(v.delta) > 0 {
			s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelThinking, Text: string(v.delta)})
		}
	case "response.function_call_arguments.delta":
		if v.outputIndex < 0 || v.outputIndex >= len(s.calls) || s.calls[v.outputIndex] < 0 {
			return fmt.Errorf("openai-responses stream: event %d: arguments for output_index %d, which is no function_call", s.frames, v.outputIndex)
		}
		if len(v.delta) > 0 {
			s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: s.calls[v.outputIndex], Text: string(v.delta)})
		}
	case "response.completed", "response.incomplete":
		stop := protocol.StopEndTurn
		switch {
		case string(v.typ) == "response.incomplete":
			stop = protocol.StopMaxToken
		case s.ncalls > 0:
			stop = protocol.StopToolUse
		}
		s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: stop, Usage: protocol.Usage{OutputTokens: v.response.outputTokens}})
		s.queue.Finish()
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
