package openairesponses

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// StreamMeta identifies one response, repeated in every response object of the stream.
type StreamMeta = jsonwire.StreamMeta

// Item kinds of a scripted turn, in the order a writer opens them.
const (
	itemNone      = ""
	itemReasoning = "reasoning"
	itemMessage   = "message"
	itemFunction  = "function_call"
)

// StreamWriter writes one turn of a scenarios.Script as Responses streaming events onto w:
// thinking as a reasoning item, answer text as a message item, each tool call as a
// function_call item; a step of another kind (or tool) closes the open item, so items come one
// after another, as OpenAI streams them. Whole SSE frames in one Write per method, built in
// reused buffers. Not safe for concurrent use.
type StreamWriter struct {
	f    jsonwire.Frames
	meta StreamMeta
	seq  int
	// cur is the open item (itemNone when none), index its output_index, tool its tool index.
	cur   string
	index int
	tool  int
	// id and text are the open item's id and text (or arguments) so far, JSON-escaped, unquoted.
	id       []byte
	text     []byte
	output   []byte // every closed item's JSON, comma-separated, for the terminal's response
	toolDone []bool // the tool calls whose items were closed
}

// NewStreamWriter returns a writer for one streamed turn.
func NewStreamWriter(w io.Writer, meta StreamMeta) *StreamWriter {
	return &StreamWriter{f: jsonwire.NewFrames(w, Name), meta: meta, index: -1, text: make([]byte, 0, 256)}
}

// Start writes response.created and response.in_progress.
func (s *StreamWriter) Start() error {
	s.appendResponseEvent("response.created", "in_progress", nil, nil)
	s.appendResponseEvent("response.in_progress", "in_progress", nil, nil)
	return s.f.Flush("start")
}

// Step writes one scripted step as its delta event, after closing the open item and opening
// the step's when it is another (a tool call whose item closed cannot stream again).
func (s *StreamWriter) Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error {
	switch step.Kind {
	case scenarios.StepThinking:
		s.open(turn, itemReasoning, 0)
		s.appendDelta("response.reasoning_text.delta", step.Text, true)
	case scenarios.StepText:
		s.open(turn, itemMessage, 0)
		s.appendDelta("response.output_text.delta", step.Text, true)
	case scenarios.StepToolArgs:
		if step.Tool < 0 || step.Tool >= len(turn.ToolCalls) {
			return fmt.Errorf("openai-responses stream: step for tool %d, but the turn has %d tool calls", step.Tool, len(turn.ToolCalls))
		}
		if len(s.toolDone) < len(turn.ToolCalls) {
			s.toolDone = append(s.toolDone, make([]bool, len(turn.ToolCalls)-len(s.toolDone))...)
		}
		if s.toolDone[step.Tool] && !(s.cur == itemFunction && s.tool == step.Tool) {
			return fmt.Errorf("openai-responses stream: tool %d's arguments resume after its function_call item closed (items stream one at a time)", step.Tool)
		}
		s.open(turn, itemFunction, step.Tool)
		s.appendDelta("response.function_call_arguments.delta", step.Text, false)
	default:
		return fmt.Errorf("openai-responses stream: unknown step kind %d", step.Kind)
	}
	s.text = appendEscaped(s.text, step.Text)
	return s.f.Flush(step.Kind.String())
}

// open makes an item of kind (and tool) the open one, closing another first.
func (s *StreamWriter) open(turn *scenarios.ScriptTurn, kind string, tool int) {
	if s.cur == kind && (kind != itemFunction || s.tool == tool) {
		return
	}
	s.closeItem(turn)
	s.cur, s.tool = kind, tool
	s.index++
	s.text = s.text[:0]
	s.id = s.appendItemID(s.id[:0], kind, s.index)
	s.f.JSON = s.appendHead(s.f.JSON[:0], "response.output_item.added")
	s.f.JSON = jsonwire.AppendInt(s.f.JSON, `,"output_index":`, int64(s.index))
	s.f.JSON = append(s.f.JSON, `,"item":`...)
	s.f.JSON = s.appendItem(s.f.JSON, turn, "in_progress", nil)
	s.f.JSON = append(s.f.JSON, '}')
	s.f.Frame("response.output_item.added")
	if kind == itemFunction {
		return
	}
	s.f.JSON = s.appendHead(s.f.JSON[:0], "response.content_part.added")
	s.f.JSON = s.appendItemRef(s.f.JSON, true)
	s.f.JSON = append(s.f.JSON, `,"part":`...)
	s.f.JSON = appendPart(s.f.JSON, kind, nil)
	s.f.JSON = append(s.f.JSON, '}')
	s.f.Frame("response.content_part.added")
}

// closeItem writes the .done events ending the open item, kept for the terminal's output.
func (s *StreamWriter) closeItem(turn *scenarios.ScriptTurn) {
	switch s.cur {
	case itemNone:
		return
	case itemFunction:
		s.f.JSON = s.appendHead(s.f.JSON[:0], "response.function_call_arguments.done")
		s.f.JSON = s.appendItemRef(s.f.JSON, false)
		s.f.JSON = append(s.f.JSON, `,"arguments":`...)
		s.f.JSON = appendBytes(s.f.JSON, s.text)
		s.f.JSON = append(s.f.JSON, '}')
		s.f.Frame("response.function_call_arguments.done")
		s.toolDone[s.tool] = true
	default:
		typ := "response.output_text.done"
		if s.cur == itemReasoning {
			typ = "response.reasoning_text.done"
		}
		s.f.JSON = s.appendHead(s.f.JSON[:0], typ)
		s.f.JSON = s.appendItemRef(s.f.JSON, true)
		s.f.JSON = append(s.f.JSON, `,"text":`...)
		s.f.JSON = appendBytes(s.f.JSON, s.text)
		if s.cur == itemMessage {
			s.f.JSON = append(s.f.JSON, `,"logprobs":[]`...)
		}
		s.f.JSON = append(s.f.JSON, '}')
		s.f.Frame(typ)
		s.f.JSON = s.appendHead(s.f.JSON[:0], "response.content_part.done")
		s.f.JSON = s.appendItemRef(s.f.JSON, true)
		s.f.JSON = append(s.f.JSON, `,"part":`...)
		s.f.JSON = appendPart(s.f.JSON, s.cur, s.text)
		s.f.JSON = append(s.f.JSON, '}')
		s.f.Frame("response.content_part.done")
	}
	s.f.JSON = s.appendHead(s.f.JSON[:0], "response.output_item.done")
	s.f.JSON = jsonwire.AppendInt(s.f.JSON, `,"output_index":`, int64(s.index))
	s.f.JSON = append(s.f.JSON, `,"item":`...)
	start := len(s.f.JSON)
	s.f.JSON = s.appendItem(s.f.JSON, turn, "completed", s.text)
	if len(s.output) > 0 {
		s.output = append(s.output, ',')
	}
	s.output = append(s.output, s.f.JSON[start:]...)
	s.f.JSON = append(s.f.JSON, '}')
	s.f.Frame("response.output_item.done")
	s.cur = itemNone
}

// Error fails the response mid-stream as the specification says: an error event,
// response.failed, data: [DONE]. The stream must end after it.
func (s *StreamWriter) Error(message string) error {
	s.f.JSON = s.appendHead(s.f.JSON[:0], "error")
	s.f.JSON = jsonwire.AppendField(s.f.JSON, `,"code":"server_error","message":`, message)
	s.f.JSON = append(s.f.JSON, `,"param":null}`...)
	s.f.Frame("error")
	s.appendResponseEvent("response.failed", "failed", nil, &message)
	s.f.Out = append(s.f.Out, "data: [DONE]\n\n"...)
	return s.f.Flush("error")
}

// Finish closes the open item and writes response.completed with every item and the usage,
// then data: [DONE] (the specification's end; OpenAI's own stream has none).
func (s *StreamWriter) Finish(turn *scenarios.ScriptTurn) error {
	s.closeItem(turn)
	s.appendResponseEvent("response.completed", "completed", turn, nil)
	s.f.Out = append(s.f.Out, "data: [DONE]\n\n"...)
	return s.f.Flush("finish")
}

// Ping writes an SSE comment: the Responses wire has no ping event.
func (s *StreamWriter) Ping() error { return s.f.Ping() }

// appendHead appends `{"type":typ,"sequence_number":n` and advances the sequence.
func (s *StreamWriter) appendHead(b []byte, typ string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = jsonwire.AppendInt(b, `","sequence_number":`, int64(s.seq))
	s.seq++
	return b
}

// appendItemRef appends the open item's item_id, output_index and (part) content_index 0.
func (s *StreamWriter) appendItemRef(b []byte, part bool) []byte {
	b = append(b, `,"item_id":`...)
	b = appendBytes(b, s.id)
	b = jsonwire.AppendInt(b, `,"output_index":`, int64(s.index))
	if part {
		b = append(b, `,"content_index":0`...)
	}
	return b
}

func (s *StreamWriter) appendDelta(typ, delta string, part bool) {
	s.f.JSON = s.appendHead(s.f.JSON[:0], typ)
	s.f.JSON = s.appendItemRef(s.f.JSON, part)
	s.f.JSON = jsonwire.AppendField(s.f.JSON, `,"delta":`, delta)
	if typ == "response.output_text.delta" {
		s.f.JSON = append(s.f.JSON, `,"logprobs":[]`...)
	}
	s.f.JSON = append(s.f.JSON, '}')
	s.f.Frame(typ)
}

// appendItemID appends the id of the item of kind at index (rs_, msg_ or fc_, id, index).
func (s *StreamWriter) appendItemID(b []byte, kind string, index int) []byte {
	switch kind {
	case itemReasoning:
		b = append(b, "rs_"...)
	case itemMessage:
		b = append(b, "msg_"...)
	default:
		b = append(b, "fc_"...)
	}
	b = appendEscaped(b, s.meta.ID)
	b = append(b, '_')
	return strconv.AppendInt(b, int64(index), 10)
}

// appendItem appends the open item's JSON with status and text (nil: nothing streamed yet).
func (s *StreamWriter) appendItem(b []byte, turn *scenarios.ScriptTurn, status string, text []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendBytes(b, s.id)
	b = append(b, `,"type":"`...)
	b = append(b, s.cur...)
	b = append(b, `","status":"`...)
	b = append(b, status...)
	b = append(b, '"')
	switch s.cur {
	case itemFunction:
		call := &turn.ToolCalls[s.tool]
		b = jsonwire.AppendField(b, `,"call_id":`, call.ID)
		b = jsonwire.AppendField(b, `,"name":`, call.Name)
		b = append(b, `,"arguments":`...)
		b = appendBytes(b, text)
	case itemMessage:
		b = append(b, `,"role":"assistant","content":[`...)
		if text != nil {
			b = appendPart(b, itemMessage, text)
		}
		b = append(b, ']')
	case itemReasoning:
		b = append(b, `,"summary":[],"content":[`...)
		if text != nil {
			b = appendPart(b, itemReasoning, text)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendPart appends the content part of an item of kind with text.
func appendPart(b []byte, kind string, text []byte) []byte {
	if kind == itemReasoning {
		b = append(b, `{"type":"reasoning_text","text":`...)
		b = appendBytes(b, text)
		return append(b, '}')
	}
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = appendBytes(b, text)
	return append(b, '}')
}

// appendBytes appends escaped, a JSON string's escaped content, as the string.
func appendBytes(b, escaped []byte) []byte {
	b = append(b, '"')
	b = append(b, escaped...)
	return append(b, '"')
}

// appendEscaped appends text JSON-escaped without quotes (pieces concatenate to the whole).
func appendEscaped(b []byte, text string) []byte {
	start := len(b)
	b = jsonwire.AppendString(b, text)
	copy(b[start:], b[start+1:len(b)-1]) // drop the quotes
	return b[:len(b)-2]
}

// appendResponseEvent appends a lifecycle event: the response with status, the closed items,
// the turn's usage (turn set) and the error (message set).
func (s *StreamWriter) appendResponseEvent(typ, status string, turn *scenarios.ScriptTurn, message *string) {
	s.f.JSON = s.appendHead(s.f.JSON[:0], typ)
	s.f.JSON = append(s.f.JSON, `,"response":`...)
	s.f.JSON = s.appendResponse(s.f.JSON, status, turn, message)
	s.f.JSON = append(s.f.JSON, '}')
	s.f.Frame(typ)
}

func (s *StreamWriter) appendResponse(b []byte, status string, turn *scenarios.ScriptTurn, message *string) []byte {
	b = jsonwire.AppendField(b, `{"id":`, s.meta.ID)
	b = jsonwire.AppendInt(b, `,"object":"response","created_at":`, s.meta.Created)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","error":`...)
	if message != nil {
		b = jsonwire.AppendField(b, `{"code":"server_error","message":`, *message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = jsonwire.AppendField(b, `,"incomplete_details":null,"model":`, s.meta.Model)
	b = append(b, `,"output":[`...)
	b = append(b, s.output...)
	b = append(b, `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":`...)
	if turn == nil {
		b = append(b, "null"...)
	} else {
		b = appendUsage(b, s.meta.Input(turn), turn)
	}
	return append(b, '}')
}

// appendUsage appends the usage object of turn, its thinking steps' tokens as reasoning tokens.
func appendUsage(b []byte, input int, turn *scenarios.ScriptTurn) []byte {
	reasoning := 0
	for i := range turn.Steps {
		if turn.Steps[i].Kind == scenarios.StepThinking {
			reasoning += turn.Steps[i].Tokens
		}
	}
	b = jsonwire.AppendInt(b, `{"input_tokens":`, int64(input))
	b = jsonwire.AppendInt(b, `,"input_tokens_details":{"cached_tokens":0},"output_tokens":`, int64(turn.OutputTokens))
	b = jsonwire.AppendInt(b, `,"output_tokens_details":{"reasoning_tokens":`, int64(reasoning))
	b = jsonwire.AppendInt(b, `},"total_tokens":`, int64(input+turn.OutputTokens))
	return append(b, '}')
}

// WriteResponse writes the whole turn's non-streaming response (no headers).
func WriteResponse(w io.Writer, turn *scenarios.ScriptTurn, meta StreamMeta) error {
	s := NewStreamWriter(io.Discard, meta)
	for i := range turn.Steps {
		if err := s.Step(turn, &turn.Steps[i]); err != nil {
			return err
		}
	}
	s.closeItem(turn)
	body := s.appendResponse(nil, "completed", turn, nil)
	if !json.Valid(body) {
		return fmt.Errorf("openai-responses response: built invalid JSON")
	}
	if _, err := w.Write(append(body, '\n')); err != nil {
		return fmt.Errorf("openai-responses response: %w", err)
	}
	return nil
}
