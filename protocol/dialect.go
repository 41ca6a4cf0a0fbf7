package protocol

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/sse"
)

// Dialect is a client-facing wire format, whose package owns all of it while the rest ask
// (Registry). Immutable and safe for concurrent use.
type Dialect interface {
	// Name is the dialect's CLI and mix name (sim-chat, compose, openai-chat, ...).
	Name() string
	// Options lists the options Configure accepts, for --help and for errors.
	Options() []OptionSpec
	// Configure returns the client of one mix target with opts (profile's, target's and command
	// line's merged); a bad option is an error naming it.
	Configure(target string, opts Options) (Client, error)
	// Rules declares the rules only this dialect checks (the shared ones are SharedRules).
	Rules() []RuleSpec
}

// Client is a configured dialect: what one profile × target's sessions send and how their
// streams are judged. Immutable and safe for concurrent use; per-stream state is the Checker's.
type Client interface {
	// Label names the client kind in results (sim-chat-optedin, compose, ...).
	Label() string
	// NewRequest builds the request that opens s's stream on the target at baseURL.
	NewRequest(ctx context.Context, baseURL string, s *Session) (*http.Request, error)
	// CheckHeaders judges the response headers before the body is read.
	CheckHeaders(h http.Header, s *Session) []Violation
	// NewChecker returns a fresh checker for one stream of s.
	NewChecker(s *Session) Checker
	// Sees reports whether this client is sent frames of kind k at all (a policy may withhold
	// some), so scripted actions waiting for one fall back to the scripted time.
	Sees(k FrameKind) bool
}

// Base, embedded in a Dialect or Client, is what its name decides: Name, Label, Sees (every kind)
// and CheckHeaders (an event stream), overridden where a dialect says more.
type Base string

// Name is the dialect's name.
func (b Base) Name() string { return string(b) }

// Label is the dialect's name.
func (b Base) Label() string { return string(b) }

// Sees is true for every frame kind.
func (Base) Sees(FrameKind) bool { return true }

// CheckHeaders checks the content type (R-headers).
func (Base) CheckHeaders(h http.Header, _ *Session) []Violation { return CheckEventStream(h) }

// Stopper is implemented by clients with an explicit stop request (compose).
type Stopper interface {
	// NewStopRequest builds the request that stops the run whose stream answered with resp.
	NewStopRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response) (*http.Request, error)
}

// TerminalMissing is implemented by checkers that can say why a stream ended without its
// terminal frame ("" when they cannot).
type TerminalMissing interface {
	TerminalMissing() string
}

// StopObserver is implemented by checkers of Stopper clients: StopSent is called once the stop
// request is sent, before any frame it may have caused.
type StopObserver interface {
	StopSent()
}

// DisconnectContinuer is implemented by clients that may ask the target to finish a run they
// leave (langgraph's on_disconnect continue): R-abort then requires no abort at the provider.
type DisconnectContinuer interface {
	ContinuesOnDisconnect() bool
}

// EndpointDialect is implemented by the dialects of an inference endpoint's API, which take
// the endpoint workload (load --input-tokens, --prompts, ...), a model and an API key.
type EndpointDialect interface {
	Endpoint() EndpointSpec
}

// EndpointSpec is what an inference endpoint's dialect sends of an application's request.
type EndpointSpec struct {
	// APIKeyEnv is the environment variable an API key is read from when none is given.
	APIKeyEnv string
	// APIKeyHeader is the header an API key goes in, after APIKeyPrefix ("Bearer ").
	APIKeyHeader, APIKeyPrefix string
	// MaxTokensFields are the ModelRequest.MaxTokensField values the wire takes; nil: max_tokens.
	MaxTokensFields []string
	// VLLMFields: the wire takes vLLM's min_tokens and ignore_eos.
	VLLMFields bool
}

// APIKey is the header that carries key, as name and value (Authorization: Bearer KEY).
func (e EndpointSpec) APIKey(key string) (name, value string) {
	return e.APIKeyHeader, e.APIKeyPrefix + key
}

// SwarmPlayer is implemented by dialects whose clients play swarm scenarios (compose); no
// other dialect's profile may play one.
type SwarmPlayer interface {
	PlaysSwarm() bool
}

// OptionSpec documents one dialect option.
type OptionSpec struct {
	Key  string
	Help string
	// Default is the value assumed when the option is not given, as --help shows it ("": none).
	Default string
	// Placeholders are the {NAME}s of a path template option, without braces.
	Placeholders []string
}

// OptionVar is a dialect option bound to its setting, so one list both documents the options
// and reads them (Options.Apply).
type OptionVar struct {
	OptionSpec
	// Set reads the option's key from o into its setting; an absent key keeps the setting.
	Set func(o Options) error
}

// StringVar binds a string option to dst; dst's value is the default.
func StringVar(spec OptionSpec, dst *string) OptionVar {
	return OptionVar{spec, func(o Options) (err error) { *dst, err = o.String(spec.Key, *dst); return err }}
}

// BoolVar binds a boolean option to dst; dst's value is the default.
func BoolVar(spec OptionSpec, dst *bool) OptionVar {
	return OptionVar{spec, func(o Options) (err error) { *dst, err = o.Bool(spec.Key, *dst); return err }}
}

// PathVar binds a path template option to dst, whose value is the default; a placeholder not in
// spec.Placeholders is an error naming the option.
func PathVar(spec OptionSpec, dst *string) OptionVar {
	return OptionVar{spec, func(o Options) error {
		tmpl, err := o.String(spec.Key, *dst)
		if err != nil {
			return err
		}
		vars := make([]string, 0, 2*len(spec.Placeholders))
		for _, p := range spec.Placeholders {
			vars = append(vars, p, p)
		}
		if _, err := ExpandPath(tmpl, vars...); err != nil {
			return fmt.Errorf("option %s: %w", spec.Key, err)
		}
		*dst = tmpl
		return nil
	}}
}

// NoGroundTruthVar binds option noGroundTruth to dst; whose names the model ("the route's").
func NoGroundTruthVar(whose string, dst *bool) OptionVar {
	return BoolVar(OptionSpec{Key: "noGroundTruth", Help: "judge structure only: " + whose + " model is not the mock (also --no-ground-truth)"}, dst)
}

// Specs lists the specs of vars, for a dialect's Options.
func Specs(vars []OptionVar) []OptionSpec {
	out := make([]OptionSpec, len(vars))
	for i, v := range vars {
		out[i] = v.OptionSpec
	}
	return out
}

// Apply checks o against vars and sets every option in vars' order; the first bad value is the
// error.
func (o Options) Apply(dialect string, vars []OptionVar) error {
	if err := o.Check(dialect, Specs(vars)); err != nil {
		return err
	}
	for _, v := range vars {
		if err := v.Set(o); err != nil {
			return err
		}
	}
	return nil
}

// Options are a mix profile's or the command line's dialect options by key: YAML scalars or
// command-line strings.
type Options map[string]any

// MergeOptions returns the options of every layer, later layers winning for the same key.
func MergeOptions(layers ...Options) Options {
	out := Options{}
	for _, l := range layers {
		maps.Copy(out, l)
	}
	return out
}

// Check returns an error naming every key of o that specs do not list, and the known keys.
func (o Options) Check(dialect string, specs []OptionSpec) error {
	known := make([]string, 0, len(specs))
	for _, s := range specs {
		known = append(known, s.Key)
	}
	var unknown []string
	for k := range o {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	if len(known) == 0 {
		return fmt.Errorf("%s takes no options (got %s)", dialect, strings.Join(unknown, ", "))
	}
	return fmt.Errorf("%s: unknown option %s (known: %s)", dialect, strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// Bool reads key as a boolean (true/false, or the strings "true"/"false"); absent is def.
func (o Options) Bool(key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(x)
		if err != nil {
			return def, fmt.Errorf("option %s: %q, want true or false", key, x)
		}
		return b, nil
	}
	return def, fmt.Errorf("option %s: %v (%T), want true or false", key, v, v)
}

// String reads key as a string; absent is def.
func (o Options) String(key, def string) (string, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return def, fmt.Errorf("option %s: %v (%T), want a string", key, v, v)
	}
	return s, nil
}

// Measurer is implemented by checkers that measure quantities of their own dialect (compose's
// child_ttfd). Measures is called once after Finish; each measure is recorded in an
// HdrHistogram of its name. A stream that had none of a measure reports none (not a zero).
type Measurer interface {
	Measures() []Measure
}

// MeasureKind says what a Measure's value is.
type MeasureKind uint8

// Measure kinds.
const (
	MeasureLatency MeasureKind = iota + 1 // Duration is meaningful
	MeasureCount                          // Count is meaningful
)

// Measure is one value a checker measured on one stream.
type Measure struct {
	// Name is the metric's snake_case name in results and gate expressions, unique across dialects.
	Name     string
	Kind     MeasureKind
	Duration time.Duration
	Count    int64
}

// DecodeLimiter is implemented by clients whose wire legitimately sends events past the SSE
// decoder's default limits (openai-responses repeats an item's whole text on one line).
type DecodeLimiter interface {
	DecodeLimits() sse.Limits
}

// NewDecoder returns the SSE decoder for a stream of client c, with its DecodeLimits if any.
func NewDecoder(c Client, r io.Reader) *sse.Decoder {
	if l, ok := c.(DecodeLimiter); ok {
		return sse.NewDecoderLimits(r, l.DecodeLimits())
	}
	return sse.NewDecoder(r)
}

// ApprovalDecision is the client's scripted answer to one approval request.
type ApprovalDecision struct {
	// ProposalID and Version are the ones approval.requested named.
	ProposalID string
	Version    int
	// Decision is approved, rejected or changes_requested; Reason goes with it.
	Decision string
	Reason   string
	// ThinkTime is how long the client waits after approval.requested before it sends.
	ThinkTime time.Duration
}

// Approver is implemented by clients that answer an agent's approval request (compose) with a
// request of its own beside the stream.
type Approver interface {
	// NewApprovalRequest builds the request that sends d for the run of resp's stream.
	NewApprovalRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response, d ApprovalDecision) (*http.Request, error)
}

// ApprovalObserver is implemented by checkers of Approver clients. After each FrameOther the
// generator asks ApprovalDue; for a decision it waits the think time, calls ApprovalSending,
// sends it and calls ApprovalAnswered, both from another goroutine than Observe and Finish:
// implementations synchronise them.
type ApprovalObserver interface {
	// ApprovalDue returns the decision the frame just observed asks for, once (ok false: none).
	ApprovalDue() (d ApprovalDecision, ok bool)
	// ApprovalSending records that d is being sent now (the start of the approval round trip).
	ApprovalSending(d ApprovalDecision, at time.Time)
	// ApprovalAnswered records the request's HTTP status (0: none came back) and error.
	ApprovalAnswered(d ApprovalDecision, status int, err error)
}

// MeasureApprovalRTT is the approval round trip measure: decision sent → approval.decided.
const MeasureApprovalRTT = "approval_rtt"

// Reconnector is implemented by clients whose streams resume after a drop (sim-canvas): the
// generator drops the stream, sends this request and reads it into the same Checker.
type Reconnector interface {
	// NewReconnectRequest builds the request resuming resp's stream after lastEventID.
	NewReconnectRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response, lastEventID string) (*http.Request, error)
}

// ReconnectObserver is implemented by checkers of Reconnector clients: Reconnected is called
// once the resumed stream's head arrived, before its frames, with the Last-Event-ID sent.
type ReconnectObserver interface {
	Reconnected(lastEventID string, h http.Header)
}
