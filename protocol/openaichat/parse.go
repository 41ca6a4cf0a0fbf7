package openaichat

import (
	"encoding/json"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// chunkView is what the checker reads from one chat.completion.chunk. Unlike the runtime's
// decoder (protocol/openai), it keeps presence: a tool call delta without "index" and one at
// index 0 are different frames here. Byte slices alias the frame or the scanner's buffer and
// are valid until the next frame; the view and its slices are reused, so a warm checker
// decodes without allocating. A nil slice is an absent or null member.
type chunkView struct {
	object     []byte
	hasChoices bool
	choices    []choiceView
	hasUsage   bool
	completion int // usage.completion_tokens
	hasTokens  bool
	hasError   bool
	errMessage []byte
}

// choiceView is one element of "choices".
type choiceView struct {
	hasIndex         bool
	index            int
	content          []byte
	reasoningContent []byte
	reasoning        []byte // the field name vLLM and some gateways use
	finishReason     []byte
	toolCalls        []toolCallView
}

// toolCallView is one element of delta.tool_calls.
type toolCallView struct {
	hasIndex            bool
	index               int
	id, typ, name, args []byte
	hasFunction         bool
}

func parseChunk(sc *jsonwire.Scanner, data []byte, v *chunkView) error {
	sc.Reset(data)
	choices := v.choices[:0]
	*v = chunkView{}
	if sc.Object("chunk") {
		for first := true; ; {
			key, ok := sc.Member(&first)
			if !ok {
				break
			}
			switch string(key) {
			case "object":
				v.object = sc.Str("object")
			case "choices":
				if v.hasChoices = sc.Array("choices"); v.hasChoices {
					for first := true; sc.Element(&first); {
						var calls []toolCallView
						if len(choices) < cap(choices) {
							calls = choices[:len(choices)+1][len(choices)].toolCalls[:0]
						}
						choices = append(choices, choiceView{toolCalls: calls})
						parseChoice(sc, &choices[len(choices)-1])
					}
				}
			case "usage":
				v.hasUsage = sc.IntegerIn("usage", "completion_tokens", "usage.completion_tokens", &v.completion, &v.hasTokens)
			case "error":
				v.hasError = sc.StrIn("error", "message", "error.message", &v.errMessage)
			default:
				sc.Skip()
			}
		}
	}
	v.choices = choices
	return sc.Finish()
}

func parseChoice(sc *jsonwire.Scanner, c *choiceView) {
	if !sc.Object("choices[]") {
		return
	}
	for first := true; ; {
		key, ok := sc.Member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "index":
			c.index, c.hasIndex = sc.Integer("choices[].index")
		case "finish_reason":
			c.finishReason = sc.Str("choices[].finish_reason")
		case "delta":
			if !sc.Object("choices[].delta") {
				continue
			}
			for first := true; ; {
				key, ok := sc.Member(&first)
				if !ok {
					break
				}
				switch string(key) {
				case "content":
					c.content = sc.Str("delta.content")
				case "reasoning_content":
					c.reasoningContent = sc.Str("delta.reasoning_content")
				case "reasoning":
					c.reasoning = sc.Str("delta.reasoning")
				case "tool_calls":
					if !sc.Array("delta.tool_calls") {
						continue
					}
					for first := true; sc.Element(&first); {
						c.toolCalls = append(c.toolCalls, toolCallView{})
						parseToolCall(sc, &c.toolCalls[len(c.toolCalls)-1])
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

func parseToolCall(sc *jsonwire.Scanner, tc *toolCallView) {
	if !sc.Object("tool_calls[]") {
		return
	}
	for first := true; ; {
		key, ok := sc.Member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "index":
			tc.index, tc.hasIndex = sc.Integer("tool_calls[].index")
		case "id":
			tc.id = sc.Str("tool_calls[].id")
		case "type":
			tc.typ = sc.Str("tool_calls[].type")
		case "function":
			if tc.hasFunction = sc.Object("tool_calls[].function"); !tc.hasFunction {
				continue
			}
			for first := true; ; {
				key, ok := sc.Member(&first)
				if !ok {
					break
				}
				switch string(key) {
				case "name":
					tc.name = sc.Str("function.name")
				case "arguments":
					tc.args = sc.Str("function.arguments")
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

// errorMessage reads the API's error JSON ({"error":{"message":…}}) from a non-200 body; the
// rare path, so encoding/json.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Error *struct {
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
