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

// ContentText returns the text of a message content: a string, null, or an array of parts
// whose parts of one of textTypes are joined.
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

// Frames builds a provider wire writer's SSE frames in reused buffers: JSON appended to Out by
// Frame, Out written in one Write by Flush (each writer method empties it first). Not safe for
// concurrent use.
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

// Flush writes Out in one Write; what names the frames in an error.
func (f *Frames) Flush(what string) error {
	if _, err := f.w.Write(f.Out); err != nil {
		return fmt.Errorf("%s stream: write %s: %w", f.wire, what, err)
	}
	return nil
}

// Ping writes an SSE comment, which keeps intermediaries from timing out an idle stream.
func (f *Frames) Ping() error {
	f.Out = append(f.Out[:0], ": ping\n\n"...)
	return f.Flush("ping")
}
