// Package protocol holds what every wire dialect shares: the shared rules and RuleSpec,
// violations, the normalized model events a provider stream decodes into, and the Dialect and
// Checker contracts the load generator drives. Each dialect is one subpackage holding its
// frames, encoder, decoder, rules and checker.
package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Violation is one broken rule on one stream.
type Violation struct {
	Rule   Rule   `json:"rule"`
	Detail string `json:"detail"`
}

// Session is everything a dialect needs to open one stream and judge it.
type Session struct {
	// ID is unique per session within a run; it is sent to the mock in the directive.
	ID string
	// Target is the deployment as the mix names it: a slug, workflow id, agent id or model route.
	Target string
	// Input is the user message, directive included.
	Input string
	// Expected is the ground truth for the scripted scenario.
	Expected scenarios.Expected
	// Aborted, set before Finish: the client closed the stream on purpose (abort or stop).
	Aborted bool
	// Turn is the model turn of this request and checker for MultiTurn clients; 0 elsewhere.
	Turn int
	// NoGroundTruth judges structure only: the target's content is not the script's.
	NoGroundTruth bool
	// Endpoint (with NoGroundTruth): an endpoint workload's messages, without directive or tools.
	Endpoint *EndpointRequest
}

// EndpointRequest is one request of an endpoint workload (Session.Endpoint).
type EndpointRequest struct {
	// Messages are the conversation sent ("system", "user", "assistant" roles).
	Messages []Message
	// MaxTokens is the most output tokens asked for; 0: not sent (the wire's default).
	MaxTokens int
	// MaxTokensField, MinTokens and IgnoreEOS are ModelRequest's.
	MaxTokensField string
	MinTokens      int
	IgnoreEOS      bool
	// Conversation: a replayed conversation's turn, whose answer the checker keeps (AnswerKeeper).
	Conversation bool
}

// AnswerKeeper is implemented by the provider wires' checkers: Answer is the decoded answer
// text of a conversation turn (EndpointRequest.Conversation), "" otherwise.
type AnswerKeeper interface {
	Answer() string
}

// OutputKeeper is implemented by the provider wires' checkers: without ground truth,
// OutputText is the thinking and answer text so far, for a tokenizer to count when the server
// sent no usage; nil with ground truth. kept is the first MaxOutputText bytes, valid until the
// next Observe; total is every byte, so a count over kept can be scaled.
type OutputKeeper interface {
	OutputText() (kept []byte, total int64)
}

// MaxOutputText bounds the text kept for OutputKeeper, MaxAnswerText for AnswerKeeper, so a
// session holds a bounded sample whatever a target sends.
const (
	MaxOutputText = 16 << 10
	MaxAnswerText = 1 << 20
)

// ScriptedError reports whether the script fails the run at the provider (an execution timeout
// included), so the stream ends in the dialect's error terminal; never without ground truth.
// An error terminal the script does not call for is the session's in_band_error outcome
// (Observation.Error), not a violation: the checker judges the stream as a partial one.
func (s *Session) ScriptedError() bool {
	return !s.NoGroundTruth && s.Expected.ProviderError != ""
}

// FrameKind classifies an observed frame for the load generator's metrics.
type FrameKind uint8

// Frame kinds.
const (
	FrameOther     FrameKind = iota // anything not listed below (timing, lifecycle, comments)
	FrameAnswer                     // answer text chunk (counts for time to first chunk)
	FrameThinking                   // thinking / reasoning text
	FrameReset                      // chunk_reset
	FrameToolStart                  // a tool started
	FrameToolEnd                    // a tool settled
	FrameTerminal                   // the dialect's terminal event (final, error, done, stopped, execution:*)
	FrameDone                       // the [DONE] end marker
)

// MaxUsageTokens is the largest output token count a usage report may carry (2^40): beyond
// it, or below 0, it breaks the wire's usage rule, so a hostile report cannot overflow totals.
const MaxUsageTokens = 1 << 40

// Observation is what a checker learned from one frame.
type Observation struct {
	Kind FrameKind
	// TextBytes is the bytes of answer or thinking text the frame carried.
	TextBytes int
	// Tokens counts the scripted output tokens beginning in the frame's text (ground truth only).
	Tokens int
	// UsageTokens is a usage report's output token count; 0 elsewhere or outside 0…MaxUsageTokens.
	UsageTokens int
	// Error is an in-band error terminal's message ("error" if none), scripted or not: not judged.
	Error string
}

// Checker judges one stream against the session's ground truth. Not safe for concurrent use:
// one checker per stream.
type Checker interface {
	// Observe consumes one decoded SSE event (comments are not passed) and classifies it.
	Observe(ev *sse.Event) Observation
	// Finish, called once at the end, returns every violation; streamErr is what cut the stream
	// (nil: clean EOF). A cut is an outcome, not a violation: cut, aborted or unscripted-error
	// streams owe no terminal or scripted content.
	Finish(streamErr error) []Violation
}

// MultiTurn is implemented by clients playing the tool loop, one request per model turn: turns
// 0..Turns(s)-1 run in order, s.Turn set before NewRequest and NewChecker; a failed one ends it.
type MultiTurn interface {
	// Turns is how many requests session s takes.
	Turns(s *Session) int
}

// SettledAnswer is implemented by clients that may be sent the answer only once settled, in
// one chunk (a sim-chat legacy client, a PII-redacted canvas), so the load generator knows
// when their first chunk is due.
type SettledAnswer interface {
	// AnswerSettled tells whether this client gets the answer settled, not streamed.
	AnswerSettled() bool
}

// ErrTruncated is the error Checker.Finish is given when the stream ended cleanly without the
// dialect's terminal. Like any error it means "judge only what arrived"; a checker that can
// name why the terminal is missing may still say so.
var ErrTruncated = errors.New("the stream ended without its terminal")

// StructureOnly is implemented by clients with a noGroundTruth option: when it reports true
// their sessions are judged as under --no-ground-truth.
type StructureOnly interface {
	StructureOnly() bool
}

// ErrorChecker is implemented by clients whose target may answer with an HTTP error before
// any stream (the provider wires); the load generator calls it for a non-200 response.
type ErrorChecker interface {
	// CheckError judges a non-200 response's error JSON (body: its first 64 KiB) against the script.
	CheckError(status int, h http.Header, body []byte, s *Session) []Violation
}

// ModelEventKind is the kind of a normalized provider stream event.
type ModelEventKind uint8

// Normalized provider events, the same for every provider wire.
const (
	ModelThinking  ModelEventKind = iota + 1 // Text is a thinking piece
	ModelText                                // Text is an answer/preamble piece
	ModelToolStart                           // a tool call began: ToolIndex, ToolID, ToolName
	ModelToolArgs                            // Text is a piece of ToolIndex's JSON arguments
	ModelTurnEnd                             // the turn ended: StopReason, Usage
	ModelError                               // the provider sent an error mid-stream: Text is the message
)

// StopReason is how a model turn ended.
type StopReason string

// Normalized stop reasons.
const (
	StopEndTurn  StopReason = "end_turn"
	StopToolUse  StopReason = "tool_use"
	StopMaxToken StopReason = "max_tokens"
)

// Usage is token usage for a turn.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// ModelEvent is one normalized event decoded from a provider stream.
type ModelEvent struct {
	Kind       ModelEventKind
	Text       string
	ToolIndex  int
	ToolID     string
	ToolName   string
	StopReason StopReason
	Usage      Usage
}

// Message is one entry of a model conversation, provider-neutral.
type Message struct {
	Role string // "system", "user", "assistant" or "tool"
	// Text is the user text, the assistant's text, or the tool result.
	Text string
	// ToolCalls are the assistant's tool calls.
	ToolCalls []ToolCall
	// ToolCallID and IsError describe a tool result message.
	ToolCallID string
	IsError    bool
}

// ToolCall is a completed tool call of an assistant message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON object text
}

// ModelRequest is a provider-neutral streaming request.
type ModelRequest struct {
	Model    string
	Messages []Message
	// Tools are the tool names offered to the model.
	Tools []string
	// Thinking asks for thinking/reasoning output where the wire supports it.
	Thinking bool
	// MaxTokens is the most output tokens asked for; 0: the wire's default (anthropic's 4096).
	MaxTokens int
	// MaxTokensField is the OpenAI wire's field for MaxTokens ("": max_tokens).
	MaxTokensField string
	// MinTokens (if > 0) and IgnoreEOS are vLLM's: opt-in, OpenAI wire only (OpenAI rejects them).
	MinTokens int
	IgnoreEOS bool
	// Header carries extra request headers (the X-Streambench-* ones are forwarded).
	Header http.Header
	// Timeout, when non-zero, bounds the whole provider call.
	Timeout time.Duration
}

// The OpenAI wire's fields for ModelRequest.MaxTokens: every server's max_tokens, the reasoning
// models' max_completion_tokens, or both (a gateway in front of servers of either kind).
const (
	MaxTokensField           = "max_tokens"
	MaxCompletionTokensField = "max_completion_tokens"
	BothMaxTokensFields      = "both"
)

// ProviderWire is a provider-facing wire format: the runtime's requests and ModelEvent decoder.
type ProviderWire interface {
	// Name is the wire's name in deployment files ("openai", "anthropic").
	Name() string
	// NewRequest builds the streaming HTTP request for req against the provider at baseURL.
	NewRequest(ctx context.Context, baseURL string, req *ModelRequest) (*http.Request, error)
	// NewStream decodes a 200 response body.
	NewStream(body io.Reader) ModelStream
	// ParseError reads a non-200 provider response into a *ProviderError.
	ParseError(resp *http.Response) *ProviderError
}

// ModelStream yields normalized events from one provider response.
type ModelStream interface {
	// Next fills ev: io.EOF after ModelTurnEnd, a *ProviderError, or the decode error.
	Next(ev *ModelEvent) error
}

// ProviderError is a provider's error, from an HTTP status or a mid-stream error event.
type ProviderError struct {
	Status  int    // HTTP status; 200 for a mid-stream error event
	Type    string // e.g. "rate_limit_error", "overloaded_error", "server_error"
	Message string
}

func (e *ProviderError) Error() string {
	if e.Status != 0 && e.Status != http.StatusOK {
		return fmt.Sprintf("provider error %d %s: %s", e.Status, e.Type, e.Message)
	}
	return fmt.Sprintf("provider error %s: %s", e.Type, e.Message)
}

// PathError is a request path template with a placeholder its dialect does not fill.
type PathError struct {
	Template    string
	Placeholder string   // as written, braces included ("{agnt}"); "{" alone for an unclosed brace
	Known       []string // the dialect's placeholders, braces included
}

// Error names the template, the placeholder and the ones that exist.
func (e *PathError) Error() string {
	if e.Placeholder == "{" {
		return fmt.Sprintf("path template %q: unclosed {", e.Template)
	}
	return fmt.Sprintf("path template %q: unknown placeholder %s (known: %s)", e.Template, e.Placeholder, strings.Join(e.Known, ", "))
}

// ExpandPath fills a request path template: vars are pairs of a placeholder name (without
// braces) and its value, which is path-escaped. A placeholder not among vars, or an unclosed
// brace, is a *PathError. Templates come from users (--path, a mix profile's path), so this
// is how a dialect builds its URLs, defaults included.
func ExpandPath(tmpl string, vars ...string) (string, error) {
	var b strings.Builder
	for rest := tmpl; ; {
		before, after, open := strings.Cut(rest, "{")
		b.WriteString(before)
		if !open {
			return b.String(), nil
		}
		name, after, closed := strings.Cut(after, "}")
		i := 0
		for i < len(vars)-1 && vars[i] != name {
			i += 2
		}
		switch {
		case !closed:
			return "", &PathError{Template: tmpl, Placeholder: "{", Known: knownPlaceholders(vars)}
		case i >= len(vars)-1:
			return "", &PathError{Template: tmpl, Placeholder: "{" + name + "}", Known: knownPlaceholders(vars)}
		}
		b.WriteString(url.PathEscape(vars[i+1]))
		rest = after
	}
}

func knownPlaceholders(vars []string) []string {
	var out []string
	for i := 0; i < len(vars); i += 2 {
		out = append(out, "{"+vars[i]+"}")
	}
	return out
}

// NewJSONPost builds POST baseURL + tmpl expanded with vars (ExpandPath) with a JSON body.
func NewJSONPost(ctx context.Context, baseURL, tmpl string, body []byte, vars ...string) (*http.Request, error) {
	path, err := ExpandPath(tmpl, vars...)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, JoinURL(baseURL, path), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// NewRunPost is NewJSONPost of body to tmpl for the run whose id resp's header idHeader carries
// ({targetVar}: s.Target, {idVar}: that id); errors start "what session ID".
func NewRunPost(ctx context.Context, what string, s *Session, resp *http.Response, idHeader, baseURL, tmpl string, body []byte, targetVar, idVar string) (*http.Request, error) {
	id := resp.Header.Get(idHeader)
	if id == "" {
		return nil, fmt.Errorf("%s session %s: the stream response has no %s header", what, s.ID, idHeader)
	}
	req, err := NewJSONPost(ctx, baseURL, tmpl, body, targetVar, s.Target, idVar, id)
	if err != nil {
		return nil, fmt.Errorf("%s session %s: %w", what, s.ID, err)
	}
	return req, nil
}

// NewStreamPost is NewJSONPost of body (JSON-encoded unless []byte) asking for an event stream;
// errors name the dialect and the session.
func NewStreamPost(ctx context.Context, dialect string, s *Session, baseURL, tmpl string, body any, vars ...string) (*http.Request, error) {
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("%s: encode request for session %s: %w", dialect, s.ID, err)
		}
	}
	req, err := NewJSONPost(ctx, baseURL, tmpl, b, vars...)
	if err != nil {
		return nil, fmt.Errorf("%s: request for session %s: %w", dialect, s.ID, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// JoinURL joins a base URL (scheme://host[:port][/prefix]) and an expanded path.
func JoinURL(baseURL, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return strings.TrimSuffix(baseURL, "/") + path
}
