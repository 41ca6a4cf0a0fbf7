package anthropic

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Event is one Messages stream event as the runtime's stream and the anthropic-messages
// checker read it; Has* flags tell an absent, null or non-object member from an empty one.
// Slices alias the event or the scanner's buffer until the next event. A nil slice is an
// absent or null member.
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

// Delta is an event's delta: a content block's, or the message's (stop_reason).
type Delta struct {
	Type, Text, Thinking, PartialJSON, Signature, StopReason []byte
}

// ParseEvent fills v from one event's JSON, validating and skipping the rest; a member given
// twice keeps its last non-null value, as in encoding/json.
func ParseEvent(sc *jsonwire.Scanner, data []byte, v *Event) error {
	sc.Reset(data)
	*v = Event{}
	if sc.Object("event") {
		for key := range sc.Members() {
			switch string(key) {
			case "type":
				sc.StrTo(&v.Type, "type")
			case "index":
				v.Index, v.HasIndex = sc.Integer("index")
			case "message":
				v.HasMessage = parseMessage(sc, &v.MessageUsage)
			case "content_block":
				b := &v.Block
				v.HasBlock = sc.StrsIn("content_block", blockKeys[:], blockWheres[:], &b.Type, &b.ID, &b.Name, &b.Text, &b.Thinking)
			case "delta":
				d := &v.Delta
				v.HasDelta = sc.StrsIn("delta", deltaKeys[:], deltaWheres[:], &d.Type, &d.Text, &d.Thinking, &d.PartialJSON, &d.Signature, &d.StopReason)
			case "usage":
				parseUsage(sc, "usage", &v.Usage)
			case "error":
				v.HasError = sc.StrsIn("error", errorKeys[:], errorWheres[:], &v.ErrorType, &v.ErrorMessage)
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

// The string members of a content_block, a delta and an error object, with their names in errors.
var (
	blockKeys   = [...]string{"type", "id", "name", "text", "thinking"}
	blockWheres = [...]string{"content_block.type", "content_block.id", "content_block.name", "content_block.text", "content_block.thinking"}
	deltaKeys   = [...]string{"type", "text", "thinking", "partial_json", "signature", "stop_reason"}
	deltaWheres = [...]string{"delta.type", "delta.text", "delta.thinking", "delta.partial_json", "delta.signature", "delta.stop_reason"}
	errorKeys   = [...]string{"type", "message"}
	errorWheres = [...]string{"error.type", "error.message"}
)

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

// BlockKind is what a content block streams.
type BlockKind uint8

// Block kinds.
const (
	BlockOther    BlockKind = iota // redacted_thinking, server tools…: not part of the turn's text
	BlockThinking                  // thinking_delta and signature_delta
	BlockText                      // text_delta (and citations_delta)
	BlockTool                      // tool_use: input_json_delta
)

var blockTypes = [...]string{BlockThinking: "thinking", BlockText: "text", BlockTool: "tool_use"}

// String is the type of a block of kind k ("" for BlockOther).
func (k BlockKind) String() string { return blockTypes[k] }

// DeltaKind is the kind of block a delta of type typ belongs to; false for a type not known.
func DeltaKind(typ []byte) (BlockKind, bool) {
	switch string(typ) {
	case "thinking_delta", "signature_delta":
		return BlockThinking, true
	case "text_delta", "citations_delta":
		return BlockText, true
	case "input_json_delta":
		return BlockTool, true
	}
	return BlockOther, false
}

// MaxBlocks bounds block indexes so a hostile stream cannot make a reader allocate.
const MaxBlocks = 4096
