package scenarios

import (
	"fmt"
	"io"
	"time"
)

// WriteOutline writes, for people, what s renders to with seed, turn by turn.
func (s *Scenario) WriteOutline(w io.Writer, seed uint64) error {
	script := s.Render(seed)
	exp := script.Expected()
	fmt.Fprintf(w, "\n# Rendered with seed %d: estimated duration %v\n", seed, script.EstimatedDuration().Round(time.Millisecond))
	for i, st := range script.Turns {
		fmt.Fprintf(w, "\n## turn %d", i)
		if st.HTTPStatus != 0 {
			fmt.Fprintf(w, ": HTTP %d %q before any stream\n", st.HTTPStatus, st.ErrorMessage)
			continue
		}
		fmt.Fprintf(w, ": %d steps, %d output tokens", len(st.Steps), st.OutputTokens)
		if n := len(st.Steps); n > 0 {
			fmt.Fprintf(w, ", first at %v, last at %v", st.Steps[0].At.Round(time.Millisecond), st.Steps[n-1].At.Round(time.Millisecond))
		}
		fmt.Fprintln(w)
		if st.StallAfterStep >= 0 {
			fmt.Fprintf(w, "stall: %v after step %d\n", st.StallFor, st.StallAfterStep)
		}
		if i < len(exp.Turns) {
			et := exp.Turns[i]
			if et.Thinking != "" {
				fmt.Fprintf(w, "thinking: %q\n", et.Thinking)
			}
			if et.Text != "" {
				fmt.Fprintf(w, "text: %q\n", et.Text)
			}
		}
		for _, c := range st.ToolCalls {
			fmt.Fprintf(w, "tool call %s %s (%v, %s): %s\n", c.ID, c.Name, c.Duration.Round(time.Millisecond), c.Outcome, c.Arguments)
		}
		writeSwarmOutline(w, st.Swarm) // swarm.go
		if st.ErrorAfterStep >= 0 {
			fmt.Fprintf(w, "provider error after step %d: %q\n", st.ErrorAfterStep, st.ErrorMessage)
		}
	}
	if c := s.Client.String(); c != "" {
		fmt.Fprintf(w, "\nclient: %s\n", c)
	}
	return nil
}
