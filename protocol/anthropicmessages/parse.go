package anthropicmessages

import (
	"encoding/json"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// eventView is what the checker reads from one event's JSON. Like the runtime's decoder
// (protocol/anthropic) it decodes only what it judges, but it also keeps what the decoder
// tolerates: the message of message_start, a signature, a usage's output count. Byte slices
// alias the event or the scanner's buffer and are valid until the next event; the view is
// reused. A nil slice is an absent or null member.
type eventView struct {
	typ        []byte
	hasIndex   bool
	index      int
	hasMessage bool
	hasBlock   bool
	block      blockView
	hasDelta   bool
	delta      deltaView
	hasOutput  bool // usage.output_tokens
	output     int
	hasError   bool
	errMessage []byte
}

type blockView struct {
	typ, id, name, text, thinking []byte
}

type deltaView struct {
	typ, text, thinking, partialJSON, signature, stopReason []byte
}

func parseEvent(sc *jsonwire.Scanner, data []byte, v *eventView) error {
	sc.Reset(data)
	*v = eventView{}
	if !sc.Object("event") {
		return sc.Finish()
	}
	for first := true; ; {
		key, ok := sc.Member(&first)
		if !ok {
			break
		}
		switch string(key) {
		case "type":
			v.typ = sc.Str("type")
		case "index":
			v.index, v.hasIndex = sc.Integer("index")
		case "message":
			v.hasMessage = sc.SkipObject("message")
		case "content_block":
			if v.hasBlock = sc.Object("content_block"); !v.hasBlock {
				continue
			}
			for first := true; ; {
				key, ok := sc.Member(&first)
				if !ok {
					break
				}
				switch string(key) {
				case "type":
					v.block.typ = sc.Str("content_block.type")
				case "id":
					v.block.id = sc.Str("content_block.id")
				case "name":
					v.block.name = sc.Str("content_block.name")
				case "text":
					v.block.text = sc.Str("content_block.text")
				case "thinking":
					v.block.thinking = sc.Str("content_block.thinking")
				default:
					sc.Skip()
				}
			}
		case "delta":
			if v.hasDelta = sc.Object("delta"); !v.hasDelta {
				continue
			}
			for first := true; ; {
				key, ok := sc.Member(&first)
				if !ok {
					break
				}
				switch string(key) {
				case "type":
					v.delta.typ = sc.Str("delta.type")
				case "text":
					v.delta.text = sc.Str("delta.text")
				case "thinking":
					v.delta.thinking = sc.Str("delta.thinking")
				case "partial_json":
					v.delta.partialJSON = sc.Str("delta.partial_json")
				case "signature":
					v.delta.signature = sc.Str("delta.signature")
				case "stop_reason":
					v.delta.stopReason = sc.Str("delta.stop_reason")
				default:
					sc.Skip()
				}
			}
		case "usage":
			sc.IntegerIn("usage", "output_tokens", "usage.output_tokens", &v.output, &v.hasOutput)
		case "error":
			v.hasError = sc.StrIn("error", "message", "error.message", &v.errMessage)
		default:
			sc.Skip()
		}
	}
	return sc.Finish()
}

// errorMessage reads the API's error JSON ({"type":"error","error":{"type":…,"message":…}})
// from a non-200 body; the rare path, so encoding/json.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    *string `json:"type"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error == nil || e.Error.Type == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
