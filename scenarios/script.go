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
	names := [...]string{StepThinking: "thinking", StepText: "text", StepToolArgs: "tool-args"}
	if int(k) < len(names) && names[k] != "" {
		return names[k]
	}
	return "unknown"
}

// Script is a Scenario rendered for one seed, immutable and safe for concurrent use.
type Script struct {
	Scenario string
	Seed     uint64
	Turns    []ScriptTurn
	Client   Client
	Plan     *ScriptPlan `json:",omitempty"` // the scenario's plan proposal (nil: none).
}

// ScriptTurn is one turn's provider stream.
type ScriptTurn struct {
	HTTPStatus int              // the error status the provider answers this turn with (0: none).
	Steps      []Step           // the frames in emission order.
	ToolCalls  []ScriptToolCall // in index order.
	// ErrorAfterStep, when >= 0, ends the stream with a provider error right after
	// Steps[ErrorAfterStep] (-1: none; len(Steps): after the last step).
	ErrorAfterStep int
	ErrorMessage   string
	// StallAfterStep, when >= 0, pauses the stream for StallFor after Steps[StallAfterStep]
	// (-1: none); step offsets already include the stall.
	StallAfterStep            int
	StallFor                  time.Duration
	InputTokens, OutputTokens int           // the usage the provider reports.
	Swarm                     []ScriptChild // the children the turn's DelegateTool call starts.
}

// Step is one provider frame: a piece of text with its scheduled emission time.
type Step struct {
	Kind   StepKind
	Text   string        // thinking, answer text or a slice of a tool's JSON arguments.
	Tool   int           // the index into the turn's ToolCalls (StepToolArgs).
	Tokens int           // how many tokens the step carries.
	At     time.Duration // the emission time, from when the provider received the request.
}

// ScriptToolCall is a tool call with its resolved identity, arguments and simulated behaviour.
type ScriptToolCall struct {
	ID        string // the provider call id, stable for a seed ("call_3f9a…").
	Name      string
	Arguments string // the JSON object the model streams, "_sim" (SimDirective) included.
	Duration  time.Duration
	Outcome   Outcome
	Result    string
	Pause     bool `json:",omitempty"` // see ToolCall.
	TimesOut  bool `json:",omitempty"`
}

// SimDirective is the "_sim" member of every scripted tool call's arguments: how long a
// runtime's simulated tool runs and how it settles, so no runtime needs the scenario files.
type SimDirective struct {
	DurationMs int64   `json:"ms"`
	Outcome    Outcome `json:"outcome"`
	Result     string  `json:"result,omitempty"`
	Pause      bool    `json:"pause,omitempty"` // see ToolCall.
	TimesOut   bool    `json:"timesOut,omitempty"`
}

// Expected is the ground truth of a script: what a client that follows the protocol ends with.
type Expected struct {
	Scenario string
	Seed     uint64
	Turns    []ExpectedTurn
	// ProviderError is non-empty when the provider (or the execution timeout) fails the
	// conversation: the stream must end with the dialect's error terminal.
	ProviderError string
	// ProviderStatus is the HTTP status the provider fails with before any stream (0: none).
	ProviderStatus int `json:",omitempty"`
	FailedTurn     int // the turn the provider fails at (-1: none).
	Client         Client
	// Paused: the run pauses for human input after its last turn's tools; ExecutionTimeout:
	// the execution timeout fires during them (pause.go).
	Paused           bool            `json:",omitempty"`
	ExecutionTimeout bool            `json:",omitempty"`
	Plan             *ScriptPlan     `json:",omitempty"` // nil: none; one that ends the run in error cuts Turns after its own.
	Children         []ExpectedChild `json:",omitempty"` // every depth, parents first.
}

// ExpectedTurn is the exact text a turn produces (a failed turn's, up to the failure).
type ExpectedTurn struct {
	Thinking  string
	Text      string
	ToolCalls []ScriptToolCall
	Final     bool // the turn whose text is the answer.
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
