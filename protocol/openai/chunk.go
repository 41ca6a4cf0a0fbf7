package openai

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Chunk is one chat.completion.chunk as the wire's two readers need it: the runtime's stream
// (NewStream) and the openai-chat dialect's checker. It keeps presence, so the checker can tell
// a tool call delta without "index" from one at index 0, and it reads every reasoning field
// in use: reasoning_content (DeepSeek, OpenAI-compatible servers) and reasoning (vLLM,
// OpenRouter). Byte slices alias the frame or the scanner's buffer and are valid until the
// next frame; a Chunk and its slices are reused by ParseChunk, so a warm reader decodes
// without allocating. A nil slice is an absent or null member.
type Chunk struct {
	Object     []byte
	HasChoices bool // "choices" is an array
	Choices    []Choice
	HasUsage   bool // "usage" is an object
	// PromptTokens and CompletionTokens are usage's counts; HasCompletionTokens says whether
	// completion_tokens was an integer.
	PromptTokens, CompletionTokens int
	HasCompletionTokens            bool
	HasError                       bool // "error" is an object
	ErrorMessage, ErrorType        []byte
}

// Choice is one element of "choices".
type Choice struct {
	HasIndex         bool
	Index            int
	Content          []byte
	ReasoningContent []byte
	Reasoning        []byte
	FinishReason     []byte
	ToolCalls        []ToolCall
}

// Thinking is the choice's reasoning text: reasoning_content when it has any, else reasoning.
func (c *Choice) Thinking() []byte {
	if len(c.ReasoningContent) > 0 {
		return c.ReasoningContent
	}
	return c.Reasoning
}

// ToolCall is one element of delta.tool_calls.
type ToolCall struct {
	HasIndex    bool
	Index       int
	ID, Type    []byte
	HasFunction bool // "function" is an object
	Name, Args  []byte
}

// ParseChunk fills v from one frame's JSON: only the fields above are decoded, everything
// else is validated and skipped. A JSON null reads as absent; a member given twice keeps its
// last non-null value, as encoding/json does.
func ParseChunk(sc *jsonwire.Scanner, data []byte, v *Chunk) error {
	sc.Reset(data)
	choices := v.Choices[:0]
	*v = Chunk{}
	if sc.Object("chunk") {
		for key := range sc.Members() {
			switch string(key) {
			case "object":
				setStr(&v.Object, sc.Str("object"))
			case "choices":
				choices = choices[:0]
				if v.HasChoices = sc.Array("choices"); v.HasChoices {
					for first := true; sc.Element(&first); {
						var calls []ToolCall
						if len(choices) < cap(choices) {
							calls = choices[:len(choices)+1][len(choices)].ToolCalls[:0]
						}
						choices = append(choices, Choice{ToolCalls: calls})
						parseChoice(sc, &choices[len(choices)-1])
					}
				}
			case "usage":
				if v.HasUsage = sc.Object("usage"); !v.HasUsage {
					continue
				}
				for key := range sc.Members() {
					switch string(key) {
					case "prompt_tokens":
						setInt(&v.PromptTokens, nil, sc, "usage.prompt_tokens")
					case "completion_tokens":
						setInt(&v.CompletionTokens, &v.HasCompletionTokens, sc, "usage.completion_tokens")
					default:
						sc.Skip()
					}
				}
			case "error":
				if v.HasError = sc.Object("error"); !v.HasError {
					continue
				}
				for key := range sc.Members() {
					switch string(key) {
					case "message":
						setStr(&v.ErrorMessage, sc.Str("error.message"))
					case "type":
						setStr(&v.ErrorType, sc.Str("error.type"))
					default:
						sc.Skip()
					}
				}
			default:
				sc.Skip()
			}
		}
	}
	v.Choices = choices
	return sc.Finish()
}

// setStr stores a decoded string unless it was null, which (as in encoding/json) leaves the
// field as it was.
func setStr(dst *[]byte, b []byte) {
	if b != nil {
		*dst = b
	}
}

// setInt reads an integer into dst (and true into present, if given) unless it is null.
func setInt(dst *int, present *bool, sc *jsonwire.Scanner, field string) {
	if n, ok := sc.Integer(field); ok {
		*dst = n
		if present != nil {
			*present = true
		}
	}
}

func parseChoice(sc *jsonwire.Scanner, c *Choice) {
	if !sc.Object("choices[]") {
		return
	}
	for key := range sc.Members() {
		switch string(key) {
		case "index":
			setInt(&c.Index, &c.HasIndex, sc, "choices[].index")
		case "finish_reason":
			setStr(&c.FinishReason, sc.Str("choices[].finish_reason"))
		case "delta":
			if !sc.Object("choices[].delta") {
				continue
			}
			for key := range sc.Members() {
				switch string(key) {
				case "content":
					setStr(&c.Content, sc.Str("delta.content"))
				case "reasoning_content":
					setStr(&c.ReasoningContent, sc.Str("delta.reasoning_content"))
				case "reasoning":
					setStr(&c.Reasoning, sc.Str("delta.reasoning"))
				case "tool_calls":
					c.ToolCalls = c.ToolCalls[:0]
					if !sc.Array("delta.tool_calls") {
						continue
					}
					for first := true; sc.Element(&first); {
						c.ToolCalls = append(c.ToolCalls, ToolCall{})
						parseToolCall(sc, &c.ToolCalls[len(c.ToolCalls)-1])
					}
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

func parseToolCall(sc *jsonwire.Scanner, tc *ToolCall) {
	if !sc.Object("tool_calls[]") {
		return
	}
	for key := range sc.Members() {
		switch string(key) {
		case "index":
			setInt(&tc.Index, &tc.HasIndex, sc, "tool_calls[].index")
		case "id":
			setStr(&tc.ID, sc.Str("tool_calls[].id"))
		case "type":
			setStr(&tc.Type, sc.Str("tool_calls[].type"))
		case "function":
			if tc.HasFunction = sc.Object("tool_calls[].function"); !tc.HasFunction {
				continue
			}
			for key := range sc.Members() {
				switch string(key) {
				case "name":
					setStr(&tc.Name, sc.Str("function.name"))
				case "arguments":
					setStr(&tc.Args, sc.Str("function.arguments"))
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}
