package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestRunCountsScriptTokensPerDialect plays scenarios through the reference runtime in every
// client dialect and checks the output token counter against the script: thinking-answer has
// 80 thinking and 60 answer tokens, preamble-tool a 10-token preamble, a tool call and a
// 50-token answer. A legacy sim-chat client sees neither thinking nor the preamble.
func TestRunCountsScriptTokensPerDialect(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a mock and a runtime per case")
	}
	t.Parallel()
	const sessions = 4
	for _, tc := range []struct {
		name, scenario, profile string
		perSession              int64
	}{
		// Opted-in chat that shows thinking: every token.
		{"chat opted-in thinking", "thinking-answer", "{dialect: sim-chat, options: {optedIn: true}, weight: 1, targets: [{slug: openai-all, options: {policy: all}}]}", 140},
		// Legacy chat: the answer only.
		{"chat legacy thinking", "thinking-answer", "{dialect: sim-chat, weight: 1, targets: [{slug: anthropic-none}]}", 60},
		{"canvas thinking", "thinking-answer", "{dialect: sim-canvas, weight: 1, targets: [{slug: openai-all}]}", 140},
		{"compose thinking", "thinking-answer", "{dialect: compose, weight: 1, targets: [{slug: anthropic-all}]}", 140},
		// The preamble, a chunk reset and the answer: the turn boundary does not lose a token.
		{"chat opted-in preamble", "preamble-tool", "{dialect: sim-chat, options: {optedIn: true}, weight: 1, targets: [{slug: openai-all, options: {policy: all}}]}", 60},
		{"chat legacy preamble", "preamble-tool", "{dialect: sim-chat, weight: 1, targets: [{slug: anthropic-none}]}", 50},
		// Compose streams every turn's text, the tool call between them.
		{"compose preamble", "preamble-tool", "{dialect: compose, weight: 1, targets: [{slug: anthropic-all}]}", 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mix := filepath.Join(dir, "mix.yaml")
			if err := os.WriteFile(mix, fmt.Appendf(nil, "name: tokens\nseed: 1\nscenarios: {%s: 1}\nprofiles:\n  - %s\n", tc.scenario, tc.profile), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runMain(t, "run", "--in-process", "--mix", mix, "--clients", "2", "--sessions", fmt.Sprint(sessions),
				"--time-scale", "0.2", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "tok")
			if code != 0 {
				t.Fatalf("run exited %d:\n%s", code, out)
			}
			s, err := measure.ReadSummary(filepath.Join(dir, "tok", measure.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			if want := sessions * tc.perSession; s.Tokens == nil || s.Tokens.OutputTokens != want || s.Counters.OutputTokens != want {
				t.Errorf("output tokens %+v (counter %d), want %d", s.Tokens, s.Counters.OutputTokens, want)
			}
		})
	}
}
