package scenarios

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Swarm children: a turn may delegate to child agents (Turn.Swarm), each with its own scripted
// text, tool calls, start delay and outcome, and children of its own. Only the compose dialect
// streams them (swarm_child_* frames); a swarm scenario belongs in a compose profile's own
// scenarios in a mix.
//
// How a runtime learns about children without sharing scenario files: the swarm turn ends in
// one extra tool call, DelegateTool, whose arguments list the children under "_swarm"
// (SimChild, next to the usual "_sim" directive). A
// runtime that runs swarms starts one child per entry, after its delay, and asks the provider
// for the child's turns with the ChildHeader request header set to the child's path; the mock
// then plays that child's script (Script.Child). A runtime that does not know swarms runs the
// delegation as an ordinary simulated tool of _sim.ms and never streams children.

// DelegateTool is the name of the tool call a swarm turn ends in.
const DelegateTool = "delegate_agents"

// ChildHeader is the provider request header that selects a swarm child's script by its path
// (ScriptChild.Path); the X-Streambench-* scenario, seed and session selection stays as for the
// parent.
const ChildHeader = "X-Streambench-Child"

// MaxSwarmDepth bounds how deep children may nest (a child at depth MaxSwarmDepth has none).
const MaxSwarmDepth = 4

// ChildOutcome is how a child agent ends.
type ChildOutcome string

// Child outcomes.
const (
	ChildDone  ChildOutcome = "done"  // swarm_child_done
	ChildError ChildOutcome = "error" // swarm_child_error with the scripted message
)

// defaultChildError is a child's error message when the scenario does not script one.
const defaultChildError = "scripted child agent failure"

// Child is one child agent a turn delegates to.
type Child struct {
	// Name is the child's sub-agent id (subId and runKey on the wire): unique in the scenario,
	// no whitespace.
	Name string `yaml:"name" json:"name"`
	// Text is the child's answer, streamed as swarm_child_delta after its tools.
	Text Text `yaml:"text" json:"text"`
	// ToolCalls run in parallel before the child answers.
	ToolCalls []ToolCall `yaml:"toolCalls" json:"toolCalls,omitempty"`
	// Outcome is done (default) or error: the child streams its text, then fails with Error.
	Outcome ChildOutcome `yaml:"outcome" json:"outcome,omitempty"`
	// Error is the failing child's message (outcome error only).
	Error string `yaml:"error" json:"error,omitempty"`
	// Delay is how long after the delegation the child starts.
	Delay Dist `yaml:"delay" json:"delay,omitempty"`
	// Swarm are the child's own children, started with its tool calls.
	Swarm []Child `yaml:"swarm" json:"swarm,omitempty"`
}

// SwarmArgument is the DelegateTool argument that lists the children ([]SimChild).
const SwarmArgument = "_swarm"

// SimChild is one entry of a DelegateTool call's "_swarm" argument: what a runtime needs to
// start the child.
type SimChild struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	DelayMs int64  `json:"delayMs,omitempty"`
}

// ScriptChild is a child agent rendered for one seed.
type ScriptChild struct {
	Name string
	// Path locates the child: the root turn's index, then the child's index at each level
	// ("1.0" is the first child of turn 1, "1.0.2" that child's third child).
	Path  string
	Depth int
	Delay time.Duration
	// Turns are the child's provider turns: one with its tool calls (and its delegation, when
	// it has children) if it has any, then one with its text.
	Turns   []ScriptTurn
	Outcome ChildOutcome
	Error   string
}

// ExpectedChild is the ground truth of one child agent.
type ExpectedChild struct {
	Name, Path string
	// Parent is the parent child's name ("" for a child of the root run).
	Parent string
	Depth  int
	// Chain is the names from the depth-1 ancestor down to the child: the runKeyChain after
	// the root run's id, when runKeys are the names.
	Chain []string
	// Text is what the child's deltas concatenate to (for a failing child, what it streamed
	// before failing).
	Text string
	// Tools are the child's tool names in call order (DelegateTool when it has children).
	Tools   []string
	Outcome ChildOutcome
	Error   string
}

// renderSwarm renders the children of a turn (or of a child) whose path is prefix.
func (s *Scenario) renderSwarm(seed uint64, prefix string, children []Child) []ScriptChild {
	out := make([]ScriptChild, 0, len(children))
	for i, c := range children {
		out = append(out, s.renderChild(seed, prefix+"."+strconv.Itoa(i), c))
	}
	return out
}

// renderChild renders one child with its own random streams ("child/PATH/" + purpose), so
// adding a child never changes the root conversation or a sibling.
func (s *Scenario) renderChild(seed uint64, path string, c Child) ScriptChild {
	ns := "child/" + path + "/"
	sc := ScriptChild{
		Name: c.Name, Path: path, Depth: strings.Count(path, "."),
		Delay:   c.Delay.Sample(rng(seed, ns+"delay")),
		Outcome: c.Outcome, Error: c.Error,
	}
	if sc.Outcome == "" {
		sc.Outcome = ChildDone
	}
	if sc.Outcome == ChildError && sc.Error == "" {
		sc.Error = defaultChildError
	}
	var turns []Turn
	if len(c.ToolCalls) > 0 || len(c.Swarm) > 0 {
		turns = append(turns, Turn{ToolCalls: c.ToolCalls, Swarm: c.Swarm})
	}
	turns = append(turns, Turn{Text: c.Text})
	for ti, t := range turns {
		st := s.renderTurnIn(seed, ns, path, ti, t, nil)
		if ti == len(turns)-1 && sc.Outcome == ChildError {
			st.ErrorMessage = sc.Error
			st.ErrorAfterStep = max(len(st.Steps)-1, 0)
		}
		sc.Turns = append(sc.Turns, st)
	}
	return sc
}

// delegateCall is the DelegateTool call that starts children: its _sim lists them, and its
// duration is the longest child's delay plus scripted time, so a runtime without swarms waits
// about as long as one with them (it runs the delegation as a plain simulated tool).
func delegateCall(seed uint64, ns string, ti, ci int, children []ScriptChild) ScriptToolCall {
	sim := make([]SimChild, len(children))
	names := make([]string, len(children))
	var longest time.Duration
	for i, c := range children {
		sim[i] = SimChild{Name: c.Name, Path: c.Path, DelayMs: c.Delay.Milliseconds()}
		names[i] = c.Name
		longest = max(longest, c.Delay+c.estimatedDuration())
	}
	call := ScriptToolCall{
		ID: toolCallID(seed, ns, ti, ci), Name: DelegateTool, Duration: longest, Outcome: OutcomeSuccess,
		Result: fmt.Sprintf("%d child agents finished: %s", len(children), strings.Join(names, ", ")),
	}
	call.Arguments = encodeArguments(map[string]any{
		"agents":      names,
		"_sim":        SimDirective{DurationMs: longest.Milliseconds(), Outcome: OutcomeSuccess, Result: call.Result},
		SwarmArgument: sim,
	})
	return call
}

// estimatedDuration is the child's scripted wall time (its turns' steps and longest tools).
func (c *ScriptChild) estimatedDuration() time.Duration {
	return (&Script{Turns: c.Turns}).EstimatedDuration()
}

// Child returns the script a swarm child plays, by its path (ChildHeader), and false when the
// script has no such child.
func (s *Script) Child(path string) (*Script, bool) {
	c := findChild(s.Turns, path)
	if c == nil {
		return nil, false
	}
	return &Script{Scenario: s.Scenario, Seed: s.Seed, Turns: c.Turns}, true
}

// findChild searches the children of turns, depth first.
func findChild(turns []ScriptTurn, path string) *ScriptChild {
	for ti := range turns {
		for ci := range turns[ti].Swarm {
			c := &turns[ti].Swarm[ci]
			if c.Path == path {
				return c
			}
			if strings.HasPrefix(path, c.Path+".") {
				if found := findChild(c.Turns, path); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

// appendExpectedChildren flattens children (and theirs) into out, parents first.
func appendExpectedChildren(out []ExpectedChild, children []ScriptChild, chain []string) []ExpectedChild {
	for i := range children {
		c := &children[i]
		ec := ExpectedChild{
			Name: c.Name, Path: c.Path, Depth: c.Depth, Outcome: c.Outcome, Error: c.Error,
			Chain: append(append([]string(nil), chain...), c.Name),
		}
		if len(chain) > 0 {
			ec.Parent = chain[len(chain)-1]
		}
		var text strings.Builder
		for _, st := range c.Turns {
			for _, step := range st.Steps {
				if step.Kind == StepText {
					text.WriteString(step.Text)
				}
			}
			for _, tc := range st.ToolCalls {
				ec.Tools = append(ec.Tools, tc.Name)
			}
		}
		ec.Text = text.String()
		out = append(out, ec)
		for _, st := range c.Turns {
			out = appendExpectedChildren(out, st.Swarm, ec.Chain)
		}
	}
	return out
}

// HasSwarm reports whether any turn of the scenario delegates to children.
func (s *Scenario) HasSwarm() bool {
	for _, t := range s.Turns {
		if len(t.Swarm) > 0 {
			return true
		}
	}
	return false
}

// ChildByName returns the expected child named name.
func (e *Expected) ChildByName(name string) (ExpectedChild, bool) {
	for _, c := range e.Children {
		if c.Name == name {
			return c, true
		}
	}
	return ExpectedChild{}, false
}

// validateSwarm checks a turn's (or child's) children at path, recording names in seen.
func validateSwarm(path string, children []Child, depth int, seen map[string]string) []*FieldError {
	var errs []*FieldError
	bad := func(p, format string, args ...any) {
		errs = append(errs, &FieldError{Path: p, Problem: fmt.Sprintf(format, args...)})
	}
	if len(children) > 0 && depth > MaxSwarmDepth {
		bad(path, "children at depth %d; expected at most %d levels of swarm", depth, MaxSwarmDepth)
		return errs
	}
	for i, c := range children {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case c.Name == "":
			bad(p+".name", "missing; expected the child's sub-agent id (its runKey)")
		case strings.ContainsAny(c.Name, " \t\r\n\"\\"):
			bad(p+".name", "%q contains whitespace, a quote or a backslash; expected a plain id", c.Name)
		case seen[c.Name] != "":
			bad(p+".name", "%q is also the name of %s; expected names unique in the scenario (they are runKeys)", c.Name, seen[c.Name])
		default:
			seen[c.Name] = p
		}
		if c.Text == (Text{}) {
			bad(p+".text", "missing; expected the child's scripted answer (a string or {tokens: N})")
		}
		errs = append(errs, c.Text.validate(p+".text")...)
		switch c.Outcome {
		case "", ChildDone:
			if c.Error != "" {
				bad(p+".error", "set on a child whose outcome is %q; expected it only with outcome: error", cmpOr(string(c.Outcome), string(ChildDone)))
			}
		case ChildError:
		default:
			bad(p+".outcome", "%q; expected done or error", c.Outcome)
		}
		errs = append(errs, c.Delay.validate(p+".delay")...)
		for ci, tc := range c.ToolCalls {
			if tc.Name == DelegateTool {
				bad(fmt.Sprintf("%s.toolCalls[%d].name", p, ci), "%q is reserved for the swarm delegation; expected another name", DelegateTool)
			}
			errs = append(errs, tc.validate(fmt.Sprintf("%s.toolCalls[%d]", p, ci))...)
		}
		errs = append(errs, validateSwarm(p+".swarm", c.Swarm, depth+1, seen)...)
	}
	return errs
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeSwarmOutline writes each child (and its children, indented) for WriteOutline.
func writeSwarmOutline(w io.Writer, children []ScriptChild) {
	for _, c := range children {
		indent := strings.Repeat("  ", c.Depth)
		fmt.Fprintf(w, "%schild %s %s (depth %d, starts after %v, %s", indent, c.Path, c.Name, c.Depth, c.Delay.Round(time.Millisecond), c.Outcome)
		if c.Outcome == ChildError {
			fmt.Fprintf(w, " %q", c.Error)
		}
		fmt.Fprintf(w, ", about %v)\n", c.estimatedDuration().Round(time.Millisecond))
		for _, st := range c.Turns {
			for _, tc := range st.ToolCalls {
				fmt.Fprintf(w, "%s  tool call %s (%v, %s)\n", indent, tc.Name, tc.Duration.Round(time.Millisecond), tc.Outcome)
			}
			writeSwarmOutline(w, st.Swarm)
			var text strings.Builder
			for _, step := range st.Steps {
				if step.Kind == StepText {
					text.WriteString(step.Text)
				}
			}
			if text.Len() > 0 {
				fmt.Fprintf(w, "%s  text: %q\n", indent, text.String())
			}
		}
	}
}
