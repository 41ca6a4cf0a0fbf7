// Package protocol holds the vocabulary every wire dialect shares: the rules several dialects
// check and the RuleSpec a dialect declares its own with, violations, the normalized model
// events a provider stream decodes into, and the Dialect and Checker contracts the load
// generator drives. Each dialect lives in its own subpackage (simchat, simcanvas, compose, and
// openaichat, anthropicmessages, openairesponses on the provider wires, for clients; openai,
// anthropic for providers) with its frames, encoder, decoder, rules and checker together; a new
// dialect is one new package.
package protocol

import (
	"context"
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
	// Target is the deployment the session talks to, as the mix names it: a slug (sim-chat),
	// workflow id (sim-canvas), agent id (compose) or model route.
	Target string
	// Input is the user message, directive included.
	Input string
	// Expected is the ground truth for the scripted scenario.
	Expected scenarios.Expected
	// Aborted is set by the client before Finish when it closed the stream on purpose (abort or
	// stop); checkers then only judge what was seen before the abort.
	Aborted bool
	// Turn is the model turn this request and checker are for, in dialects whose client plays
	// the scenario's tool loop itself (MultiTurn); 0 elsewhere.
	Turn int
	// NoGroundTruth judges structure only: the target's content is not the script's (a real
	// model behind a gateway), so no content rule applies.
	NoGroundTruth bool
	// Endpoint, when set, is the request of an inference endpoint's workload (load
	// --input-tokens, --prompts): what an application sends, these messages and at most
	// MaxTokens output tokens, with no directive, no tools and no reasoning fields. It
	// comes with NoGroundTruth.
	Endpoint *EndpointRequest
}

// EndpointRequest is one request of an endpoint workload (Session.Endpoint).
type EndpointRequest struct {
	// Messages are the conversation sent ("system", "user", "assistant" roles).
	Messages []Message
	// MaxTokens is the most output tokens asked for (max_tokens); 0: not sent (the wire's
	// default).
	MaxTokens int
	// MaxTokensField, MinTokens and IgnoreEOS are ModelRequest's (the OpenAI wire's field
	// for MaxTokens; vLLM's min_tokens and ignore_eos).
	MaxTokensField string
	MinTokens      int
	IgnoreEOS      bool
	// Conversation marks a turn of a conversation replayed turn by turn (load
	// --conversations): the checker keeps the answer's text (AnswerKeeper) for the next
	// turn's history. Other sessions keep nothing.
	Conversation bool
}

// AnswerKeeper is implemented by the checkers of the provider wires: Answer is the answer
// text a conversation turn's stream carried (EndpointRequest.Conversation; "" otherwise),
// decoded, in order, thinking and tool calls left out.
type AnswerKeeper interface {
	Answer() string
}

// OutputKeeper is implemented by the checkers of the provider wires: without ground truth
// (Session.NoGroundTruth) OutputText is the thinking and answer text the turn's stream
// carried, in order, so that a session whose server sent no usage report has its output tokens
// counted by a model tokenizer at its end, over the whole text; nil with ground truth. The
// slice is the checker's: valid until its next Observe. The text kept is bounded
// (MaxOutputText); total is how many bytes of text the stream carried, so a count over the
// kept part can be scaled to the whole.
type OutputKeeper interface {
	OutputText() (kept []byte, total int64)
}

// MaxOutputText is the most output text a checker keeps of one turn for its token count
// (OutputKeeper): a sample, whose count is scaled to the whole text. MaxAnswerText is the most
// of a conversation turn's answer kept for the next turn's history (AnswerKeeper). Whatever a
// target sends, a session holds at most this much of its text: 2,000 usage-less streams that
// never end hold 32 MiB of samples, where a whole MiB each was 2 GiB.
const (
	MaxOutputText = 16 << 10
	MaxAnswerText = 1 << 20
)

// ScriptedError reports whether the session's script fails the run at the provider
// (Expected.ProviderError, an execution timeout included), so that the stream ends in the
// dialect's error terminal. Never without ground truth: nothing is scripted then. (A scripted
// plan that ends the run in error, Expected.Plan.EndsInError, is compose's own: only its
// client answers approvals.) An error terminal the script does not call for is the session's
// outcome (in_band_error), which the load generator decides from Observation.Error; a checker
// then judges the stream as a partial one and does not restate the error as a violation.
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

// MaxUsageTokens is the largest output token count a usage report may carry (2^40, a
// thousand times any context window): a count beyond it, or below 0, is a violation of the
// wire's usage rule, never a figure, so a hostile report cannot overflow the run's totals.
const MaxUsageTokens = 1 << 40

// Observation is what a checker learned from one frame.
type Observation struct {
	Kind FrameKind
	// Bytes of answer or thinking text the frame carried.
	TextBytes int
	// Tokens is how many scripted output tokens (thinking or answer) begin in the frame's text,
	// by the script's tokenizer (scenarios.TokenCounter): a frame coalescing k tokens says k.
	// It is only meaningful against ground truth; without it the load generator uses UsageTokens.
	Tokens int
	// UsageTokens is the turn's output token count when the frame is a usage report (the
	// openai-chat usage chunk's completion_tokens, anthropic-messages message_delta's
	// usage.output_tokens); 0 on every other frame, and on a report outside 0…MaxUsageTokens,
	// which the dialect's usage rule reports instead, so no absurd count reaches a total.
	UsageTokens int
	// Error is set on the dialect's error terminal (Kind FrameTerminal): the stream ends in an
	// error the target reported in-band (sim-chat's error event, an OpenAI {"error":…} chunk,
	// Anthropic's event: error, the AI SDK's error part, compose's error terminal). It holds the
	// error's message ("error" when the frame carries none). The load generator, not the
	// checker, decides whether it was scripted: an unscripted one is the session's outcome
	// (in_band_error), so a checker never restates it as a violation.
	Error string
}

// Checker judges one stream against the session's ground truth. Not safe for concurrent use:
// one checker per stream.
type Checker interface {
	// Observe consumes one decoded SSE event (comments are not passed) and classifies it.
	Observe(ev *sse.Event) Observation
	// Finish is called once when the stream ended and returns every violation found.
	// streamErr is nil when the stream ran to its end (a clean EOF), otherwise what cut it:
	// the transport or decode error, a stall, a truncation (any non-nil error: checkers do not
	// tell them apart). A cut stream, like an aborted one or one ended by an error terminal
	// the script does not call for (Observation.Error), is judged on what arrived only: no
	// missing terminal or end marker, no scripted content or tool call owed. The cut itself is
	// the session's outcome, never a violation.
	Finish(streamErr error) []Violation
}

// MultiTurn is implemented by clients that are the agent: it plays the scenario's tool
// loop itself, one request per model turn, sending back the assistant's tool calls and the
// scripted tool results (openai-chat, anthropic-messages). The load generator runs turns
// 0..Turns(s)-1 of a session in order, setting s.Turn before each NewRequest and NewChecker,
// with a fresh Checker and one Finish per turn; a turn that fails (HTTP error, violation that
// ends the stream, abort) ends the session.
type MultiTurn interface {
	// Turns is how many requests session s takes.
	Turns(s *Session) int
}

// SettledAnswer is implemented by clients that may be sent the answer only once it is settled:
// one chunk with the final text when the run ends, instead of chunks as the model streams
// them (a sim-chat legacy client, a PII-redacted canvas). The load generator reads it to know
// when the script has such a client's first chunk due (loadgen/session/overhead.go).
type SettledAnswer interface {
	// AnswerSettled tells whether this client gets the answer settled, not streamed.
	AnswerSettled() bool
}

// ErrTruncated is the error Checker.Finish is given when the stream ended cleanly without the
// dialect's terminal (the session's truncated outcome). Like any error it means "judge only
// what arrived"; a checker that can name why the terminal is missing (sim-canvas: a reconnect
// that did not replay it) may still say so.
var ErrTruncated = errors.New("the stream ended without its terminal")

// StructureOnly is implemented by clients with a noGroundTruth option of their own (ai-sdk,
// openai-chat, anthropic-messages): when it reports true, the load generator judges their
// sessions as under --no-ground-truth (Session.NoGroundTruth), so that nothing, an error
// included, is taken for the script's.
type StructureOnly interface {
	StructureOnly() bool
}

// ErrorChecker is implemented by clients whose target may answer with an HTTP error before
// any stream (the provider wires). The load generator calls it for a non-200 response instead
// of treating the body as opaque; body is at most the first 64 KiB.
type ErrorChecker interface {
	// CheckError judges a non-200 response: its error JSON, and whether the script called for
	// an error at this turn.
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
	// MaxTokens is the most output tokens asked for (max_tokens); 0: the wire's default
	// (none on openai, 4096 on anthropic, which requires one).
	MaxTokens int
	// MaxTokensField is the OpenAI wire's field for MaxTokens: MaxTokensField* ("": max_tokens).
	// The Anthropic wire has one field, max_tokens, and ignores it.
	MaxTokensField string
	// MinTokens, when positive, is sent as min_tokens and IgnoreEOS as ignore_eos: true, the
	// sampling parameters vLLM takes to generate a fixed length (OpenAI wire only; OpenAI's
	// own API rejects them, so they are opt-in).
	MinTokens int
	IgnoreEOS bool
	// Header carries extra request headers (the X-Streambench-* ones are forwarded).
	Header http.Header
	// Timeout, when non-zero, bounds the whole provider call.
	Timeout time.Duration
}

// The OpenAI wire's fields for ModelRequest.MaxTokens. max_tokens is what every
// OpenAI-compatible server takes (vLLM, TGI, llama.cpp, Ollama, OpenAI's non-reasoning models);
// OpenAI deprecated it for max_completion_tokens, which its reasoning models require and
// vllm bench serve sends; both sends the two, for a gateway in front of servers of either kind.
const (
	MaxTokensField           = "max_tokens"
	MaxCompletionTokensField = "max_completion_tokens"
	BothMaxTokensFields      = "both"
)

// ProviderWire is a provider-facing wire format (openai, anthropic): the runtime builds requests
// with it and decodes the streamed answer into ModelEvents.
type ProviderWire interface {
	// Name is the wire's name in deployment files ("openai", "anthropic").
	Name() string
	// NewRequest builds the streaming HTTP request for req against the provider at baseURL.
	NewRequest(ctx context.Context, baseURL string, req *ModelRequest) (*http.Request, error)
	// NewStream decodes a 200 response body. A non-200 response is turned into a
	// *ProviderError by ParseError.
	NewStream(body io.Reader) ModelStream
	// ParseError reads a non-200 provider response into a *ProviderError.
	ParseError(resp *http.Response) *ProviderError
}

// ModelStream yields normalized events from one provider response.
type ModelStream interface {
	// Next fills ev with the next event. It returns io.EOF after the stream ended cleanly
	// (after the ModelTurnEnd event), a *ProviderError for an error event, or the decode error.
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
	rest := tmpl
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:open])
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return "", &PathError{Template: tmpl, Placeholder: "{", Known: knownPlaceholders(vars)}
		}
		name := rest[open+1 : open+end]
		found := false
		for i := 0; i+1 < len(vars); i += 2 {
			if vars[i] == name {
				b.WriteString(url.PathEscape(vars[i+1]))
				found = true
				break
			}
		}
		if !found {
			return "", &PathError{Template: tmpl, Placeholder: "{" + name + "}", Known: knownPlaceholders(vars)}
		}
		rest = rest[open+end+1:]
	}
}

func knownPlaceholders(vars []string) []string {
	var out []string
	for i := 0; i < len(vars); i += 2 {
		out = append(out, "{"+vars[i]+"}")
	}
	return out
}

// JoinURL joins a base URL (scheme://host[:port][/prefix]) and an expanded path.
func JoinURL(baseURL, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return strings.TrimSuffix(baseURL, "/") + path
}
