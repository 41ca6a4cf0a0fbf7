package scenarios

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Validate checks the scenario's structure and returns every problem found, joined; each is a
// *FieldError (errors.As finds the first).
func (s *Scenario) Validate() error {
	return joinFieldErrors(s.validate())
}

func (s *Scenario) validate() []*FieldError {
	var errs fieldErrors
	s.validateHead(&errs)
	// end is the turn that ends the script: the last one, or the one a fault fails.
	end, endsByFault := s.validateFaults(&errs)
	if t, ok := s.toolEnd(); ok && t <= end {
		end, endsByFault = t, true
	}
	s.validateToolEnds(&errs)
	if pt := s.planEndTurn(); pt >= 0 && pt <= end {
		end, endsByFault = pt, true
	}
	s.validateTotal(&errs)
	s.validateTurns(&errs, end, endsByFault)
	s.validatePlans(&errs)
	s.Client.validate(&errs)
	s.validateTriggerReachable(&errs, end)
	return errs
}

// fieldErrors collects problems in document order.
type fieldErrors []*FieldError

func (e *fieldErrors) add(path, format string, args ...any) {
	*e = append(*e, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

func (s *Scenario) validateHead(errs *fieldErrors) {
	if s.Name == "" {
		errs.add("name", "missing; expected a non-empty scenario name")
	}
	if i := strings.IndexAny(s.Name, " \t\n]="); i >= 0 {
		errs.add("name", "%q contains %q; expected no whitespace, '=' or ']' so it fits in a directive", s.Name, rune(s.Name[i]))
	}
	s.Timing.TimeToFirstToken.validate(errs, "timing.ttft")
	s.Timing.InterToken.validate(errs, "timing.itl")
	if s.Timing.TokensPerFrame < 0 {
		errs.add("timing.tokensPerFrame", "%d is negative; expected >= 0 (0 means 1)", s.Timing.TokensPerFrame)
	}
	if len(s.Turns) == 0 {
		errs.add("turns", "missing; expected at least one turn")
	}
}

// validateFaults checks the scripted faults and returns the turn that ends the script.
func (s *Scenario) validateFaults(errs *fieldErrors) (end int, endsByFault bool) {
	end = len(s.Turns) - 1
	inRange := func(path string, turn int) bool {
		if turn < 0 || turn >= len(s.Turns) {
			errs.add(path, "turn %d out of range; expected 0..%d", turn, len(s.Turns)-1)
			return false
		}
		return true
	}
	if f := s.Faults.HTTPError; f != nil {
		if inRange("faults.httpError.turn", f.Turn) {
			end, endsByFault = f.Turn, true
		}
		if f.Status != 429 && f.Status != 500 && f.Status != 503 {
			errs.add("faults.httpError.status", "%d is not scriptable; expected 429, 500 or 503", f.Status)
		}
	}
	if f := s.Faults.MidStreamError; f != nil {
		if s.Faults.HTTPError != nil {
			errs.add("faults.midStreamError", "both httpError and midStreamError end the script; expected at most one")
		}
		if inRange("faults.midStreamError.turn", f.Turn) && s.Faults.HTTPError == nil {
			end, endsByFault = f.Turn, true
		}
		if f.AfterTokens < 1 {
			errs.add("faults.midStreamError.afterTokens", "%d; expected >= 1", f.AfterTokens)
		}
	}
	if f := s.Faults.Stall; f != nil {
		inRange("faults.stall.turn", f.Turn)
		if f.AfterTokens < 1 {
			errs.add("faults.stall.afterTokens", "%d; expected >= 1", f.AfterTokens)
		}
		if f.Duration <= 0 {
			errs.add("faults.stall.duration", "%v; expected a positive duration", f.Duration)
		}
	}
	return end, endsByFault
}

func (s *Scenario) validateTotal(errs *fieldErrors) {
	total, textTooLong := 0, false
	for _, turn := range s.Turns {
		for _, n := range []int{turn.Thinking.Tokens, turn.Text.Tokens} {
			total = min(total+max(n, 0), MaxScriptTokens+1) // no overflow
			textTooLong = textTooLong || n > MaxTextTokens
		}
	}
	if total > MaxScriptTokens && !textTooLong { // a text too long is named where it is
		errs.add("turns", "the texts and thinking of all turns are more than %d tokens together; expected at most %d", MaxScriptTokens, MaxScriptTokens)
	}
}

// validateTurns checks each turn against the script's end.
func (s *Scenario) validateTurns(errs *fieldErrors, end int, endsByFault bool) {
	swarmNames := map[string]string{}
	for ti, turn := range s.Turns {
		path := fmt.Sprintf("turns[%d]", ti)
		turn.Thinking.validate(errs, path+".thinking")
		turn.Text.validate(errs, path+".text")
		// A swarm is a tool call (DelegateTool) for the turn structure.
		calls := len(turn.ToolCalls) + min(len(turn.Swarm), 1)
		empty := turn.Thinking == (Text{}) && turn.Text == (Text{}) && calls == 0
		switch {
		case ti > end:
			errs.add(path, "unreachable: the scripted fault (or a plan that ends the run in error) ends the script at turn %d, so no turn may follow it", end)
		case empty:
			errs.add(path, "empty turn; expected thinking, text or tool calls")
		case ti < end && calls == 0:
			errs.add(path+".toolCalls", "missing; every turn but the last must end in tool calls (the model answers only in the last turn)")
		case ti == end && !endsByFault && len(turn.Swarm) > 0:
			errs.add(path+".swarm", "the last turn delegates to children; expected a later turn with the answer (a swarm ends its turn like a tool call)")
		case ti == end && !endsByFault && len(turn.ToolCalls) > 0:
			errs.add(path+".toolCalls", "the last turn has tool calls; expected none (the last turn is the answer)")
		}
		validateSwarm(errs, path+".swarm", turn.Swarm, 1, swarmNames)
		validateToolCalls(errs, path, turn.ToolCalls, " (or swarm:)")
	}
}

// validateToolCalls checks the tool calls under path (hint follows "expected another name").
func validateToolCalls(errs *fieldErrors, path string, calls []ToolCall, hint string) {
	for ci, tc := range calls {
		if tc.Name == DelegateTool {
			errs.add(fmt.Sprintf("%s.toolCalls[%d].name", path, ci), "%q is reserved for the swarm delegation; expected another name%s", DelegateTool, hint)
		}
		tc.validate(errs, fmt.Sprintf("%s.toolCalls[%d]", path, ci))
	}
}

// validateTriggerReachable rejects client triggers that can never fire, which would silently
// make an abort scenario a plain one.
func (s *Scenario) validateTriggerReachable(errs *fieldErrors, end int) {
	thinks, tools := false, false
	for _, turn := range s.Turns[:min(end+1, len(s.Turns))] {
		thinks = thinks || turn.Thinking != (Text{})
		tools = tools || len(turn.ToolCalls) > 0 || len(turn.Swarm) > 0
	}
	for i, t := range []*Trigger{s.Client.Abort, s.Client.Stop} {
		path := []string{"client.abort", "client.stop"}[i]
		if t != nil && t.DuringThinking && !thinks {
			errs.add(path+".duringThinking", "no turn thinks, so the trigger never fires; expected a turn with thinking")
		}
		if t != nil && t.DuringTool && !tools {
			errs.add(path+".duringTool", "no turn calls a tool, so the trigger never fires; expected a turn with tool calls")
		}
	}
}

func (t Text) validate(errs *fieldErrors, path string) {
	if t.Literal != "" && t.Tokens != 0 {
		errs.add(path, "both literal and tokens set; expected one")
	}
	if t.Tokens < 0 {
		errs.add(path+".tokens", "%d is negative; expected >= 0", t.Tokens)
	}
	if t.Tokens > MaxTextTokens {
		errs.add(path+".tokens", "%d is more than one text may script; expected at most %d", t.Tokens, MaxTextTokens)
	}
}

// MaxTextTokens bounds one scripted text, as long as today's longest model outputs: every stream
// renders its script, so an unbounded count is unbounded memory.
const MaxTextTokens = 1 << 17

// MaxScriptTokens bounds the tokens of all of a scenario's turns together.
const MaxScriptTokens = 1 << 18

func (tc ToolCall) validate(errs *fieldErrors, path string) {
	if tc.Name == "" {
		errs.add(path+".name", "missing; expected the tool's name")
	}
	switch tc.Outcome {
	case "", OutcomeSuccess, OutcomeError:
	default:
		errs.add(path+".outcome", "%q; expected success or error", tc.Outcome)
	}
	if _, ok := tc.Arguments["_sim"]; ok {
		errs.add(path+".arguments._sim", "reserved: streambench adds _sim itself from duration, outcome and result")
	}
	if _, err := json.Marshal(tc.Arguments); err != nil {
		errs.add(path+".arguments", "not representable as JSON: %v", err)
	}
	tc.Duration.validate(errs, path+".duration")
}

func (c Client) validate(errs *fieldErrors) {
	if c.Abort != nil && c.Stop != nil {
		errs.add("client.stop", "both abort and stop set; expected at most one")
	}
	if c.Abort != nil {
		c.Abort.validate(errs, "client.abort")
	}
	c.validateReconnect(errs)
	if c.Stop != nil {
		c.Stop.validate(errs, "client.stop")
		if c.Stop.BeforeHeaders {
			errs.add("client.stop.beforeHeaders", "a stop request needs the run id of the response head; expected abort: {beforeHeaders: true}")
		}
	}
}

// validate checks that exactly one trigger field is set, with a sensible value.
func (t Trigger) validate(errs *fieldErrors, path string) {
	if t.AfterChunks < 0 {
		errs.add(path+".afterChunks", "%d is negative; expected >= 1", t.AfterChunks)
	}
	if t.After < 0 {
		errs.add(path+".after", "%v is negative; expected a positive duration", t.After)
	}
	set := 0
	for _, on := range []bool{t.AfterChunks != 0, t.DuringThinking, t.DuringTool, t.After != 0, t.BeforeHeaders} {
		if on {
			set++
		}
	}
	if set != 1 {
		errs.add(path, "%d triggers set; expected exactly one of afterChunks, duringThinking, duringTool, after, beforeHeaders", set)
	}
}
