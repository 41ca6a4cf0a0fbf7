package openai

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Chunk is one chat.completion.chunk as the runtime's stream and the openai-chat checker read
// it, with presence (a tool call without "index" is not index 0) and both reasoning fields in
// use (reasoning_content, reasoning). Slices alias the frame or the scanner's buffer until the
// next frame; ParseChunk reuses them, so a warm reader allocates nothing. A nil slice is an
// absent or null member.
type Chunk struct {
	Object     []byte
	HasChoices bool // "choices" is an array
	Choices    []Choice
	HasUsage   bool // "usage" is an object
	// PromptTokens and CompletionTokens are usage's counts.
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

// ParseChunk fills v from one frame's JSON, validating and skipping the rest; a null reads as
// absent, and a member given twice keeps its last non-null value, as in encoding/json.
func ParseChunk(sc *jsonwire.Scanner, data []byte, v *Chunk) error {
	sc.Reset(data)
	choices := v.Choices[:0]
	*v = Chunk{}
	if sc.Object("chunk") {
		for key := range sc.Members() {
			switch string(key) {
			case "object":
				sc.StrTo(&v.Object, "object")
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
				v.HasError = sc.StrsIn("error", errorKeys[:], errorWheres[:], &v.ErrorMessage, &v.ErrorType)
			default:
				sc.Skip()
			}
		}
	}
	v.Choices = choices
	return sc.Finish()
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
			sc.StrTo(&c.FinishReason, "choices[].finish_reason")
		case "delta":
			if !sc.Object("choices[].delta") {
				continue
			}
			for key := range sc.Members() {
				switch string(key) {
				case "content":
					sc.StrTo(&c.Content, "delta.content")
				case "reasoning_content":
					sc.StrTo(&c.ReasoningContent, "delta.reasoning_content")
				case "reasoning":
					sc.StrTo(&c.Reasoning, "delta.reasoning")
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

// The string members of an error and a tool call's function, with their names in errors.
var (
	errorKeys      = [...]string{"message", "type"}
	errorWheres    = [...]string{"error.message", "error.type"}
	functionKeys   = [...]string{"name", "arguments"}
	functionWheres = [...]string{"function.name", "function.arguments"}
)

func parseToolCall(sc *jsonwire.Scanner, tc *ToolCall) {
	if !sc.Object("tool_calls[]") {
		return
	}
	for key := range sc.Members() {
		switch string(key) {
		case "index":
			setInt(&tc.Index, &tc.HasIndex, sc, "tool_calls[].index")
		case "id":
			sc.StrTo(&tc.ID, "tool_calls[].id")
		case "type":
			sc.StrTo(&tc.Type, "tool_calls[].type")
		case "function":
			tc.HasFunction = sc.StrsIn("tool_calls[].function", functionKeys[:], functionWheres[:], &tc.Name, &tc.Args)
		default:
			sc.Skip()
		}
	}
}
