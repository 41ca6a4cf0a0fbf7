package scenarios

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Swarm children (compose only): a swarm turn ends in a DelegateTool call listing the children;
// a runtime asks the provider for a child's turns with ChildHeader set to its path, or runs the
// delegation as an ordinary simulated tool.

// DelegateTool is the name of the tool call a swarm turn ends in.
const DelegateTool = "delegate_agents"

// ChildHeader is the provider request header that selects a swarm child's script by its path.
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
	Name      string       `yaml:"name" json:"name"`                     // the sub-agent id (runKey), unique in the scenario.
	Text      Text         `yaml:"text" json:"text"`                     // the answer, streamed after the tools.
	ToolCalls []ToolCall   `yaml:"toolCalls" json:"toolCalls,omitempty"` // run in parallel before the answer.
	Outcome   ChildOutcome `yaml:"outcome" json:"outcome,omitempty"`     // done (default), or error after the text.
	Error     string       `yaml:"error" json:"error,omitempty"`         // the failing child's message.
	Delay     Dist         `yaml:"delay" json:"delay,omitempty"`         // how long after the delegation the child starts.
	Swarm     []Child      `yaml:"swarm" json:"swarm,omitempty"`         // the child's own children, started with its tools.
}

// SwarmArgument is the DelegateTool argument that lists the children ([]SimChild).
const SwarmArgument = "_swarm"

// SimChild is what a runtime needs to start one child.
type SimChild struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	DelayMs int64  `json:"delayMs,omitempty"`
}

// ScriptChild is a child agent rendered for one seed.
type ScriptChild struct {
	Name  string
	Path  string // the root turn's index, then the child's index at each level ("1.0.2").
	Depth int
	Delay time.Duration
	// Turns are one with the child's tool calls (and delegation), if any, then one with its text.
	Turns   []ScriptTurn
	Outcome ChildOutcome
	Error   string
}

// ExpectedChild is the ground truth of one child agent.
type ExpectedChild struct {
	Name, Path string
	Parent     string // the parent child's name ("" under the root run).
	Depth      int
	// Chain is the names from the depth-1 ancestor down to the child: the runKeyChain after
	// the root run's id.
	Chain   []string
	Text    string   // what the deltas concatenate to (a failing child's included).
	Tools   []string // tool names in call order (DelegateTool when it has children).
	Outcome ChildOutcome
	Error   string
}

func (s *Scenario) renderSwarm(seed uint64, prefix string, children []Child) []ScriptChild {
	out := make([]ScriptChild, 0, len(children))
	for i, c := range children {
		out = append(out, s.renderChild(seed, prefix+"."+strconv.Itoa(i), c))
	}
	return out
}

// renderChild renders one child with random streams of its own.
func (s *Scenario) renderChild(seed uint64, path string, c Child) ScriptChild {
	ns := "child/" + path + "/"
	sc := ScriptChild{
		Name: c.Name, Path: path, Depth: strings.Count(path, "."),
		Delay:   c.Delay.Sample(rng(seed, ns+"delay")),
		Outcome: cmp.Or(c.Outcome, ChildDone), Error: c.Error,
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

// delegateCall is the DelegateTool call that starts children; its duration is the longest
// child's delay plus scripted time, so a runtime without swarms waits about as long.
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

// Child returns the script the swarm child at path plays.
func (s *Script) Child(path string) (*Script, bool) {
	c := findChild(s.Turns, path)
	if c == nil {
		return nil, false
	}
	return &Script{Scenario: s.Scenario, Seed: s.Seed, Turns: c.Turns}, true
}

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
		for _, st := range c.Turns {
			ec.Text += stepsText(st.Steps, StepText)
			for _, tc := range st.ToolCalls {
				ec.Tools = append(ec.Tools, tc.Name)
			}
		}
		out = append(out, ec)
		for _, st := range c.Turns {
			out = appendExpectedChildren(out, st.Swarm, ec.Chain)
		}
	}
	return out
}

// HasSwarm reports whether any turn of the scenario delegates to children.
func (s *Scenario) HasSwarm() bool {
	return slices.ContainsFunc(s.Turns, func(t Turn) bool { return len(t.Swarm) > 0 })
}

// ChildByName returns the expected child named name.
func (e *Expected) ChildByName(name string) (ExpectedChild, bool) {
	i := slices.IndexFunc(e.Children, func(c ExpectedChild) bool { return c.Name == name })
	if i < 0 {
		return ExpectedChild{}, false
	}
	return e.Children[i], true
}

// validateSwarm checks a turn's (or child's) children at path, recording names in seen.
func validateSwarm(errs *fieldErrors, path string, children []Child, depth int, seen map[string]string) {
	if len(children) > 0 && depth > MaxSwarmDepth {
		errs.add(path, "children at depth %d; expected at most %d levels of swarm", depth, MaxSwarmDepth)
		return
	}
	for i, c := range children {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case c.Name == "":
			errs.add(p+".name", "missing; expected the child's sub-agent id (its runKey)")
		case strings.ContainsAny(c.Name, " \t\r\n\"\\"):
			errs.add(p+".name", "%q contains whitespace, a quote or a backslash; expected a plain id", c.Name)
		case seen[c.Name] != "":
			errs.add(p+".name", "%q is also the name of %s; expected names unique in the scenario (they are runKeys)", c.Name, seen[c.Name])
		default:
			seen[c.Name] = p
		}
		if c.Text == (Text{}) {
			errs.add(p+".text", "missing; expected the child's scripted answer (a string or {tokens: N})")
		}
		c.Text.validate(errs, p+".text")
		switch c.Outcome {
		case "", ChildDone:
			if c.Error != "" {
				errs.add(p+".error", "set on a child whose outcome is %q; expected it only with outcome: error", cmp.Or(c.Outcome, ChildDone))
			}
		case ChildError:
		default:
			errs.add(p+".outcome", "%q; expected done or error", c.Outcome)
		}
		c.Delay.validate(errs, p+".delay")
		validateToolCalls(errs, p, c.ToolCalls, "")
		validateSwarm(errs, p+".swarm", c.Swarm, depth+1, seen)
	}
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
			if text := stepsText(st.Steps, StepText); text != "" {
				fmt.Fprintf(w, "%s  text: %q\n", indent, text)
			}
		}
	}
}
