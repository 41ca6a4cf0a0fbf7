package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// StreamMeta identifies one response: every chunk repeats the id, created time and model.
type StreamMeta struct {
	ID      string
	Model   string
	Created int64 // Unix seconds
	// InputTokens is the prompt size reported in usage; when zero the turn's InputTokens is used.
	InputTokens int
}

// StreamWriter writes one turn of a scenarios.Script as chat.completion.chunk frames onto w.
// Every method writes whole SSE frames in one Write, so the caller may flush after each call.
// It builds frames in reused buffers and allocates nothing per step once warm. Not safe for
// concurrent use.
type StreamWriter struct {
	w            io.Writer
	meta         StreamMeta
	includeUsage bool
	// prefix is the constant head of every chunk up to and including `"delta":`.
	prefix []byte
	// suffix closes a chunk whose finish_reason is null.
	suffix []byte
	delta  []byte // the delta object under construction
	json   []byte // the frame's JSON under construction
	out    []byte // the SSE bytes written
	event  sse.Event
	// toolStarted records which tool calls already sent their opening delta.
	toolStarted []bool
}

// NewStreamWriter returns a writer for one streamed turn. includeUsage is the request's
// stream_options.include_usage.
func NewStreamWriter(w io.Writer, meta StreamMeta, includeUsage bool) *StreamWriter {
	s := &StreamWriter{w: w, meta: meta, includeUsage: includeUsage}
	s.prefix = s.appendChunkHead(make([]byte, 0, 160))
	s.prefix = append(s.prefix, `"choices":[{"index":0,"delta":`...)
	s.suffix = []byte(`,"logprobs":null,"finish_reason":null}]`)
	if includeUsage {
		// The API marks every chunk but the last with a null usage when usage was asked for.
		s.suffix = append(s.suffix, `,"usage":null`...)
	}
	s.suffix = append(s.suffix, '}')
	s.delta = make([]byte, 0, 256)
	s.json = make([]byte, 0, 512)
	s.out = make([]byte, 0, 512)
	return s
}

// appendChunkHead appends `{"id":…,"object":…,"created":…,"model":…,`.
func (s *StreamWriter) appendChunkHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonwire.AppendString(b, s.meta.ID)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.meta.Created, 10)
	b = append(b, `,"model":`...)
	b = jsonwire.AppendString(b, s.meta.Model)
	return append(b, ',')
}

// Start writes the opening chunk, whose delta carries the assistant role and empty content.
func (s *StreamWriter) Start() error {
	s.out = s.out[:0]
	s.appendDelta(`{"role":"assistant","content":""}`, "")
	return s.flush("start")
}

// Step writes one scripted step: thinking as delta.reasoning_content, text as delta.content,
// tool arguments as a tool_calls delta. A tool's first piece is preceded by the delta that
// opens the call (index, id, type "function", name, empty arguments).
func (s *StreamWriter) Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error {
	s.out = s.out[:0]
	switch step.Kind {
	case scenarios.StepThinking:
		s.delta = append(s.delta[:0], `{"reasoning_content":`...)
		s.delta = jsonwire.AppendString(s.delta, step.Text)
		s.delta = append(s.delta, '}')
		s.appendDelta("", "")
	case scenarios.StepText:
		s.delta = append(s.delta[:0], `{"content":`...)
		s.delta = jsonwire.AppendString(s.delta, step.Text)
		s.delta = append(s.delta, '}')
		s.appendDelta("", "")
	case scenarios.StepToolArgs:
		if step.Tool < 0 || step.Tool >= len(turn.ToolCalls) {
			return fmt.Errorf("openai stream: step for tool %d, but the turn has %d tool calls", step.Tool, len(turn.ToolCalls))
		}
		if len(s.toolStarted) < len(turn.ToolCalls) {
			s.toolStarted = append(s.toolStarted, make([]bool, len(turn.ToolCalls)-len(s.toolStarted))...)
		}
		if !s.toolStarted[step.Tool] {
			s.toolStarted[step.Tool] = true
			call := &turn.ToolCalls[step.Tool]
			s.delta = append(s.delta[:0], `{"tool_calls":[{"index":`...)
			s.delta = strconv.AppendInt(s.delta, int64(step.Tool), 10)
			s.delta = append(s.delta, `,"id":`...)
			s.delta = jsonwire.AppendString(s.delta, call.ID)
			s.delta = append(s.delta, `,"type":"function","function":{"name":`...)
			s.delta = jsonwire.AppendString(s.delta, call.Name)
			s.delta = append(s.delta, `,"arguments":""}}]}`...)
			s.appendDelta("", "")
		}
		s.delta = append(s.delta[:0], `{"tool_calls":[{"index":`...)
		s.delta = strconv.AppendInt(s.delta, int64(step.Tool), 10)
		s.delta = append(s.delta, `,"function":{"arguments":`...)
		s.delta = jsonwire.AppendString(s.delta, step.Text)
		s.delta = append(s.delta, `}}]}`...)
		s.appendDelta("", "")
	default:
		return fmt.Errorf("openai stream: unknown step kind %d", step.Kind)
	}
	return s.flush(step.Kind.String())
}

// Error writes a mid-stream error frame, as the API does when it fails after the response
// started: a data frame with only an "error" object. The stream must end after it.
func (s *StreamWriter) Error(message string) error {
	s.json = append(s.json[:0], `{"error":{"message":`...)
	s.json = jsonwire.AppendString(s.json, message)
	s.json = append(s.json, `,"type":"server_error","code":null}}`...)
	s.out = s.appendData(s.out[:0], s.json)
	return s.flush("error")
}

// Finish writes the chunk with the finish_reason ("tool_calls" when the turn has tool calls,
// else "stop"), the usage chunk with empty choices when usage was asked for, and data: [DONE].
func (s *StreamWriter) Finish(turn *scenarios.ScriptTurn) error {
	s.out = s.out[:0]
	reason := `"stop"`
	if len(turn.ToolCalls) > 0 {
		reason = `"tool_calls"`
	}
	s.appendDelta("{}", reason)
	if s.includeUsage {
		input := s.meta.InputTokens
		if input == 0 {
			input = turn.InputTokens
		}
		s.json = s.appendChunkHead(s.json[:0])
		s.json = append(s.json, `"choices":[],"usage":{"prompt_tokens":`...)
		s.json = strconv.AppendInt(s.json, int64(input), 10)
		s.json = append(s.json, `,"completion_tokens":`...)
		s.json = strconv.AppendInt(s.json, int64(turn.OutputTokens), 10)
		s.json = append(s.json, `,"total_tokens":`...)
		s.json = strconv.AppendInt(s.json, int64(input+turn.OutputTokens), 10)
		s.json = append(s.json, `}}`...)
		s.out = s.appendData(s.out, s.json)
	}
	s.out = append(s.out, "data: [DONE]\n\n"...)
	return s.flush("finish")
}

// Ping writes an SSE comment: the chat completions wire has no ping event, and a comment keeps
// intermediaries from timing out an idle stream without clients seeing an event.
func (s *StreamWriter) Ping() error {
	s.out = append(s.out[:0], ": ping\n\n"...)
	return s.flush("ping")
}

// appendDelta appends one chunk frame to s.out whose delta is literal when given, else
// s.delta; finishReason is a JSON literal, or empty for null.
func (s *StreamWriter) appendDelta(literal string, finishReason string) {
	s.json = append(s.json[:0], s.prefix...)
	if literal != "" {
		s.json = append(s.json, literal...)
	} else {
		s.json = append(s.json, s.delta...)
	}
	if finishReason == "" {
		s.json = append(s.json, s.suffix...)
	} else {
		s.json = append(s.json, `,"logprobs":null,"finish_reason":`...)
		s.json = append(s.json, finishReason...)
		s.json = append(s.json, "}]"...)
		if s.includeUsage {
			s.json = append(s.json, `,"usage":null`...)
		}
		s.json = append(s.json, '}')
	}
	s.out = s.appendData(s.out, s.json)
}

// appendData frames data (one line of JSON) as an SSE data event.
func (s *StreamWriter) appendData(dst, data []byte) []byte {
	s.event.Data = data
	return sse.AppendEvent(dst, &s.event)
}

// flush writes s.out in one Write.
func (s *StreamWriter) flush(what string) error {
	if _, err := s.w.Write(s.out); err != nil {
		return fmt.Errorf("openai stream: write %s: %w", what, err)
	}
	return nil
}

// response is the non-streaming chat.completion object.
type response struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []responseChoice `json:"choices"`
	Usage   responseUsage    `json:"usage"`
}

type responseChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role             string             `json:"role"`
	Content          *string            `json:"content"`
	ReasoningContent string             `json:"reasoning_content,omitempty"`
	Refusal          *string            `json:"refusal"`
	ToolCalls        []responseToolCall `json:"tool_calls,omitempty"`
}

type responseToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function responseFunction `json:"function"`
}

type responseFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responseUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// WriteResponse writes the non-streaming chat.completion JSON for the whole turn: reasoning
// as message.reasoning_content, the text as content (null when the turn has none), tool calls
// with their full arguments, usage and finish_reason. It writes no headers: the caller sets
// Content-Type when w is an http.ResponseWriter.
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
	msg := responseMessage{Role: "assistant", ReasoningContent: string(thinking)}
	if len(text) > 0 || len(turn.ToolCalls) == 0 {
		content := string(text)
		msg.Content = &content
	}
	finish := "stop"
	for _, call := range turn.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, responseToolCall{
			ID: call.ID, Type: "function",
			Function: responseFunction{Name: call.Name, Arguments: call.Arguments},
		})
		finish = "tool_calls"
	}
	input := meta.InputTokens
	if input == 0 {
		input = turn.InputTokens
	}
	resp := response{
		ID: meta.ID, Object: "chat.completion", Created: meta.Created, Model: meta.Model,
		Choices: []responseChoice{{Message: msg, FinishReason: finish}},
		Usage:   responseUsage{PromptTokens: input, CompletionTokens: turn.OutputTokens, TotalTokens: input + turn.OutputTokens},
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&resp); err != nil {
		return fmt.Errorf("openai response: %w", err)
	}
	return nil
}
