package openai

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

// refChunk is the straightforward encoding/json shape of a chunk: the reference the fast
// scanner-based parser is checked against.
type refChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// refKeys are the keys refChunk knows; encoding/json matches them case-insensitively.
var refKeys = []string{"choices", "index", "delta", "content", "reasoning_content", "tool_calls", "id", "function",
	"name", "arguments", "finish_reason", "usage", "prompt_tokens", "completion_tokens", "error", "message", "type"}

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

// referenceParse decodes a frame with encoding/json into the same view.
func referenceParse(_ *jsonwire.Scanner, data []byte, v *chunkView) error {
	if quirky(data) {
		return errQuirk
	}
	return referenceUnmarshal(nil, data, v)
}

// referenceUnmarshal is referenceParse without the quirk check.
func referenceUnmarshal(_ *jsonwire.Scanner, data []byte, v *chunkView) error {
	var c refChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	*v = chunkView{}
	if c.Error != nil {
		v.hasError, v.errMessage, v.errTyp = true, []byte(c.Error.Message), []byte(c.Error.Type)
	}
	if c.Usage != nil {
		v.hasUsage, v.usage = true, protocol.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	for _, ch := range c.Choices {
		cv := choiceView{index: ch.Index, content: []byte(ch.Delta.Content), reasoning: []byte(ch.Delta.ReasoningContent), finishReason: []byte(ch.FinishReason)}
		for _, tc := range ch.Delta.ToolCalls {
			cv.toolCalls = append(cv.toolCalls, toolCallView{index: tc.Index, id: []byte(tc.ID), name: []byte(tc.Function.Name), arguments: []byte(tc.Function.Arguments)})
		}
		v.choices = append(v.choices, cv)
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
	f.Add(writeTurn(f, smallTurn(), testMeta, true))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\u00e9\\ud800\",\"x\":[1,{}]},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"m\",\"type\":null,\"code\":5}}\n\n"))
	f.Add([]byte("data: {\"choices\":[null,{\"index\":1}],\"usage\":null}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: parseChunk})
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
	frames := writeTurn(b, turn, testMeta, true)
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
	frames := writeTurn(t, smallTurn(), testMeta, true)
	compare := func(data []byte) {
		fast := runStream(&stream{dec: sse.NewDecoder(bytes.NewReader(data)), parse: parseChunk})
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
