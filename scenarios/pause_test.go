package scenarios

import (
	"strings"
	"testing"
)

// TestPauseAndTimeoutValidation: a pause or timesOut tool ends the script at its turn, once per
// scenario, and rejects what cannot happen after it; each bad file is named at its field.
func TestPauseAndTimeoutValidation(t *testing.T) {
	t.Parallel()
	const tool = "  - text: hi\n    toolCalls:\n      - {name: ask, %s}\n"
	for _, tc := range []struct {
		name, turns, want string // want: "" for valid, else a substring of the error
	}{
		// A paused last turn with tool calls is valid.
		{"pause ends the script", strings.Replace(tool, "%s", "pause: true", 1), ""},
		// So is a timing-out one.
		{"timeout ends the script", strings.Replace(tool, "%s", "timesOut: true", 1), ""},
		// Nothing may follow the pause.
		{"turn after pause", strings.Replace(tool, "%s", "pause: true", 1) + "  - text: answer\n", "turns[1]: unreachable"},
		// A tool cannot both pause and time out.
		{"both", strings.Replace(tool, "%s", "pause: true, timesOut: true", 1), "toolCalls[0].timesOut: both pause and timesOut"},
		// A timed-out tool never settles as scripted.
		{"timeout with outcome", strings.Replace(tool, "%s", "timesOut: true, outcome: success", 1), "a timesOut tool never settles on its own"},
		// Two ending tools in one turn.
		{"two endings", "  - text: hi\n    toolCalls:\n      - {name: a, pause: true}\n      - {name: b, timesOut: true}\n", "toolCalls[1]: turns[0].toolCalls[0] already ends the script"},
		// A pause and a provider fault cannot both end it.
		{"pause and fault", strings.Replace(tool, "%s", "pause: true", 1) + "faults: {midStreamError: {turn: 0, afterTokens: 1}}\n", "a pause or timesOut tool and a provider fault"},
	} {
		_, err := Parse("p.yaml", []byte(validHeader+"turns:\n"+tc.turns))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "p.yaml:")):
			t.Errorf("%s: error %v, want it to name p.yaml and say %q", tc.name, err, tc.want)
		}
	}

	// The ground truth: paused, or failing with the timeout's message, no final turn.
	for _, tc := range []struct {
		field              string
		paused, timeout    bool
		outcome            Outcome
		providerErr, final string
	}{
		{"pause: true", true, false, OutcomeSuccess, "", ""},
		{"timesOut: true", false, true, OutcomeError, ExecutionTimeoutResult, ""},
	} {
		s, err := Parse("p.yaml", []byte(validHeader+"turns:\n"+strings.Replace(tool, "%s", tc.field, 1)))
		if err != nil {
			t.Fatal(err)
		}
		e := s.Render(1).Expected()
		call := e.Turns[0].ToolCalls[0]
		if e.Paused != tc.paused || e.ExecutionTimeout != tc.timeout || e.ProviderError != tc.providerErr || e.FailedTurn != -1 ||
			e.FinalText() != tc.final || call.Outcome != tc.outcome || call.Pause != tc.paused || call.TimesOut != tc.timeout || !e.EndsByTool() {
			t.Errorf("%s: expected %+v", tc.field, e)
		}
		if !strings.Contains(call.Arguments, `"`+strings.TrimSuffix(tc.field, ": true")+`":true`) {
			t.Errorf("%s: _sim does not carry it: %s", tc.field, call.Arguments)
		}
	}
}
