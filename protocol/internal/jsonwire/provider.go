package jsonwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// MarshalNoHTML encodes v as JSON without HTML escaping and without a trailing newline, as
// the provider SDKs send request bodies, so a recorded body reads the same as theirs.
func MarshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// NewRequest builds a provider wire's streaming POST of body to baseURL+path with the headers
// kv (name, value pairs), then header's over them (forwarded ones, a real key).
func NewRequest(ctx context.Context, wire, baseURL, path string, body any, header http.Header, kv ...string) (*http.Request, error) {
	payload, err := MarshalNoHTML(body)
	var hr *http.Request
	if err == nil {
		hr, err = protocol.NewJSONPost(ctx, baseURL, path, payload)
	}
	if err != nil {
		return nil, fmt.Errorf("%s request: %w", wire, err)
	}
	hr.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(kv); i += 2 {
		hr.Header.Set(kv[i], kv[i+1])
	}
	for k, vs := range header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	return hr, nil
}

// WriteError answers with status and body, an API's error JSON.
func WriteError(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// ContentText returns a content's text: a string, null, or textTypes parts joined.
func ContentText(content json.RawMessage, textTypes ...string) (string, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	switch content[0] {
	case '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return "", fmt.Errorf("invalid string: %w", err)
		}
		return s, nil
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(content, &parts); err != nil {
			return "", fmt.Errorf("expected string or array of parts: %w", err)
		}
		var b strings.Builder
		for _, p := range parts {
			for _, t := range textTypes {
				if p.Type == t {
					b.WriteString(p.Text)
				}
			}
		}
		return b.String(), nil
	}
	return "", errors.New("expected string or array of parts")
}

// ChatRequest is what the mock provider reads of a request on the openai and anthropic wires;
// their Request doc says how each wire fills it.
type ChatRequest struct {
	Model  string
	Stream bool
	// IncludeUsage: the stream ends with a usage report.
	IncludeUsage bool
	// LastUserText is the text of the last user message with text, where the directive is looked for.
	LastUserText string
	// AssistantTurns counts the assistant messages present: the index of the turn to play.
	AssistantTurns int
	// Thinking: the request asks for reasoning.
	Thinking bool
	// MaxTokens is the output length asked for; 0 when none was sent.
	MaxTokens int
}

// StreamMeta identifies one response of a provider wire's writer.
type StreamMeta struct {
	ID      string
	Model   string
	Created int64 // Unix seconds (unused by the anthropic wire)
	// InputTokens is the prompt size reported in usage; 0: the turn's InputTokens.
	InputTokens int
}

// Input is the prompt size reported for turn.
func (m *StreamMeta) Input(turn *scenarios.ScriptTurn) int {
	if m.InputTokens == 0 {
		return turn.InputTokens
	}
	return m.InputTokens
}

// TurnText is a turn's thinking and answer text, each steps' pieces joined.
func TurnText(turn *scenarios.ScriptTurn) (thinking, text []byte) {
	for i := range turn.Steps {
		switch turn.Steps[i].Kind {
		case scenarios.StepThinking:
			thinking = append(thinking, turn.Steps[i].Text...)
		case scenarios.StepText:
			text = append(text, turn.Steps[i].Text...)
		}
	}
	return thinking, text
}

// Sink writes a dialect writer's frames, each built in Buf (reused) and written in one Write.
// Not safe for concurrent use.
type Sink struct {
	w    io.Writer
	name string // the dialect, in errors
	Buf  []byte
}

// NewSink returns the sink of dialect name's writer onto w.
func NewSink(w io.Writer, name string) Sink { return Sink{w: w, name: name, Buf: make([]byte, 0, 384)} }

// Write writes b, one frame, and keeps it as Buf.
func (s *Sink) Write(b []byte) error {
	s.Buf = b
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("%s: write frame: %w", s.name, err)
	}
	return nil
}

// Raw writes p as one frame's data, unchecked.
func (s *Sink) Raw(p []byte) error { return s.Write(sse.AppendEvent(s.Buf[:0], &sse.Event{Data: p})) }

// Frames builds a wire writer's SSE frames in reused buffers: Frame appends JSON to Out, Flush
// writes and empties Out. Not safe for concurrent use.
type Frames struct {
	w     io.Writer
	wire  string
	JSON  []byte // the frame's JSON under construction
	Out   []byte // the SSE bytes to write
	event sse.Event
}

// NewFrames returns the frames of wire's writer onto w.
func NewFrames(w io.Writer, wire string) Frames {
	return Frames{w: w, wire: wire, JSON: make([]byte, 0, 512), Out: make([]byte, 0, 1024)}
}

// Frame appends JSON to Out as an SSE event named name ("": a data-only frame).
func (f *Frames) Frame(name string) {
	f.event.Type, f.event.Data = name, f.JSON
	f.Out = sse.AppendEvent(f.Out, &f.event)
}

// Flush writes Out in one Write and empties it; what names the frames in an error.
func (f *Frames) Flush(what string) error {
	_, err := f.w.Write(f.Out)
	f.Out = f.Out[:0]
	if err != nil {
		return fmt.Errorf("%s stream: write %s: %w", f.wire, what, err)
	}
	return nil
}

// Ping writes an SSE comment, which keeps intermediaries from timing out an idle stream.
func (f *Frames) Ping() error {
	f.Out = append(f.Out[:0], ": ping\n\n"...)
	return f.Flush("ping")
}

const maxErrorBody = 64 << 10

// ReadProviderError reads a non-2xx response into a ProviderError: its {"error":{"type",
// "message"}}, else the trimmed body (or status text) typed by status: byStatus's name, else
// serverType at 500 and above, else invalid_request_error.
func ReadProviderError(resp *http.Response, byStatus map[int]string, serverType string) *protocol.ProviderError {
	perr := &protocol.ProviderError{Status: resp.StatusCode, Type: "invalid_request_error"}
	if t, ok := byStatus[resp.StatusCode]; ok {
		perr.Type = t
	} else if resp.StatusCode >= 500 {
		perr.Type = serverType
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var parsed struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	switch {
	case json.Unmarshal(body, &parsed) == nil && parsed.Error != nil:
		perr.Message = parsed.Error.Message
		if parsed.Error.Type != "" {
			perr.Type = parsed.Error.Type
		}
	case len(bytes.TrimSpace(body)) > 0:
		perr.Message = string(bytes.TrimSpace(body))
	case err != nil:
		perr.Message = fmt.Sprintf("%s (reading body: %v)", http.StatusText(resp.StatusCode), err)
	default:
		perr.Message = http.StatusText(resp.StatusCode)
	}
	return perr
}

// DescribeError turns an encoding/json error into a message naming the field (or a syntax
// error's byte offset) under where; type errors say it all, others stay wrapped.
func DescribeError(where string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("%s: %s: expected %s, got JSON %s", where, typeErr.Field, typeErr.Type, typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("%s: invalid JSON at byte %d: %w", where, syntaxErr.Offset, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Excerpt quotes the start of a frame for an error message, bounded for a huge or binary one.
func Excerpt(data []byte) string {
	const max = 80
	if len(data) > max {
		return fmt.Sprintf("%q…", data[:max])
	}
	return fmt.Sprintf("%q", data)
}

// CheckUTF8 names the first invalid UTF-8 byte (encoding/json would make it U+FFFD silently).
func CheckUTF8(where string, b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Errorf("%s: not valid UTF-8 at byte %d", where, i)
		}
		i += size
	}
	return fmt.Errorf("%s: not valid UTF-8", where)
}

// DecodeRequest decodes a request body into v; an empty, non-UTF-8 or malformed one is an error.
func DecodeRequest(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("request body: empty, want a JSON object")
	}
	if err := CheckUTF8("request body", body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return DescribeError("request body", err)
	}
	return nil
}

// Stream is the reading half every provider wire's ModelStream shares: the SSE decoder, a
// scanner, the queue of decoded events and N, the SSE events read (for error messages).
type Stream struct {
	Queue EventQueue
	Dec   *sse.Decoder
	Ev    sse.Event
	Scan  Scanner
	N     int
}

// Read reads the next SSE event's trimmed data: io.EOF at the end, else a wrapped decode error.
func (s *Stream) Read(wire, unit string) ([]byte, error) {
	if err := s.Dec.Next(&s.Ev); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%s stream: after %d %s: %w", wire, s.N, unit, err)
	}
	s.N++
	return bytes.TrimSpace(s.Ev.Data), nil
}

// EventQueue hands out one by one the model events a wire decodes a frame at a time: a stream's
// Next is q.Next(ev, s.readFrame), readFrame Pushing a frame's events and Finishing the turn
// (then Next returns io.EOF). A read error comes after the events before it, then sticks.
type EventQueue struct {
	pending []protocol.ModelEvent
	next    int
	done    bool
	err     error
}

// Next sets *ev to the next event, calling read for another frame while none is queued.
func (q *EventQueue) Next(ev *protocol.ModelEvent, read func() error) error {
	for {
		if q.next < len(q.pending) {
			*ev = q.pending[q.next]
			q.next++
			return nil
		}
		if q.err != nil {
			return q.err
		}
		if q.done {
			q.err = io.EOF
			return q.err
		}
		q.pending, q.next = q.pending[:0], 0
		if err := read(); err != nil {
			q.err = err
		}
	}
}

// Push queues ev.
func (q *EventQueue) Push(ev protocol.ModelEvent) { q.pending = append(q.pending, ev) }

// Finish marks the turn complete: Next returns io.EOF once the queued events are out.
func (q *EventQueue) Finish() { q.done = true }

// End queues the turn's ModelTurnEnd and finishes the turn.
func (q *EventQueue) End(stop protocol.StopReason, usage protocol.Usage) {
	q.Push(protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: stop, Usage: usage})
	q.Finish()
}

// PushText queues a text event of kind unless text is empty.
func (q *EventQueue) PushText(kind protocol.ModelEventKind, text []byte) {
	if len(text) > 0 {
		q.Push(protocol.ModelEvent{Kind: kind, Text: string(text)})
	}
}
