package scenarios

import "fmt"

// A pause tool settles, then the run pauses for a human (R-paused); a timesOut tool runs past
// the execution timeout, which fails the run (R-cancel-not-timeout). Either ends the script.

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
func (s *Scenario) validateToolEnds(errs *fieldErrors) {
	seen := ""
	for ti, turn := range s.Turns {
		for ci, tc := range turn.ToolCalls {
			path := fmt.Sprintf("turns[%d].toolCalls[%d]", ti, ci)
			if tc.Pause && tc.TimesOut {
				errs.add(path+".timesOut", "both pause and timesOut set; expected at most one")
			}
			if !tc.Pause && !tc.TimesOut {
				continue
			}
			if seen != "" {
				errs.add(path, "%s already ends the script; expected one pause or timesOut tool per scenario", seen)
				continue
			}
			seen = path
			if tc.TimesOut && tc.Outcome != "" {
				errs.add(path+".outcome", "a timesOut tool never settles on its own; expected no outcome")
			}
		}
	}
	if seen != "" && (s.Faults.HTTPError != nil || s.Faults.MidStreamError != nil) {
		errs.add(seen, "a pause or timesOut tool and a provider fault both end the script; expected one")
	}
}

// endsByTool records in e how the tool calls of a turn end the run, if they do.
func (e *Expected) endsByTool(calls []ScriptToolCall) bool {
	for _, c := range calls {
		switch {
		case c.Pause:
			e.Paused = true
			return true
		case c.TimesOut:
			e.ExecutionTimeout = true
			// FailedTurn stays -1: the provider completed every turn.
			e.ProviderError = ExecutionTimeoutResult
			return true
		}
	}
	return false
}

// EndsByTool reports whether the run ends at a pause or an execution timeout.
func (e Expected) EndsByTool() bool { return e.Paused || e.ExecutionTimeout }
