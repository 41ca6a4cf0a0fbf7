package mockprovider

import (
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

// wireRequest is what the server needs from a parsed request body, the same for every wire
// (MaxTokens 0: none sent; with no directive, the answer is that many tokens).
type wireRequest = openai.Request

// parsed is a chat wire's ParseRequest as the server's parse; usage: its stream always ends
// with a usage report.
func parsed(parse func([]byte) (*wireRequest, error), usage bool) func([]byte) (wireRequest, error) {
	return func(body []byte) (wireRequest, error) {
		r, err := parse(body)
		if err != nil {
			return wireRequest{}, err
		}
		r.IncludeUsage = r.IncludeUsage || usage
		return *r, nil
	}
}

// streamMeta identifies one response; every wire's StreamMeta is this type.
type streamMeta = openai.StreamMeta

// streamWriter is the wires' StreamWriters' method set; each call writes whole frames.
type streamWriter interface {
	Start() error
	Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error
	Error(message string) error
	Finish(turn *scenarios.ScriptTurn) error
	Ping() error
}

var (
	_ streamWriter = (*openai.StreamWriter)(nil)
	_ streamWriter = (*anthropic.StreamWriter)(nil)
)

// errorKind is a provider-neutral error class each wire names in its own vocabulary.
type errorKind uint8

const (
	errInvalidRequest  errorKind = iota // malformed request, unknown scenario, no selection
	errRequestTooLarge                  // body over MaxBodyBytes
	errRateLimit                        // 429: a scripted fault or a full queue
	errServer                           // 500: a scripted fault or a non-streamed mid-stream error
	errOverloaded                       // 503/529: a scripted fault
)

func faultErrorKind(status int) errorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return errRateLimit
	case status == http.StatusServiceUnavailable || status == 529:
		return errOverloaded
	case status >= 500:
		return errServer
	}
	return errInvalidRequest
}

// openaiErrTypes are the OpenAI wires' error types, by errorKind.
var openaiErrTypes = [...]string{"invalid_request_error", "invalid_request_error", "rate_limit_error", "server_error",
	"service_unavailable_error"}

// wire adapts one provider wire package to the server (which sets the Content-Type).
type wire struct {
	name          string
	idPrefix      string
	pings         bool // whether the wire sends keep-alive pings during long silences.
	parse         func(body []byte) (wireRequest, error)
	newStream     func(w http.ResponseWriter, meta streamMeta, includeUsage bool) streamWriter
	writeResponse func(w io.Writer, turn *scenarios.ScriptTurn, meta streamMeta) error
	writeError    func(w http.ResponseWriter, status int, errType, message string)
	errTypes      [errOverloaded + 1]string
	// responseID names a scripted turn's response (nil: idPrefix and the sequence number).
	responseID func(seq uint64, dir scenarios.Directive, turn int) string
}

func setStreamHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

func openaiWire() *wire {
	return &wire{
		name:     "openai",
		idPrefix: "chatcmpl-sb",
		parse:    parsed(openai.ParseRequest, false),
		newStream: func(w http.ResponseWriter, m streamMeta, includeUsage bool) streamWriter {
			return openai.NewStreamWriter(w, m, includeUsage)
		},
		writeResponse: openai.WriteResponse,
		writeError:    openai.WriteError,
		errTypes:      openaiErrTypes,
	}
}

func anthropicWire() *wire {
	return &wire{
		name:     "anthropic",
		idPrefix: "msg_sb",
		pings:    true,
		parse:    parsed(anthropic.ParseRequest, true),
		newStream: func(w http.ResponseWriter, m streamMeta, includeUsage bool) streamWriter {
			return anthropic.NewStreamWriter(w, m, includeUsage)
		},
		writeResponse: anthropic.WriteResponse,
		writeError:    anthropic.WriteError,
		errTypes:      [...]string{"invalid_request_error", "request_too_large", "rate_limit_error", "api_error", "overloaded_error"},
	}
}
