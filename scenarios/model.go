// Package scenarios owns the scripted conversations streambench plays: the YAML model, its
// validation, the embedded library, and the rendering for a seed into a Script and its Expected
// ground truth, a pure function so every process derives the same Script.
package scenarios

import "time"

// Scenario is one scripted conversation as written in a YAML file.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`                         // identifies the scenario in directives, mixes and reports.
	Description string `yaml:"description" json:"description,omitempty"` // says in one sentence what the scenario exercises.
	Prompt      string `yaml:"prompt" json:"prompt,omitempty"`           // the user text sent after the directive; optional.
	Timing      Timing `yaml:"timing" json:"timing"`                     // paces every turn's tokens.
	Turns       []Turn `yaml:"turns" json:"turns"`                       // the model's turns in order; every turn but the last ends in tool calls.
	Faults      Faults `yaml:"faults" json:"faults,omitempty"`           // provider misbehaviours the mock injects.
	Client      Client `yaml:"client" json:"client,omitempty"`           // scripts what the load generator's client does (abort, stop).
}

// Timing is the provider's pacing for a scenario, the same for every turn.
type Timing struct {
	TimeToFirstToken Dist `yaml:"ttft" json:"ttft"`                               // the delay from request arrival to the first streamed token of a turn.
	InterToken       Dist `yaml:"itl" json:"itl"`                                 // the delay between consecutive tokens.
	TokensPerFrame   int  `yaml:"tokensPerFrame" json:"tokensPerFrame,omitempty"` // groups tokens into one provider frame (default 1).
}

// DistKind names a latency distribution.
type DistKind string

// The supported distributions.
const (
	DistConstant  DistKind = "constant"  // always Value
	DistUniform   DistKind = "uniform"   // uniform in [Min, Max]
	DistNormal    DistKind = "normal"    // Mean, Stddev, clamped at 0 (and to [Min, Max] when set)
	DistLognormal DistKind = "lognormal" // Median and P99 define mu and sigma
)

// Dist is a seeded latency distribution. In YAML a bare duration ("200ms") is a constant.
type Dist struct {
	Kind   DistKind      `yaml:"kind" json:"kind,omitempty"`
	Value  time.Duration `yaml:"value" json:"value,omitempty"`
	Min    time.Duration `yaml:"min" json:"min,omitempty"`
	Max    time.Duration `yaml:"max" json:"max,omitempty"`
	Mean   time.Duration `yaml:"mean" json:"mean,omitempty"`
	Stddev time.Duration `yaml:"stddev" json:"stddev,omitempty"`
	Median time.Duration `yaml:"median" json:"median,omitempty"`
	P99    time.Duration `yaml:"p99" json:"p99,omitempty"`
}

// Turn is one model response: optional thinking, text (the answer, or a preamble) and tool calls.
type Turn struct {
	Thinking  Text       `yaml:"thinking" json:"thinking,omitempty"`
	Text      Text       `yaml:"text" json:"text,omitempty"`
	ToolCalls []ToolCall `yaml:"toolCalls" json:"toolCalls,omitempty"`
	Swarm     []Child    `yaml:"swarm" json:"swarm,omitempty"` // child agents run in parallel (compose only).
}

// Text is literal text (in YAML, a bare string) or {tokens: N} generated from the seed.
type Text struct {
	Literal string `yaml:"literal" json:"literal,omitempty"`
	Tokens  int    `yaml:"tokens" json:"tokens,omitempty"`
}

// Outcome is how a simulated tool call settles.
type Outcome string

// Tool outcomes. Cancelled is never scripted: it is what a tool settles as when the client leaves.
const (
	OutcomeSuccess   Outcome = "success"
	OutcomeError     Outcome = "error"
	OutcomeCancelled Outcome = "cancelled"
)

// ToolCall is one scripted tool call.
type ToolCall struct {
	Name      string         `yaml:"name" json:"name"`
	Arguments map[string]any `yaml:"arguments" json:"arguments,omitempty"` // the JSON object the model passes; generated from the seed when empty.
	Duration  Dist           `yaml:"duration" json:"duration"`             // how long the simulated tool runs.
	Outcome   Outcome        `yaml:"outcome" json:"outcome,omitempty"`     // success (default) or error.
	Result    string         `yaml:"result" json:"result,omitempty"`       // the tool's output text; generated when empty.
	// Pause and TimesOut end the script at this tool's turn (pause.go).
	Pause    bool           `yaml:"pause" json:"pause,omitempty"`
	TimesOut bool           `yaml:"timesOut" json:"timesOut,omitempty"`
	Plan     *PlanProposal  `yaml:"plan" json:"plan,omitempty"`     // makes the call a compose plan proposal (plan.go).
	Events   []ComposeEvent `yaml:"events" json:"events,omitempty"` // compose side events emitted while the tool runs (plan.go).
}

// Faults are provider misbehaviours. Turn indexes are zero-based.
type Faults struct {
	HTTPError      *HTTPErrorFault `yaml:"httpError" json:"httpError,omitempty"`           // answers a turn's request with an HTTP error before any stream.
	MidStreamError *MidStreamFault `yaml:"midStreamError" json:"midStreamError,omitempty"` // ends a turn's stream with a provider error after some tokens.
	Stall          *StallFault     `yaml:"stall" json:"stall,omitempty"`                   // pauses a turn's stream after some tokens.
}

// HTTPErrorFault makes the provider answer with Status (429, 500 or 503) before streaming.
type HTTPErrorFault struct {
	Turn   int `yaml:"turn" json:"turn"`
	Status int `yaml:"status" json:"status"`
}

// MidStreamFault sends a provider error event after AfterTokens tokens of Turn.
type MidStreamFault struct {
	Turn        int    `yaml:"turn" json:"turn"`
	AfterTokens int    `yaml:"afterTokens" json:"afterTokens"`
	Message     string `yaml:"message" json:"message,omitempty"`
}

// StallFault pauses Turn's stream for Duration after AfterTokens tokens.
type StallFault struct {
	Turn        int           `yaml:"turn" json:"turn"`
	AfterTokens int           `yaml:"afterTokens" json:"afterTokens"`
	Duration    time.Duration `yaml:"duration" json:"duration"`
}

// Client is what the load generator's client does during the stream (at most one action).
type Client struct {
	Abort     *Trigger   `yaml:"abort" json:"abort,omitempty"`         // closes the connection.
	Stop      *Trigger   `yaml:"stop" json:"stop,omitempty"`           // sends the stop request; dialects without one abort.
	Reconnect *Reconnect `yaml:"reconnect" json:"reconnect,omitempty"` // drops and resumes the stream (sim-canvas).
}

// Trigger says when a client acts. Exactly one field is set.
type Trigger struct {
	AfterChunks int `yaml:"afterChunks" json:"afterChunks,omitempty"` // acts after this many answer chunks were received.
	// DuringThinking and DuringTool act on the first thinking or tool frame when the client
	// sees them, else at the scripted time.
	DuringThinking bool          `yaml:"duringThinking" json:"duringThinking,omitempty"`
	DuringTool     bool          `yaml:"duringTool" json:"duringTool,omitempty"`
	After          time.Duration `yaml:"after" json:"after,omitempty"`                 // acts this long after the request was sent.
	BeforeHeaders  bool          `yaml:"beforeHeaders" json:"beforeHeaders,omitempty"` // acts once the request is sent (abort only).
}
