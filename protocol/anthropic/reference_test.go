package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
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

func (u *refUsage) view() usageView {
	if u == nil {
		return usageView{}
	}
	v := usageView{has: true, hasInput: u.InputTokens != nil, hasOutput: u.OutputTokens != nil}
	if v.hasInput {
		v.inputTokens = *u.InputTokens
	}
	if v.hasOutput {
		v.outputs = *u.OutputTokens
	}
	return v
}

// refKeys are the keys refEvent knows; encoding/json matches them case-insensitively.
var refKeys = []string{"type", "index", "message", "usage", "content_block", "id", "name", "text", "thinking",
	"delta", "partial_json", "stop_reason", "error", "input_tokens", "output_tokens"}

// errQuirk marks input where encoding/json's behaviour is a quirk the fast parser does not
// copy on purpose: duplicate keys and keys that match a field only case-insensitively.
var errQuirk = errors.New("encoding/json quirk")

// quirky reports whether data has duplicate keys in an object or case-folded field keys.
func quirky(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return true
				}
				top.keys[key] = true
				for _, k := range refKeys {
					if key != k && strings.EqualFold(key, k) {
						return true
					}
				}
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expectKey = true
		}
	}
}

// referenceParse decodes an event with encoding/json into the same view.
func referenceParse(_ *jsonwire.Scanner, data []byte, v *eventView) error {
	if quirky(data) {
		return errQuirk
	}
	return referenceUnmarshal(nil, data, v)
}

// referenceUnmarshal is referenceParse without the quirk check.
func referenceUnmarshal(_ *jsonwire.Scanner, data []byte, v *eventView) error {
	var e refEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	*v = eventView{typ: []byte(e.Type), usage: e.Usage.view()}
	if e.Index != nil {
		v.hasIndex, v.index = true, *e.Index
	}
	if e.Message != nil {
		v.hasMessage, v.msgUsage = true, e.Message.Usage.view()
	}
	if b := e.ContentBlock; b != nil {
		v.hasBlock = true
		v.block = blockView{typ: []byte(b.Type), id: []byte(b.ID), name: []byte(b.Name), text: []byte(b.Text), thinking: []byte(b.Thinking)}
	}
	if d := e.Delta; d != nil {
		v.hasDelta = true
		v.delta = deltaView{typ: []byte(d.Type), text: []byte(d.Text), thinking: []byte(d.Thinking), partialJSON: []byte(d.PartialJSON), stopReason: []byte(d.StopReason)}
	}
	if e.Error != nil {
		v.hasError, v.errTyp, v.errMessage = true, []byte(e.Error.Type), []byte(e.Error.Message)
	}
	return nil
}

// outcome is everything a stream produced.
type outcome struct {
	events []protocol.ModelEvent
	end    string // "eof", the provider error, or "error"
	quirk  bool
}

func runStream(st *stream) outcome {
	var o outcome
	for {
		var ev protocol.ModelEvent
		err := st.Next(&ev)
		switch {
		case err == nil:
			o.events = append(o.events, ev)
			continue
		case err == io.EOF:
			o.end = "eof"
		case errors.Is(err, errQuirk):
			o.quirk = true
		default:
			var perr *protocol.ProviderError
			if errors.As(err, &perr) {
				o.end = perr.Error()
			} else {
				o.end = "error"
			}
		}
		return o
	}
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
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: parseEvent})
		ref := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: referenceParse})
		if ref.quirk {
			return // an encoding/json quirk the fast parser does not copy
		}
		if fast.end != ref.end || len(fast.events) != len(ref.events) {
			t.Fatalf("fast parser: %d events, end %s; reference: %d events, end %s", len(fast.events), fast.end, len(ref.events), ref.end)
		}
		for i := range fast.events {
			if fast.events[i] != ref.events[i] {
				t.Fatalf("event %d: fast %+v, reference %+v", i, fast.events[i], ref.events[i])
			}
		}
	})
}

// BenchmarkDecodeTextTurnEncodingJSON is BenchmarkDecodeTextTurn with the encoding/json
// reference parser, to show what the scanner saves.
func BenchmarkDecodeTextTurnEncodingJSON(b *testing.B) {
	turn := textTurn()
	frames := writeTurn(b, turn, testMeta)
	nframes := bytes.Count(frames, []byte("\n\n"))
	r := bytes.NewReader(frames)
	var ev protocol.ModelEvent
	b.SetBytes(int64(len(frames)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frames)
		st := &stream{dec: sse.NewDecoder(r), parse: referenceUnmarshal}
		for {
			err := st.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nframes), "ns/frame")
}

// TestParserMatchesReferenceMutations is a deterministic sweep in the spirit of the fuzz
// target, run on every go test: each byte of a golden stream is deleted, and replaced by a
// few bytes that matter to JSON, and the fast parser must agree with the reference on all.
func TestParserMatchesReferenceMutations(t *testing.T) {
	t.Parallel()
	frames := writeTurn(t, smallTurn(), testMeta)
	compare := func(data []byte) {
		fast := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: parseEvent})
		// The quirk check is slow, so the reference runs without it and only a disagreement
		// is checked for quirks.
		ref := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: referenceUnmarshal})
		if fast.end == ref.end && slices.Equal(fast.events, ref.events) {
			return
		}
		if runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: referenceParse}).quirk {
			return
		}
		t.Fatalf("on %q\nfast parser: %+v, end %s\nreference:   %+v, end %s", data, fast.events, fast.end, ref.events, ref.end)
	}
	buf := make([]byte, 0, len(frames))
	for i := range frames {
		compare(append(append(buf[:0], frames[:i]...), frames[i+1:]...))
		for _, c := range []byte(`"\{},:`) {
			if frames[i] != c && i%5 == 0 {
				buf = append(buf[:0], frames...)
				buf[i] = c
				compare(buf)
			}
		}
	}
}
