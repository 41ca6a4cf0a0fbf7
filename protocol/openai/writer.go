package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// StreamMeta identifies one response: every chunk repeats the id, created time and model.
type StreamMeta = jsonwire.StreamMeta

// StreamWriter writes one turn as chat.completion.chunk frames onto w, one Write per method,
// allocating nothing per step once warm. Not safe for concurrent use.
type StreamWriter struct {
	f            jsonwire.Frames
	meta         StreamMeta
	includeUsage bool
	prefix       []byte // the constant head of every chunk up to and including `"delta":`
	suffix       []byte // closes a chunk whose finish_reason is null
	delta        []byte // the delta object under construction
	toolStarted  []bool // tool calls that sent their opening delta
}

// NewStreamWriter returns a writer for one turn; includeUsage is stream_options.include_usage.
func NewStreamWriter(w io.Writer, meta StreamMeta, includeUsage bool) *StreamWriter {
	s := &StreamWriter{f: jsonwire.NewFrames(w, "openai"), meta: meta, includeUsage: includeUsage}
	s.prefix = s.appendChunkHead(make([]byte, 0, 160))
	s.prefix = append(s.prefix, `"choices":[{"index":0,"delta":`...)
	s.suffix = []byte(`,"logprobs":null,"finish_reason":null}]`)
	if includeUsage {
		// The API marks every chunk but the last with a null usage when usage was asked for.
		s.suffix = append(s.suffix, `,"usage":null`...)
	}
	s.suffix = append(s.suffix, '}')
	s.delta = make([]byte, 0, 256)
	return s
}

// appendChunkHead appends `{"id":…,"object":…,"created":…,"model":…,`.
func (s *StreamWriter) appendChunkHead(b []byte) []byte {
	b = jsonwire.AppendField(b, `{"id":`, s.meta.ID)
	b = jsonwire.AppendInt(b, `,"object":"chat.completion.chunk","created":`, s.meta.Created)
	b = jsonwire.AppendField(b, `,"model":`, s.meta.Model)
	return append(b, ',')
}

// Start writes the opening chunk, whose delta carries the assistant role and empty content.
func (s *StreamWriter) Start() error {
	s.appendDelta(`{"role":"assistant","content":""}`, "")
	return s.f.Flush("start")
}

// Step writes one scripted step: thinking as delta.reasoning_content, text as delta.content,
// tool arguments as a tool_calls delta after the one that opens the call.
func (s *StreamWriter) Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error {
	switch step.Kind {
	case scenarios.StepThinking, scenarios.StepText:
		key := `{"content":`
		if step.Kind == scenarios.StepThinking {
			key = `{"reasoning_content":`
		}
		s.delta = append(s.delta[:0], key...)
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
			s.delta = jsonwire.AppendField(s.delta, `,"id":`, call.ID)
			s.delta = jsonwire.AppendField(s.delta, `,"type":"function","function":{"name":`, call.Name)
			s.delta = append(s.delta, `,"arguments":""}}]}`...)
			s.appendDelta("", "")
		}
		s.delta = append(s.delta[:0], `{"tool_calls":[{"index":`...)
		s.delta = strconv.AppendInt(s.delta, int64(step.Tool), 10)
		s.delta = jsonwire.AppendField(s.delta, `,"function":{"arguments":`, step.Text)
		s.delta = append(s.delta, `}}]}`...)
		s.appendDelta("", "")
	default:
		return fmt.Errorf("openai stream: unknown step kind %d", step.Kind)
	}
	return s.f.Flush(step.Kind.String())
}

// Error writes the API's mid-stream error frame, after which the stream must end.
func (s *StreamWriter) Error(message string) error {
	s.f.JSON = append(s.f.JSON[:0], `{"error":{"message":`...)
	s.f.JSON = jsonwire.AppendString(s.f.JSON, message)
	s.f.JSON = append(s.f.JSON, `,"type":"server_error","code":null}}`...)
	s.f.Frame("")
	return s.f.Flush("error")
}

// Finish writes the finish_reason's chunk, the usage chunk when asked for, and data: [DONE].
func (s *StreamWriter) Finish(turn *scenarios.ScriptTurn) error {
	reason := `"stop"`
	if len(turn.ToolCalls) > 0 {
		reason = `"tool_calls"`
	}
	s.appendDelta("{}", reason)
	if s.includeUsage {
		input := s.meta.Input(turn)
		j := s.appendChunkHead(s.f.JSON[:0])
		j = jsonwire.AppendInt(j, `"choices":[],"usage":{"prompt_tokens":`, int64(input))
		j = jsonwire.AppendInt(j, `,"completion_tokens":`, int64(turn.OutputTokens))
		j = jsonwire.AppendInt(j, `,"total_tokens":`, int64(input+turn.OutputTokens))
		s.f.JSON = append(j, `}}`...)
		s.f.Frame("")
	}
	s.f.Out = append(s.f.Out, "data: [DONE]\n\n"...)
	return s.f.Flush("finish")
}

// Ping writes an SSE comment: the chat completions wire has no ping event.
func (s *StreamWriter) Ping() error { return s.f.Ping() }

// appendDelta appends a chunk frame of delta literal ("": s.delta) and finishReason, a JSON
// literal ("": null).
func (s *StreamWriter) appendDelta(literal string, finishReason string) {
	j := append(s.f.JSON[:0], s.prefix...)
	if literal != "" {
		j = append(j, literal...)
	} else {
		j = append(j, s.delta...)
	}
	if finishReason == "" {
		j = append(j, s.suffix...)
	} else {
		j = append(j, `,"logprobs":null,"finish_reason":`...)
		j = append(j, finishReason...)
		j = append(j, "}]"...)
		if s.includeUsage {
			j = append(j, `,"usage":null`...)
		}
		j = append(j, '}')
	}
	s.f.JSON = j
	s.f.Frame("")
}

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

// WriteResponse writes the non-streaming chat.completion JSON for the whole turn (content null
// when the turn has no text). It writes no headers: the caller sets Content-Type.
func WriteResponse(w io.Writer, turn *scenarios.ScriptTurn, meta StreamMeta) error {
	thinking, text := jsonwire.TurnText(turn)
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
	input := meta.Input(turn)
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
