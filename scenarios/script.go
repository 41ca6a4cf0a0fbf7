package scenarios

import "time"

// StepKind is what a provider frame carries.
type StepKind uint8

// Step kinds, in the order they appear within a turn: thinking, then text, then tool arguments.
const (
	StepThinking StepKind = iota + 1 // a piece of thinking text
	StepText                         // a piece of answer (or preamble) text
	StepToolArgs                     // a piece of a tool call's JSON arguments
)

// String names the kind for logs and test failures.
func (k StepKind) String() string {
	switch k {
	case StepThinking:
		return "thinking"
	case StepText:
		return "text"
	case StepToolArgs:
		return "tool-args"
	}
	return "unknown"
}

// Script is a Scenario rendered for one seed: every token, every delay and every fault resolved.
// It is immutable after Render and safe for concurrent use.
type Script struct {
	Scenario string
	Seed     uint64
	Turns    []ScriptTurn
	Client   Client
	// Plan is the scenario's plan proposal (nil: none).
	Plan *ScriptPlan `json:",omitempty"`
}

// ScriptTurn is one turn's provider stream.
type ScriptTurn struct {
	// HTTPStatus, when non-zero, is the error status the provider answers this turn with.
	HTTPStatus int
	// Steps are the frames of the turn in emission order.
	Steps []Step
	// ToolCalls are the turn's tool calls, in index order.
	ToolCalls []ScriptToolCall
	// ErrorAfterStep, when >= 0, sends a provider error right after Steps[ErrorAfterStep]
	// (-1: none; a value of len(Steps) means after the last step). The stream ends there.
	ErrorAfterStep int
	// ErrorMessage is the provider error's message.
	ErrorMessage string
	// StallAfterStep, when >= 0, pauses the stream for StallFor after Steps[StallAfterStep]
	// (-1: none). Step offsets already include the stall.
	StallAfterStep int
	StallFor       time.Duration
	// InputTokens and OutputTokens are the usage the provider reports for this turn.
	InputTokens, OutputTokens int
	// Swarm are the child agents the turn's DelegateTool call starts (nil: none).
	Swarm []ScriptChild
}

// Step is one provider frame: a piece of text with its scheduled emission time.
type Step struct {
	Kind StepKind
	// Text is the piece itself: thinking, answer text or a slice of a tool's JSON arguments.
	Text string
	// Tool is the index into the turn's ToolCalls for StepToolArgs.
	Tool int
	// Tokens is how many tokens this step carries (for usage and rates).
	Tokens int
	// At is the scheduled emission time, measured from the moment the provider received the
	// turn's request.
	At time.Duration
}

// ScriptToolCall is a tool call with its resolved identity, arguments and simulated behaviour.
type ScriptToolCall struct {
	// ID is the provider call id (stable for a seed), e.g. "call_3f9a…".
	ID   string
	Name string
	// Arguments is the full JSON object text the model streams; it includes the "_sim" object
	// that tells a simulated tool how to behave (see SimDirective).
	Arguments string
	Duration  time.Duration
	Outcome   Outcome
	Result    string
	// Pause and TimesOut: see ToolCall.
	Pause    bool `json:",omitempty"`
	TimesOut bool `json:",omitempty"`
}

// SimDirective is the "_sim" member of every scripted tool call's arguments. A runtime's
// simulated tool reads it to know how long to run and how to settle, so any runtime that runs
// tools from their arguments alone can reproduce the script without sharing scenario files.
type SimDirective struct {
	DurationMs int64   `json:"ms"`
	Outcome    Outcome `json:"outcome"`
	Result     string  `json:"result,omitempty"`
	// Pause and TimesOut: see ToolCall (scenarios/pause.go).
	Pause    bool `json:"pause,omitempty"`
	TimesOut bool `json:"timesOut,omitempty"`
}

// Expected is the ground truth of a script: what a client that follows the protocol ends with.
type Expected struct {
	Scenario string
	Seed     uint64
	Turns    []ExpectedTurn
	// ProviderError is non-empty when the provider fails the conversation (HTTP error or
	// mid-stream error); the stream must then end with the dialect's error terminal.
	ProviderError string
	// ProviderStatus is the HTTP status the provider fails with when it fails before any
	// stream (provider-429: 429); 0 for a mid-stream error or none. A client talking to the
	// provider directly expects exactly this status; any other is not the script.
	ProviderStatus int `json:",omitempty"`
	// FailedTurn is the turn the provider fails at (-1 when it does not).
	FailedTurn int
	Client     Client
	// Paused is set when the run pauses for human input after its last turn's tools
	// (scenarios/pause.go); ExecutionTimeout when its execution timeout fires during them,
	// which also sets ProviderError (the run fails with the dialect's error terminal).
	Paused           bool `json:",omitempty"`
	ExecutionTimeout bool `json:",omitempty"`
	// Plan is the plan the agent proposes and the client's scripted decisions (nil: none).
	// A plan that ends the run in error cuts Turns after its own.
	Plan *ScriptPlan `json:",omitempty"`
	// Children are the swarm's child agents at every depth, parents before their children
	// (nil: the scenario has no swarm).
	Children []ExpectedChild `json:",omitempty"`
}

// ExpectedTurn is the exact text a turn produces. For a failed turn it is what was streamed
// before the failure.
type ExpectedTurn struct {
	Thinking  string
	Text      string
	ToolCalls []ScriptToolCall
	// Final is true for the last turn (the one whose text is the answer).
	Final bool
}

// FinalText is the answer a converging client ends with: the final turn's text.
func (e Expected) FinalText() string {
	for i := len(e.Turns) - 1; i >= 0; i-- {
		if e.Turns[i].Final {
			return e.Turns[i].Text
		}
	}
	return ""
}

// AllText is the concatenation of every turn's text, preambles included (what compose shows).
func (e Expected) AllText() string {
	var n int
	for _, t := range e.Turns {
		n += len(t.Text)
	}
	b := make([]byte, 0, n)
	for _, t := range e.Turns {
		b = append(b, t.Text...)
	}
	return string(b)
}

// AllThinking is the concatenation of every turn's thinking.
func (e Expected) AllThinking() string {
	var b []byte
	for _, t := range e.Turns {
		b = append(b, t.Thinking...)
	}
	return string(b)
}
