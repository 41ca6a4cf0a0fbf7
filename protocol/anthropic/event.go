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
		for key := range sc.Members() {
			switch string(key) {
			case "type":
				setStr(&v.Type, sc.Str("type"))
			case "index":
				v.Index, v.HasIndex = sc.Integer("index")
			case "message":
				v.HasMessage = parseMessage(sc, &v.MessageUsage)
			case "content_block":
				v.HasBlock = parseBlock(sc, &v.Block)
			case "delta":
				v.HasDelta = parseDelta(sc, &v.Delta)
			case "usage":
				parseUsage(sc, "usage", &v.Usage)
			case "error":
				v.HasError = parseError(sc, v)
			default:
				sc.Skip()
			}
		}
	}
	return sc.Finish()
}

// parseMessage reads message_start's message, its usage alone (false: not an object).
func parseMessage(sc *jsonwire.Scanner, u *Usage) bool {
	if !sc.Object("message") {
		return false
	}
	for key := range sc.Members() {
		if string(key) == "usage" {
			parseUsage(sc, "message.usage", u)
		} else {
			sc.Skip()
		}
	}
	return true
}

// parseBlock reads a content_block (false: not an object).
func parseBlock(sc *jsonwire.Scanner, b *Block) bool {
	if !sc.Object("content_block") {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "type":
			setStr(&b.Type, sc.Str("content_block.type"))
		case "id":
			setStr(&b.ID, sc.Str("content_block.id"))
		case "name":
			setStr(&b.Name, sc.Str("content_block.name"))
		case "text":
			setStr(&b.Text, sc.Str("content_block.text"))
		case "thinking":
			setStr(&b.Thinking, sc.Str("content_block.thinking"))
		default:
			sc.Skip()
		}
	}
	return true
}

// parseDelta reads a delta (false: not an object).
func parseDelta(sc *jsonwire.Scanner, d *Delta) bool {
	if !sc.Object("delta") {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "type":
			setStr(&d.Type, sc.Str("delta.type"))
		case "text":
			setStr(&d.Text, sc.Str("delta.text"))
		case "thinking":
			setStr(&d.Thinking, sc.Str("delta.thinking"))
		case "partial_json":
			setStr(&d.PartialJSON, sc.Str("delta.partial_json"))
		case "signature":
			setStr(&d.Signature, sc.Str("delta.signature"))
		case "stop_reason":
			setStr(&d.StopReason, sc.Str("delta.stop_reason"))
		default:
			sc.Skip()
		}
	}
	return true
}

// parseError reads an error event's error object into v (false: not an object).
func parseError(sc *jsonwire.Scanner, v *Event) bool {
	if !sc.Object("error") {
		return false
	}
	for key := range sc.Members() {
		switch string(key) {
		case "type":
			setStr(&v.ErrorType, sc.Str("error.type"))
		case "message":
			setStr(&v.ErrorMessage, sc.Str("error.message"))
		default:
			sc.Skip()
		}
	}
	return true
}

// parseUsage reads a usage object; absent or null counts stay unset.
func parseUsage(sc *jsonwire.Scanner, field string, u *Usage) {
	if *u = (Usage{Has: sc.Object(field)}); !u.Has {
		return
	}
	for key := range sc.Members() {
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
