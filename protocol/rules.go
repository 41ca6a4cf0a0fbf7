package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rule is a correctness rule ID; docs/PROTOCOLS.md lists every one (a test holds it to the
// registry). A rule only one dialect checks is declared by its package (Dialect.Rules).
type Rule string

// The rules shared by several dialects, or judged by the load generator rather than a checker.
const (
	RConverge         Rule = "R-converge"
	RResetScope       Rule = "R-reset-scope"
	RNoThinkingAnswer Rule = "R-no-thinking-in-answer"
	RToolLifecycle    Rule = "R-tool-lifecycle"
	RTerminal         Rule = "R-terminal"
	RAbort            Rule = "R-abort"
	RFraming          Rule = "R-framing" // a frame that does not decode as the dialect says
	RHeaders          Rule = "R-headers" // missing or wrong response headers

	// The Sim seed rules (sim-chat and sim-canvas).
	RPaused             Rule = "R-paused"              // a paused run ends success with status "paused", every tool settled; only then
	RFinalOutput        Rule = "R-final-output"        // the success terminal's output content is the final turn's text only
	RThinkingCapability Rule = "R-thinking-capability" // a model without thinking yields no thinking frames, whatever the policy
	RCancelNotTimeout   Rule = "R-cancel-not-timeout"  // an execution timeout is an error naming it; a cancel is never reported as one
	RThinkingCap        Rule = "R-thinking-cap"        // at most 524,288 UTF-16 code units of thinking per execution

	// RAnswerOutput is judged by the load generator for sessions without ground truth (with
	// it, the content rules hold the answer to a script, which may have no text).
	RAnswerOutput Rule = "R-answer-output" // a completed answer carries text, thinking or a tool call
	// RSwarmCancel is judged by the load generator from the mock's records, not by a checker.
	RSwarmCancel Rule = "R-swarm-cancel" // children of an aborted or stopped run are cancelled at the provider
)

// SharedRules declares the rules above.
func SharedRules() []RuleSpec {
	return []RuleSpec{
		{ID: RConverge, Kind: RuleContent, Text: "an opted-in client's blocks, chunks appended and cleared on chunk_reset, end with the final-turn text"},
		{ID: RResetScope, Kind: RuleMixed, Text: "chunk_reset only for a block with text since its last reset, not in the final turn",
			Content: "a reset in the final turn by the script's count of intermediate turns, or after every scripted tool call settled"},
		{ID: RNoThinkingAnswer, Kind: RuleContent, Text: "no scripted thinking text inside an answer chunk"},
		{ID: RToolLifecycle, Kind: RuleMixed, Text: "every tool start has exactly one later end with a known status, no end without a start",
			Content: "compose: tool_end's failed agrees with the scripted outcome"},
		{ID: RTerminal, Kind: RuleMixed, Text: "exactly one terminal, the right one for the session, then the end marker, then nothing",
			Content: "the error terminal where the script fails (a success terminal then), ai-sdk's finish with tool-calls while the script has more turns"},
		{ID: RAbort, Kind: RuleStructure, Text: "after a client abort or stop the provider stream is cancelled within the tolerance and the runtime's gauges return to baseline"},
		{ID: RFraming, Kind: RuleStructure, Text: "every frame decodes as the dialect says"},
		{ID: RHeaders, Kind: RuleStructure, Text: "the response headers the dialect requires"},
		{ID: RPaused, Kind: RuleMixed, Text: "a paused run ends success with status \"paused\", every tool settled; only then",
			Content: "the run pauses exactly when the script pauses"},
		{ID: RFinalOutput, Kind: RuleContent, Text: "the success terminal's output content is the final turn's text only"},
		{ID: RThinkingCapability, Kind: RuleStructure, Text: "a model without thinking yields no thinking frames, whatever the policy"},
		{ID: RCancelNotTimeout, Kind: RuleMixed, Text: "an execution timeout is an error naming it; a cancel is never reported as one",
			Content: "the scripted execution timeout is reported as a timeout"},
		{ID: RThinkingCap, Kind: RuleStructure, Text: "at most 524,288 UTF-16 code units of thinking per execution"},
		{ID: RAnswerOutput, Kind: RuleStructure, Text: "a completed answer (an endpoint request's, or any without ground truth) carries text, thinking or a tool call"},
		{ID: RSwarmCancel, Kind: RuleStructure, Text: "children of an aborted or stopped run are cancelled at the provider (mock's records)"},
	}
}

// RuleKind says what a rule judges: structure, which every target must get right, or content
// against the script, which only a target in front of the mock can (--no-ground-truth: off).
type RuleKind uint8

// Rule kinds.
const (
	RuleStructure RuleKind = iota + 1 // framing, lifecycle, order, headers, limits: always judged
	RuleContent                       // compared with the script: not judged without ground truth
	RuleMixed                         // a structural part and a content part (RuleSpec.Content)
)

var ruleKindNames = [...]string{RuleStructure: "structure", RuleContent: "content", RuleMixed: "mixed"}

func (k RuleKind) String() string {
	if int(k) < len(ruleKindNames) && ruleKindNames[k] != "" {
		return ruleKindNames[k]
	}
	return "unknown"
}

// RuleSpec declares one rule: its ID, kind and one-line text (docs/PROTOCOLS.md has the long
// form and the same kind, a test holds it to that).
type RuleSpec struct {
	ID   Rule
	Kind RuleKind
	// Text is what the rule asks, one line.
	Text string
	// Content is a mixed rule's part judged against the script ("" for another kind).
	Content string
}

// RuleSet is a set of rules by ID. Immutable and safe for concurrent use.
type RuleSet struct {
	specs []RuleSpec
	byID  map[Rule]int
}

// NewRuleSet returns the set of every group's rules, in order; a rule declared twice or amiss
// (no R- ID, text or kind; a content part iff mixed) is an error naming it.
func NewRuleSet(groups ...[]RuleSpec) (*RuleSet, error) {
	s := &RuleSet{byID: map[Rule]int{}}
	var errs []error
	for _, g := range groups {
		for _, r := range g {
			switch {
			case !strings.HasPrefix(string(r.ID), "R-"):
				errs = append(errs, fmt.Errorf("rule %q: an ID starts with R-", r.ID))
			case r.Text == "":
				errs = append(errs, fmt.Errorf("rule %s: no text", r.ID))
			case r.Kind != RuleStructure && r.Kind != RuleContent && r.Kind != RuleMixed:
				errs = append(errs, fmt.Errorf("rule %s: no kind (structure, content or mixed)", r.ID))
			case r.Kind == RuleMixed && r.Content == "":
				errs = append(errs, fmt.Errorf("rule %s is mixed but does not say which part is content", r.ID))
			case r.Kind != RuleMixed && r.Content != "":
				errs = append(errs, fmt.Errorf("rule %s is %s but names a content part %q", r.ID, r.Kind, r.Content))
			}
			if _, dup := s.byID[r.ID]; dup {
				errs = append(errs, fmt.Errorf("rule %s is declared twice", r.ID))
				continue
			}
			s.byID[r.ID] = len(s.specs)
			s.specs = append(s.specs, r)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Specs returns every rule's declaration, in order.
func (s *RuleSet) Specs() []RuleSpec { return slices.Clone(s.specs) }

// Rules returns every rule ID, in order.
func (s *RuleSet) Rules() []Rule {
	out := make([]Rule, len(s.specs))
	for i, r := range s.specs {
		out[i] = r.ID
	}
	return out
}

// Lookup returns r's declaration (ok false: r is not in the set).
func (s *RuleSet) Lookup(r Rule) (RuleSpec, bool) {
	i, ok := s.byID[r]
	if !ok {
		return RuleSpec{}, false
	}
	return s.specs[i], true
}

// Kind is r's kind (0 for a rule not in the set).
func (s *RuleSet) Kind(r Rule) RuleKind {
	spec, _ := s.Lookup(r)
	return spec.Kind
}

// Parse returns the rule named name (gate --allow, a mix), or an error naming the known ones.
func (s *RuleSet) Parse(name string) (Rule, error) {
	if _, ok := s.byID[Rule(name)]; ok {
		return Rule(name), nil
	}
	known := make([]string, len(s.specs))
	for i, r := range s.specs {
		known[i] = string(r.ID)
	}
	return "", fmt.Errorf("unknown rule %q: want one of %s", name, strings.Join(known, ", "))
}
