package anthropic

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Event is one Messages stream event's JSON as the wire's two readers need it: the runtime's
// stream (NewStream) and the anthropic-messages dialect's checker. Has* flags tell a member
// that was absent or null (or not an object) from an empty one. Byte slices alias the event
// or the scanner's buffer and are valid until the next event; an Event is reused by
// ParseEvent. A nil slice is an absent or null member.
type Event struct {
	Type         []byte
	HasIndex     bool
	Index        int
	HasMessage   bool  // "message" is an object (message_start)
	MessageUsage Usage // message.usage
	HasBlock     bool  // "content_block" is an object
	Block        Block
	HasDelta     bool // "delta" is an object
	Delta        Delta
	Usage        Usage // the event's own usage (message_delta)
	HasError     bool  // "error" is an object
	ErrorType    []byte
	ErrorMessage []byte
}

// Usage is a usage object; its counts are set only when they were integers.
type Usage struct {
	Has                       bool // the object was there
	HasInput, HasOutput       bool
	InputTokens, OutputTokens int
}

// Block is a content_block.
type Block struct {
	Type, ID, Name, Text, Thinking []byte
}

// Delta is an event's delta: a content block's (text, thinking, partial_json, signature) or
// the message's (stop_reason).
type Delta struct {
	Type, Text, Thinking, PartialJSON, Signature, StopReason []byte
}

// ParseEvent fills v from one event's JSON: only the fields above are decoded, everything
// else is validated and skipped. A member given twice keeps its last non-null value, as
// encoding/json does.
func ParseEvent(sc *jsonwire.Scanner, data []byte, v *Event) error {
	sc.Reset(data)
	*v = Event{}
	if sc.Object("event") {
		for first := true; ; {
			key, ok := sc.Member(&first)
			if !ok {
				break
			}
			switch string(key) {
			case "type":
				setStr(&v.Type, sc.Str("type"))
			case "index":
				v.Index, v.HasIndex = sc.Integer("index")
			case "message":
				v.HasMessage = sc.Object("message")
				for first := v.HasMessage; v.HasMessage; {
					key, ok := sc.Member(&first)
					if !ok {
						break
					}
					if string(key) == "usage" {
						parseUsage(sc, "message.usage", &v.MessageUsage)
					} else {
						sc.Skip()
					}
				}
			case "content_block":
				v.HasBlock = sc.Object("content_block")
				for first := v.HasBlock; v.HasBlock; {
					key, ok := sc.Member(&first)
					if !ok {
						break
					}
					switch string(key) {
					case "type":
						setStr(&v.Block.Type, sc.Str("content_block.type"))
					case "id":
						setStr(&v.Block.ID, sc.Str("content_block.id"))
					case "name":
						setStr(&v.Block.Name, sc.Str("content_block.name"))
					case "text":
						setStr(&v.Block.Text, sc.Str("content_block.text"))
					case "thinking":
						setStr(&v.Block.Thinking, sc.Str("content_block.thinking"))
					default:
						sc.Skip()
					}
				}
			case "delta":
				v.HasDelta = sc.Object("delta")
				for first := v.HasDelta; v.HasDelta; {
					key, ok := sc.Member(&first)
					if !ok {
						break
					}
					switch string(key) {
					case "type":
						setStr(&v.Delta.Type, sc.Str("delta.type"))
					case "text":
						setStr(&v.Delta.Text, sc.Str("delta.text"))
					case "thinking":
						setStr(&v.Delta.Thinking, sc.Str("delta.thinking"))
					case "partial_json":
						setStr(&v.Delta.PartialJSON, sc.Str("delta.partial_json"))
					case "signature":
						setStr(&v.Delta.Signature, sc.Str("delta.signature"))
					case "stop_reason":
						setStr(&v.Delta.StopReason, sc.Str("delta.stop_reason"))
					default:
						sc.Skip()
					}
				}
			case "usage":
				parseUsage(sc, "usage", &v.Usage)
			case "error":
				v.HasError = sc.Object("error")
				for first := v.HasError; v.HasError; {
					key, ok := sc.Member(&first)
					if !ok {
						break
					}
					switch string(key) {
					case "type":
						setStr(&v.ErrorType, sc.Str("error.type"))
					case "message":
						setStr(&v.ErrorMessage, sc.Str("error.message"))
					default:
						sc.Skip()
					}
				}
			default:
				sc.Skip()
			}
		}
	}
	return sc.Finish()
}

// parseUsage reads a usage object; absent or null counts stay unset.
func parseUsage(sc *jsonwire.Scanner, field string, u *Usage) {
	*u = Usage{Has: sc.Object(field)}
	for first := u.Has; u.Has; {
		key, ok := sc.Member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "input_tokens":
			u.InputTokens, u.HasInput = sc.Integer(field + ".input_tokens")
		case "output_tokens":
			u.OutputTokens, u.HasOutput = sc.Integer(field + ".output_tokens")
		default:
			sc.Skip()
		}
	}
}

// setStr stores a decoded string unless it was null, which (as in encoding/json) leaves the
// field as it was.
func setStr(dst *[]byte, b []byte) {
	if b != nil {
		*dst = b
	}
}
