package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/internal/wiretest"
	"github.com/streambench/streambench/sse"
)

// refEvent is the straightforward encoding/json shape of an event: the reference the fast
// scanner-based parser is checked against.
type refEvent struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		Usage *refUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Name     string `json:"name"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *refUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type refUsage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

func (u *refUsage) view() Usage {
	if u == nil {
		return Usage{}
	}
	v := Usage{Has: true, HasInput: u.InputTokens != nil, HasOutput: u.OutputTokens != nil}
	if v.HasInput {
		v.InputTokens = *u.InputTokens
	}
	if v.HasOutput {
		v.OutputTokens = *u.OutputTokens
	}
	return v
}

// refKeys are the keys refEvent knows; encoding/json matches them case-insensitively.
var refKeys = []string{"type", "index", "message", "usage", "content_block", "id", "name", "text", "thinking",
	"delta", "partial_json", "stop_reason", "error", "input_tokens", "output_tokens"}

// referenceUnmarshal decodes an event with encoding/json into the same view.
func referenceUnmarshal(_ *jsonwire.Scanner, data []byte, v *Event) error {
	var e refEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	*v = Event{Type: []byte(e.Type), Usage: e.Usage.view()}
	if e.Index != nil {
		v.HasIndex, v.Index = true, *e.Index
	}
	if e.Message != nil {
		v.HasMessage, v.MessageUsage = true, e.Message.Usage.view()
	}
	if b := e.ContentBlock; b != nil {
		v.HasBlock = true
		v.Block = Block{Type: []byte(b.Type), ID: []byte(b.ID), Name: []byte(b.Name), Text: []byte(b.Text), Thinking: []byte(b.Thinking)}
	}
	if d := e.Delta; d != nil {
		v.HasDelta = true
		v.Delta = Delta{Type: []byte(d.Type), Text: []byte(d.Text), Thinking: []byte(d.Thinking), PartialJSON: []byte(d.PartialJSON), StopReason: []byte(d.StopReason)}
	}
	if e.Error != nil {
		v.HasError, v.ErrorType, v.ErrorMessage = true, []byte(e.Error.Type), []byte(e.Error.Message)
	}
	return nil
}

// streamOf is this wire's stream over data with the parser p picks.
func streamOf(data []byte, p wiretest.Parser) protocol.ModelStream {
	parse := wiretest.ParserOf(p, ParseEvent, referenceUnmarshal, refKeys)
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(bytes.NewReader(data))}, parse: parse}
}

// FuzzParserMatchesReference decodes arbitrary streams with the fast parser and with the
// encoding/json reference: the events and the way the stream ends must be identical.
func FuzzParserMatchesReference(f *testing.F) {
	f.Add(writeTurn(f, smallTurn(), testMeta))
	errTurn := smallTurn()
	errTurn.ErrorAfterStep = 3
	f.Add(writeTurn(f, errTurn, testMeta))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":null,\"output_tokens\":3}}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\\u00e9\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":null}\n\n" +
		"event: message_stop\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.AssertSameOutcome(t, data, streamOf) })
}

// BenchmarkDecodeTextTurnEncodingJSON is BenchmarkDecodeTextTurn with the encoding/json
// reference parser, to show what the scanner saves.
func BenchmarkDecodeTextTurnEncodingJSON(b *testing.B) {
	wiretest.BenchDecode(b, writeTurn(b, wiretest.TextTurn(256), testMeta), func(r io.Reader) protocol.ModelStream {
		return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(r)}, parse: referenceUnmarshal}
	})
}

// TestParserMatchesReferenceMutations runs wiretest.MutationSweep over a golden stream.
func TestParserMatchesReferenceMutations(t *testing.T) {
	t.Parallel()
	wiretest.MutationSweep(t, writeTurn(t, smallTurn(), testMeta), streamOf)
}
