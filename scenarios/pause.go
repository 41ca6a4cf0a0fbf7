package scenarios

import "fmt"

// Two tool-level scripts end a run at a turn that still has tool calls, without a final answer:
//
//   - pause: true makes the call a human-input tool. It runs and settles as scripted; then the
//     run pauses for the human instead of asking the model for another turn. A Sim runtime ends
//     the stream with a successful terminal whose status is "paused" (docs/PROTOCOLS.md,
//     R-paused), with every tool settled.
//   - timesOut: true makes the call run past the execution's timeout: after the call's scripted
//     duration the runtime's execution timeout fires, the call (and any other still running)
//     settles error with ExecutionTimeoutResult and the run fails with the dialect's error
//     terminal, which names the timeout (R-cancel-not-timeout). The scripted outcome and result
//     are then those of the timeout.
//
// Either ends the script like a provider fault: no turn may follow, and at most one of them may
// appear in a scenario.

// ExecutionTimeoutResult is the result of a tool cut by the execution timeout, and the
// ProviderError of a script that times out: the error terminal's message must say "timed out".
const ExecutionTimeoutResult = "Execution timed out"

// toolEnd returns the first turn with a pause or timesOut tool call.
func (s *Scenario) toolEnd() (int, bool) {
	for ti, turn := range s.Turns {
		for _, tc := range turn.ToolCalls {
			if tc.Pause || tc.TimesOut {
				return ti, true
			}
		}
	}
	return 0, false
}

// validateToolEnds rejects a tool that both pauses and times out, and a second ending tool.
func (s *Scenario) validateToolEnds() []*FieldError {
	var errs []*FieldError
	seen := ""
	for ti, turn := range s.Turns {
		for ci, tc := range turn.ToolCalls {
			path := fmt.Sprintf("turns[%d].toolCalls[%d]", ti, ci)
			if tc.Pause && tc.TimesOut {
				errs = append(errs, &FieldError{Path: path + ".timesOut", Problem: "both pause and timesOut set; expected at most one"})
			}
			if !tc.Pause && !tc.TimesOut {
				continue
			}
			if seen != "" {
				errs = append(errs, &FieldError{Path: path, Problem: fmt.Sprintf("%s already ends the script; expected one pause or timesOut tool per scenario", seen)})
				continue
			}
			seen = path
			if tc.TimesOut && tc.Outcome != "" {
				errs = append(errs, &FieldError{Path: path + ".outcome", Problem: "a timesOut tool never settles on its own; expected no outcome"})
			}
		}
	}
	if seen != "" && (s.Faults.HTTPError != nil || s.Faults.MidStreamError != nil) {
		errs = append(errs, &FieldError{Path: seen, Problem: "a pause or timesOut tool and a provider fault both end the script; expected one"})
	}
	return errs
}

// endsByTool records in e how the tool calls of a turn end the run, and reports whether they
// do (a pause or an execution timeout).
func (e *Expected) endsByTool(calls []ScriptToolCall) bool {
	for _, c := range calls {
		switch {
		case c.Pause:
			e.Paused = true
			return true
		case c.TimesOut:
			e.ExecutionTimeout = true
			// FailedTurn stays -1: the provider completed every turn; the turn's text was a
			// preamble, never a settled answer.
			e.ProviderError = ExecutionTimeoutResult
			return true
		}
	}
	return false
}

// EndsByTool reports whether the run ends at a pause or an execution timeout rather than with
// an answer or a provider error: Sim runtimes script these, other dialects' tests skip them.
func (e Expected) EndsByTool() bool { return e.Paused || e.ExecutionTimeout }
