package loadgen

import (
	"fmt"
	"strings"
)

// TargetForSlug is the deployment slug with the event policy it names by the runtime's
// default deployment naming, <wire>-<policy>, where policy is none, thinking, tools or all (none
// when the slug has no such suffix). A non-empty policy overrides the suffix.
func TargetForSlug(slug, policy string) (Target, error) {
	t := Target{Slug: slug}
	if policy == "" {
		policy = "none"
		for _, p := range []string{"none", "thinking", "tools", "all"} {
			if strings.HasSuffix(slug, "-"+p) {
				policy = p
			}
		}
	}
	switch policy {
	case "none":
	case "thinking":
		t.IncludeThinking = true
	case "tools":
		t.IncludeToolCalls = true
	case "all":
		t.IncludeThinking, t.IncludeToolCalls = true, true
	default:
		return t, fmt.Errorf("policy %q: want none, thinking, tools or all", policy)
	}
	return t, nil
}
