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
)

// StreamMeta identifies one response (Created is unused; Start reports an InputTokens of 0
// until message_delta).
type StreamMeta = jsonwire.StreamMeta

// toolBlock tracks one tool call's tool_use block.
type toolBlock struct {
	index   int // content block index; -1 until started
	written int // bytes of arguments sent
	open    bool
}

// StreamWriter writes one turn of a scenarios.Script as Messages stream events onto w, whole
// SSE frames in one Write per method, allocating nothing per step once warm. Thinking and text
// take one block per run of steps of that kind (a thinking block closed with a
// signature_delta); each tool call's tool_use block closes once its arguments are sent, so
// interleaved parallel calls keep their blocks open side by side. Not safe for concurrent use.
type StreamWriter struct {
	f            jsonwire.Frames
	meta         StreamMeta
	nextIndex    int       // the index of the next content block
	current      BlockKind // the open thinking or text block, if any
	currentIndex int
	tools        []toolBlock
}

// NewStreamWriter returns a writer for one turn; includeUsage is ignored (usage is always sent).
func NewStreamWriter(w io.Writer, meta StreamMeta, includeUsage bool) *StreamWriter {
	return &StreamWriter{f: jsonwire.NewFrames(w, "anthropic"), meta: meta}
}

// Start writes message_start (the input usage) and a ping, as the API does.
func (s *StreamWriter) Start() error {
	s.f.JSON = append(s.f.JSON[:0], `{"type":"message_start","message":{"id":`...)
	s.f.JSON = jsonwire.AppendString(s.f.JSON, s.meta.ID)
	s.f.JSON = jsonwire.AppendField(s.f.JSON, `,"type":"message","role":"assistant","model":`, s.meta.Model)
	s.f.JSON = append(s.f.JSON, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	s.f.JSON = strconv.AppendInt(s.f.JSON, int64(s.meta.InputTokens), 10)
	s.f.JSON = append(s.f.JSON, `,"output_tokens":1}}}`...)
	s.f.Frame("message_start")
	s.appendPing()
	return s.f.Flush("message_start")
}

// Step writes one scripted step: thinking as a thinking_delta, text as a text_delta, tool
// arguments as an input_json_delta, opening (and closing) blocks as the kind changes.
func (s *StreamWriter) Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error {
	switch step.Kind {
	case scenarios.StepThinking, scenarios.StepText:
		kind := BlockThinking
		if step.Kind == scenarios.StepText {
			kind = BlockText
		}
		if s.current != kind {
			s.closeCurrent()
			s.current, s.currentIndex = kind, s.nextIndex
			s.nextIndex++
			s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_start", s.currentIndex)
			if kind == BlockThinking {
				s.f.JSON = append(s.f.JSON, `"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
			} else {
				s.f.JSON = append(s.f.JSON, `"content_block":{"type":"text","text":""}}`...)
			}
			s.f.Frame("content_block_start")
		}
		s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_delta", s.currentIndex)
		if kind == BlockThinking {
			s.f.JSON = append(s.f.JSON, `"delta":{"type":"thinking_delta","thinking":`...)
		} else {
			s.f.JSON = append(s.f.JSON, `"delta":{"type":"text_delta","text":`...)
		}
		s.f.JSON = jsonwire.AppendString(s.f.JSON, step.Text)
		s.f.JSON = append(s.f.JSON, `}}`...)
		s.f.Frame("content_block_delta")
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
			s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_start", tb.index)
			s.f.JSON = jsonwire.AppendField(s.f.JSON, `"content_block":{"type":"tool_use","id":`, call.ID)
			s.f.JSON = jsonwire.AppendField(s.f.JSON, `,"name":`, call.Name)
			s.f.JSON = append(s.f.JSON, `,"input":{}}}`...)
			s.f.Frame("content_block_start")
		} else if !tb.open {
			s.f.Out = s.f.Out[:0] // the step fails: closeCurrent's frames are not written
			return fmt.Errorf("anthropic stream: tool %d: arguments piece after all %d bytes of its arguments were sent", step.Tool, len(call.Arguments))
		}
		s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_delta", tb.index)
		s.f.JSON = jsonwire.AppendField(s.f.JSON, `"delta":{"type":"input_json_delta","partial_json":`, step.Text)
		s.f.JSON = append(s.f.JSON, `}}`...)
		s.f.Frame("content_block_delta")
		tb.written += len(step.Text)
		if tb.written >= len(call.Arguments) {
			s.appendBlockStop(tb.index)
			tb.open = false
		}
	default:
		return fmt.Errorf("anthropic stream: unknown step kind %d", step.Kind)
	}
	return s.f.Flush(step.Kind.String())
}

// Error writes the API's mid-stream overloaded error event; the stream must end after it.
func (s *StreamWriter) Error(message string) error {
	if message == "" {
		message = "Overloaded"
	}
	s.f.JSON = append(s.f.JSON[:0], `{"type":"error","error":{"type":"overloaded_error","message":`...)
	s.f.JSON = jsonwire.AppendString(s.f.JSON, message)
	s.f.JSON = append(s.f.JSON, `}}`...)
	s.f.Frame("error")
	return s.f.Flush("error")
}

// Finish closes every open block, then writes message_delta (stop_reason "tool_use" when the
// turn has tool calls, else "end_turn", with the usage) and message_stop.
func (s *StreamWriter) Finish(turn *scenarios.ScriptTurn) error {
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
	input := s.meta.Input(turn)
	s.f.JSON = append(s.f.JSON[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	s.f.JSON = append(s.f.JSON, reason...)
	s.f.JSON = jsonwire.AppendInt(s.f.JSON, `,"stop_sequence":null},"usage":{"input_tokens":`, int64(input))
	s.f.JSON = jsonwire.AppendInt(s.f.JSON, `,"output_tokens":`, int64(turn.OutputTokens))
	s.f.JSON = append(s.f.JSON, `}}`...)
	s.f.Frame("message_delta")
	s.f.JSON = append(s.f.JSON[:0], `{"type":"message_stop"}`...)
	s.f.Frame("message_stop")
	return s.f.Flush("finish")
}

// Ping writes a ping event, the API's keep-alive.
func (s *StreamWriter) Ping() error {
	s.appendPing()
	return s.f.Flush("ping")
}

func (s *StreamWriter) appendPing() {
	s.f.JSON = append(s.f.JSON[:0], `{"type":"ping"}`...)
	s.f.Frame("ping")
}

// closeCurrent ends the open thinking (after its signature, as the API sends) or text block.
func (s *StreamWriter) closeCurrent() {
	if s.current == BlockOther {
		return
	}
	if s.current == BlockThinking {
		s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_delta", s.currentIndex)
		s.f.JSON = append(s.f.JSON, `"delta":{"type":"signature_delta","signature":"`...)
		s.f.JSON = s.appendSignature(s.f.JSON, s.currentIndex)
		s.f.JSON = append(s.f.JSON, `"}}`...)
		s.f.Frame("content_block_delta")
	}
	s.appendBlockStop(s.currentIndex)
	s.current = BlockOther
}

// appendSignature appends a stand-in for the API's signature, from the message id and index.
func (s *StreamWriter) appendSignature(dst []byte, index int) []byte {
	var seed [64]byte
	n := copy(seed[:56], s.meta.ID)
	b := strconv.AppendInt(seed[n:n], int64(index), 10)
	sum := sha256.Sum256(seed[:n+len(b)])
	return base64.StdEncoding.AppendEncode(dst, sum[:])
}

func (s *StreamWriter) appendBlockStop(index int) {
	s.f.JSON = s.appendBlockHead(s.f.JSON[:0], "content_block_stop", index)
	s.f.JSON[len(s.f.JSON)-1] = '}' // replace the trailing comma
	s.f.Frame("content_block_stop")
}

// appendBlockHead appends `{"type":typ,"index":N,`.
func (s *StreamWriter) appendBlockHead(b []byte, typ string, index int) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = jsonwire.AppendInt(b, `","index":`, int64(index))
	return append(b, ',')
}

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

// WriteResponse writes the non-streaming message JSON for the whole turn; arguments that are
// not a JSON object are an error. It writes no headers: the caller sets Content-Type.
func WriteResponse(w io.Writer, turn *scenarios.ScriptTurn, meta StreamMeta) error {
	thinking, text := jsonwire.TurnText(turn)
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
	resp.Usage = responseUsage{InputTokens: meta.Input(turn), OutputTokens: turn.OutputTokens}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&resp); err != nil {
		return fmt.Errorf("anthropic response: %w", err)
	}
	return nil
}
