package wiretest

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

// openaiTarget streams turn to each request openai.ParseRequest takes, with usage when asked.
func openaiTarget(t *testing.T, turn *scenarios.ScriptTurn) *httptest.Server {
	return sdkTarget(t, func(body []byte) ([]byte, error) {
		req, err := openai.ParseRequest(body)
		if err != nil {
			return nil, err
		}
		return openaiTurn(t, turn, openaiMeta, req.IncludeUsage), nil
	}, openai.WriteError)
}

// TestOfficialSDKReadsFrames checks the frames against the official Go SDK's stream decoder
// and chat completion accumulator, the strictest reader at hand. (The full per-scenario SDK
// suite runs against the mock provider in mockprovider/.)
func TestOpenAIOfficialSDKReadsFrames(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("call_")
	srv := openaiTarget(t, turn)
	client := sdk.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), sdk.ChatCompletionNewParams{
		Model:         "sim-model",
		Messages:      []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	})
	var acc sdk.ChatCompletionAccumulator
	var reasoning string
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			t.Fatalf("accumulator rejected chunk %s", chunk.RawJSON())
		}
		if len(chunk.Choices) > 0 {
			if f, ok := chunk.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
				s, err := strconv.Unquote(f.Raw())
				if err != nil {
					t.Fatalf("reasoning_content %s: %v", f.Raw(), err)
				}
				reasoning += s
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := WantFromTurn(turn, len(turn.Steps))
	msg := acc.Choices[0].Message
	if msg.Content != want.Text || reasoning != want.Thinking {
		t.Errorf("content %q reasoning %q, want %q and %q", msg.Content, reasoning, want.Text, want.Thinking)
	}
	if len(msg.ToolCalls) != len(want.Calls) {
		t.Fatalf("%d tool calls, want %d", len(msg.ToolCalls), len(want.Calls))
	}
	for i, c := range msg.ToolCalls {
		w := want.Calls[i]
		if c.ID != w.ID || c.Function.Name != w.Name || c.Function.Arguments != w.Arguments {
			t.Errorf("tool call %d = %s %s %s, want %s %s %s", i, c.ID, c.Function.Name, c.Function.Arguments, w.ID, w.Name, w.Arguments)
		}
	}
	if acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.PromptTokens != 42 || acc.Usage.CompletionTokens != 17 || acc.ID != openaiMeta.ID {
		t.Errorf("finish %q usage %+v id %q", acc.Choices[0].FinishReason, acc.Usage, acc.ID)
	}
}

// TestOfficialSDKSeesMidStreamError checks that the SDK reports the mid-stream error frame
// as an error carrying the message, after the content streamed before it.
func TestOpenAIOfficialSDKSeesMidStreamError(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("call_")
	turn.ErrorAfterStep, turn.ErrorMessage = 3, "The server had an error"
	srv := openaiTarget(t, turn)
	client := sdk.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), sdk.ChatCompletionNewParams{
		Model: "sim-model", Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	})
	var content string
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			content += c.Choices[0].Delta.Content
		}
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "The server had an error") {
		t.Fatalf("stream error = %v, want the provider's message", err)
	}
	if want := WantFromTurn(turn, 3).Text; content != want {
		t.Errorf("content before the error = %q, want %q", content, want)
	}
}
