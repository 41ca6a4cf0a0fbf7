package loadgen

import (
	"strings"
	"testing"
)

func TestTargetForSlug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slug, policy    string
		thinking, tools bool
		wantErr         string
	}{
		{"openai-none", "", false, false, ""},        // the suffix names the policy
		{"openai-thinking", "", true, false, ""},     // thinking only
		{"anthropic-tools", "", false, true, ""},     // tools only
		{"openai-all", "", true, true, ""},           // both
		{"my-agent", "", false, false, ""},           // no known suffix: none
		{"openai-all", "none", false, false, ""},     // an explicit policy wins over the suffix
		{"x", "tools", false, true, ""},              // a policy for any slug
		{"x", "loud", false, false, `policy "loud"`}, // an unknown policy names itself
	} {
		got, err := TargetForSlug(tc.slug, tc.policy)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s/%s: err %v, want %q", tc.slug, tc.policy, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Slug != tc.slug || got.IncludeThinking != tc.thinking || got.IncludeToolCalls != tc.tools {
			t.Errorf("%s/%s: %+v, %v", tc.slug, tc.policy, got, err)
		}
	}
}
