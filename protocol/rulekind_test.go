package protocol

import "testing"

// TestEveryRuleHasAKind: RuleKindOf classifies every rule of Rules(), a mixed rule names its
// content part and no other rule does, and the registry holds nothing else.
func TestEveryRuleHasAKind(t *testing.T) {
	t.Parallel()
	for _, r := range Rules() {
		switch k := RuleKindOf(r); k {
		case RuleStructure, RuleContent:
			if RuleContentPart(r) != "" {
				t.Errorf("%s is %s but names a content part %q", r, k, RuleContentPart(r))
			}
		case RuleMixed:
			if RuleContentPart(r) == "" {
				t.Errorf("%s is mixed but does not say which part is content", r)
			}
		default:
			t.Errorf("%s has no kind: add it to ruleKinds (structure, content or mixed)", r)
		}
	}
	if len(ruleKinds) != len(Rules()) {
		t.Errorf("ruleKinds classifies %d rules, Rules() lists %d", len(ruleKinds), len(Rules()))
	}
	if RuleKindOf("R-nonexistent") != 0 {
		t.Error("an unknown rule has a kind")
	}
}
