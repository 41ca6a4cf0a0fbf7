package anthropic

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// StreamMeta identifies one response.
type StreamMeta struct {
	ID    string
	Model string
	// Created is unused by this wire; it is here so both wires share the shape.
	Created int64
	// InputTokens is the prompt size reported in usage; when zero the turn's InputTokens is used
	// (Start, which has no turn, then reports 0 until message_delta).
	InputTokens int
}

// blockKind is what a content block holds.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockThinking
	blockText
	blockTool
)

// toolBlock tracks one tool call's tool_use block.
type toolBlock struct {
	index   int // content block index; -1 until started
	written int // bytes of arguments sent
	open    bool
}

// StreamWriter writes one turn of a scenarios.Script as Messages stream events onto w. Every
// method writes whole SSE frames in one Write, so the caller may flush after each call. It
// builds frames in reused buffers and allocates nothing per step once warm. Not safe for
// concurrent use.
//
// Thinking and text go into one block per run of steps of that kind; a thinking block is
// closed with a signature_delta. Each tool call gets a tool_use block that is closed as soon
// as its full arguments were sent, so parallel calls whose pieces interleave keep their blocks
// open side by side (block starts stay in index order, as the API guarantees).
type StreamWriter struct {
	w     io.Writer
	meta  StreamMeta
	json  []byte // the event's JSON under construction
	out   []byte // the SSE bytes written
	event sse.Event
	// nextIndex is the index of the next content block.
	nextIndex int
	// current is the open thinking or text block, if any.
	current      blockKind
	currentIndex int
	tools        []toolBlock
}

// NewStreamWriter returns a writer for one streamed turn. includeUsage is ignored: the
// Messages stream always reports usage.
func NewStreamWriter(w io.Writer, meta StreamMeta, includeUsage bool) *StreamWriter {
	return &StreamWriter{w: w, meta: meta, json: make([]byte, 0, 512), out: make([]byte, 0, 1024)}
}

// Start writes message_start (an empty assistant message with the input usage) and a ping,
// as the API does.
func (s *StreamWriter) Start() error {
	s.out = s.out[:0]
	s.json = append(s.json[:0], `{"type":"message_start","message":{"id":`...)
	s.json = jsonwire.AppendString(s.json, s.meta.ID)
	s.json = append(s.json, `,"type":"message","role":"assistant","model":`...)
	s.json = jsonwire.AppendString(s.json, s.meta.Model)
	s.json = append(s.json, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	s.json = strconv.AppendInt(s.json, int64(s.meta.InputTokens), 10)
	s.json = append(s.json, `,"output_tokens":1}}}`...)
	s.appendEvent("message_start")
	s.appendPing()
	return s.flush("message_start")
}

// Step writes one scripted step: thinking as a thinking_delta, text as a text_delta, tool
// arguments as an input_json_delta, opening (and closing) blocks as the kind changes.
func (s *StreamWriter) Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error {
	s.out = s.out[:0]
	switch step.Kind {
	case scenarios.StepThinking, scenarios.StepText:
		kind := blockThinking
		if step.Kind == scenarios.StepText {
			kind = blockText
		}
		if s.current != kind {
			s.closeCurrent()
			s.current, s.currentIndex = kind, s.nextIndex
			s.nextIndex++
			s.json = s.appendBlockHead(s.json[:0], "content_block_start", s.currentIndex)
			if kind == blockThinking {
				s.json = append(s.json, `"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
			} else {
				s.json = append(s.json, `"content_block":{"type":"text","text":""}}`...)
			}
			s.appendEvent("content_block_start")
		}
		s.json = s.appendBlockHead(s.json[:0], "content_block_delta", s.currentIndex)
		if kind == blockThinking {
			s.json = append(s.json, `"delta":{"type":"thinking_delta","thinking":`...)
		} else {
			s.json = append(s.json, `"delta":{"type":"text_delta","text":`...)
		}
		s.json = jsonwire.AppendString(s.json, step.Text)
		s.json = append(s.json, `}}`...)
		s.appendEvent("content_block_delta")
	case scenarios.StepToolArgs:
		if step.Tool < 0 || step.Tool >= len(turn.ToolCalls) {
			return fmt.Errorf("anthropic stream: step for tool %d, but the turn has %d tool calls", step.Tool, len(turn.ToolCalls))
		}
		s.closeCurrent()
		for len(s.tools) < len(turn.ToolCalls) {
			s.tools = append(s.tools, toolBlock{index: -1})
		}
		call, tb := &turn.ToolCalls[step.Tool], &s.tools[step.Tool]
		if tb.index < 0 {
			tb.index, tb.open = s.nextIndex, true
			s.nextIndex++
			s.json = s.appendBlockHead(s.json[:0], "content_block_start", tb.index)
			s.json = append(s.json, `"content_block":{"type":"tool_use","id":`...)
			s.json = jsonwire.AppendString(s.json, call.ID)
			s.json = append(s.json, `,"name":`...)
			s.json = jsonwire.AppendString(s.json, call.Name)
			s.json = append(s.json, `,"input":{}}}`...)
			s.appendEvent("content_block_start")
		} else if !tb.open {
			return fmt.Errorf("anthropic stream: tool %d: arguments piece after all %d bytes of its arguments were sent", step.Tool, len(call.Arguments))
		}
		s.json = s.appendBlockHead(s.json[:0], "content_block_delta", tb.index)
		s.json = append(s.json, `"delta":{"type":"input_json_delta","partial_json":`...)
		s.json = jsonwire.AppendString(s.json, step.Text)
		s.json = append(s.json, `}}`...)
		s.appendEvent("content_block_delta")
		tb.written += len(step.Text)
		if tb.written >= len(call.Arguments) {
			s.appendBlockStop(tb.index)
			tb.open = false
		}
	default:
		return fmt.Errorf("anthropic stream: unknown step kind %d", step.Kind)
	}
	return s.flush(step.Kind.String())
}

// Error writes a mid-stream error event (HTTP status stays 200), as the API does when it is
// overloaded after the stream started. The stream must end after it.
func (s *StreamWriter) Error(message string) error {
	if message == "" {
		message = "Overloaded"
	}
	s.json = append(s.json[:0], `{"type":"error","error":{"type":"overloaded_error","message":`...)
	s.json = jsonwire.AppendString(s.json, message)
	s.json = append(s.json, `}}`...)
	s.out = s.out[:0]
	s.appendEvent("error")
	return s.flush("error")
}

// Finish closes every open block, then writes message_delta (stop_reason "tool_use" when the
// turn has tool calls, else "end_turn", with the usage) and message_stop.
func (s *StreamWriter) Finish(turn *scenarios.ScriptTurn) error {
	s.out = s.out[:0]
	s.closeCurrent()
	for i := range s.tools {
		if s.tools[i].open {
			s.appendBlockStop(s.tools[i].index)
			s.tools[i].open = false
		}
	}
	reason := `"end_turn"`
	if len(turn.ToolCalls) > 0 {
		reason = `"tool_use"`
	}
	input := s.meta.InputTokens
	if input == 0 {
		input = turn.InputTokens
	}
	s.json = append(s.json[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	s.json = append(s.json, reason...)
	s.json = append(s.json, `,"stop_sequence":null},"usage":{"input_tokens":`...)
	s.json = strconv.AppendInt(s.json, int64(input), 10)
	s.json = append(s.json, `,"output_tokens":`...)
	s.json = strconv.AppendInt(s.json, int64(turn.OutputTokens), 10)
	s.json = append(s.json, `}}`...)
	s.appendEvent("message_delta")
	s.json = append(s.json[:0], `{"type":"message_stop"}`...)
	s.appendEvent("message_stop")
	return s.flush("finish")
}

// Ping writes a ping event, the API's keep-alive.
func (s *StreamWriter) Ping() error {
	s.out = s.out[:0]
	s.appendPing()
	return s.flush("ping")
}

func (s *StreamWriter) appendPing() {
	s.json = append(s.json[:0], `{"type":"ping"}`...)
	s.appendEvent("ping")
}

// closeCurrent ends the open thinking or text block; a thinking block first gets its
// signature, as the API sends one before every thinking block's stop.
func (s *StreamWriter) closeCurrent() {
	if s.current == blockNone {
		return
	}
	if s.current == blockThinking {
		s.json = s.appendBlockHead(s.json[:0], "content_block_delta", s.currentIndex)
		s.json = append(s.json, `"delta":{"type":"signature_delta","signature":"`...)
		s.json = s.appendSignature(s.json, s.currentIndex)
		s.json = append(s.json, `"}}`...)
		s.appendEvent("content_block_delta")
	}
	s.appendBlockStop(s.currentIndex)
	s.current = blockNone
}

// appendSignature appends a deterministic base64 stand-in for the opaque signature the API
// sends, derived from the message id and block index.
func (s *StreamWriter) appendSignature(dst []byte, index int) []byte {
	var seed [64]byte
	n := copy(seed[:56], s.meta.ID)
	b := strconv.AppendInt(seed[n:n], int64(index), 10)
	sum := sha256.Sum256(seed[:n+len(b)])
	return base64.StdEncoding.AppendEncode(dst, sum[:])
}

func (s *StreamWriter) appendBlockStop(index int) {
	s.json = s.appendBlockHead(s.json[:0], "content_block_stop", index)
	s.json[len(s.json)-1] = '}' // replace the trailing comma
	s.appendEvent("content_block_stop")
}

// appendBlockHead appends `{"type":typ,"index":N,`.
func (s *StreamWriter) appendBlockHead(b []byte, typ string, index int) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	return append(b, ',')
}

// appendEvent frames s.json as a named SSE event onto s.out.
func (s *StreamWriter) appendEvent(name string) {
	s.event.Type = name
	s.event.Data = s.json
	s.out = sse.AppendEvent(s.out, &s.event)
}

// flush writes s.out in one Write.
func (s *StreamWriter) flush(what string) error {
	if _, err := s.w.Write(s.out); err != nil {
		return fmt.Errorf("anthropic stream: write %s: %w", what, err)
	}
	return nil
}

// response is the non-streaming message object.
type response struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []responseBlock `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        responseUsage   `json:"usage"`
}

// responseBlock is one content block; which fields are set depends on Type.
type responseBlock struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type responseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// WriteResponse writes the non-streaming message JSON for the whole turn: a thinking block
// (with a signature), a text block, and a tool_use block per tool call with its arguments as
// input, the stop reason and usage. It writes no headers: the caller sets Content-Type when w
// is an http.ResponseWriter. Arguments that are not a JSON object are an error.
func WriteResponse(w io.Writer, turn *scenarios.ScriptTurn, meta StreamMeta) error {
	var thinking, text []byte
	for i := range turn.Steps {
		switch turn.Steps[i].Kind {
		case scenarios.StepThinking:
			thinking = append(thinking, turn.Steps[i].Text...)
		case scenarios.StepText:
			text = append(text, turn.Steps[i].Text...)
		}
	}
	resp := response{
		ID: meta.ID, Type: "message", Role: "assistant", Model: meta.Model,
		Content: []responseBlock{}, StopReason: "end_turn",
	}
	if len(thinking) > 0 {
		th := string(thinking)
		sig := string((&StreamWriter{meta: meta}).appendSignature(nil, 0))
		resp.Content = append(resp.Content, responseBlock{Type: "thinking", Thinking: &th, Signature: &sig})
	}
	if len(text) > 0 {
		tx := string(text)
		resp.Content = append(resp.Content, responseBlock{Type: "text", Text: &tx})
	}
	for i, call := range turn.ToolCalls {
		input := json.RawMessage(call.Arguments)
		if len(call.Arguments) == 0 {
			input = json.RawMessage(`{}`)
		}
		if !json.Valid(input) || input[0] != '{' {
			return fmt.Errorf("anthropic response: tool call %d (%s): arguments are not a JSON object", i, call.Name)
		}
		resp.Content = append(resp.Content, responseBlock{Type: "tool_use", ID: call.ID, Name: call.Name, Input: input})
		resp.StopReason = "tool_use"
	}
	input := meta.InputTokens
	if input == 0 {
		input = turn.InputTokens
	}
	resp.Usage = responseUsage{InputTokens: input, OutputTokens: turn.OutputTokens}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&resp); err != nil {
		return fmt.Errorf("anthropic response: %w", err)
	}
	return nil
}
