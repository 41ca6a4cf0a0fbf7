package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// usageStream is a valid one-turn stream of the provider dialect whose usage report says
// tokens output tokens (as written on the wire).
func usageStream(dialect, tokens string) string {
	switch dialect {
	case "openai-chat":
		chunk := func(choices string) string {
			return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":` + choices + "}\n\n"
		}
		return chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`) +
			chunk(`[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]`) +
			chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`) +
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + tokens + `,"total_tokens":5}}` + "\n\n" +
			"data: [DONE]\n\n"
	case "anthropic-messages":
		ev := func(typ, fields string) string {
			return fmt.Sprintf("event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, fields)
		}
		return ev("message_start", `,"message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`) +
			ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`) +
			ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":"Hi"}`) +
			ev("content_block_stop", `,"index":0`) +
			ev("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+tokens+`}`) +
			ev("message_stop", "")
	}
	panic("no usage stream for " + dialect)
}

// TestUsageOutOfRangeIsAViolation: a usage report outside 0…2^40 (the largest int64, which
// summed made the run's token totals negative and the run pass; or −5, which anthropic-messages
// accepted) is a violation of the wire's usage rule and never reaches the totals: the run fails
// and its token figures stay the frames' count.
func TestUsageOutOfRangeIsAViolation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect, tokens string
		rule            protocol.Rule
	}{
		// 2^63−1: summed over sessions, it wrapped the totals negative
		{"openai-chat", "9223372036854775807", protocol.ROpenAIUsage},
		{"anthropic-messages", "9223372036854775807", protocol.RAnthropicMessage},
		// a negative count
		{"anthropic-messages", "-5", protocol.RAnthropicMessage},
	} {
		t.Run(tc.dialect+"/"+tc.tokens, func(t *testing.T) {
			t.Parallel()
			body := usageStream(tc.dialect, tc.tokens)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			err := runLoad([]string{"--target", srv.URL, "--dialect", tc.dialect, "--mix", writePlainMix(t, dir, tc.dialect),
				"--no-ground-truth", "--rate", "50", "--sessions", "3", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "usage"})
			if code := exitCode(err); code != exitFailure {
				t.Fatalf("load: exit %d (%v), want %d", code, err, exitFailure)
			}
			run, err := readRunArg(filepath.Join(dir, "usage"))
			if err != nil {
				t.Fatal(err)
			}
			s := run.Summary
			if s.Violations[tc.rule] != 3 {
				t.Errorf("violations %v, want 3 of %s", s.Violations, tc.rule)
			}
			// One text frame per session: the usage report's count is not taken.
			if s.Counters.OutputTokens != 3 || s.Tokens == nil || s.Tokens.OutputTokens != 3 || s.Tokens.OutputTokensPerSecond < 0 {
				t.Errorf("output tokens %d, token summary %+v: want 3 (a token per text frame), none from the report", s.Counters.OutputTokens, s.Tokens)
			}
		})
	}
}
