package wiretest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/streambench/streambench/protocol/openai"
)

// TestOfficialSDKReadsFrames checks the frames against the official Go SDK's stream decoder
// and chat completion accumulator, the strictest reader at hand. (The full per-scenario SDK
// suite runs against the mock provider in mockprovider/.)
func TestOpenAIOfficialSDKReadsFrames(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("call_")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		req, err := openai.ParseRequest(body)
		if err != nil {
			openai.WriteError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(openaiTurn(t, turn, openaiMeta, req.IncludeUsage))
	}))
	defer srv.Close()
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(openaiTurn(t, turn, openaiMeta, true))
	}))
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), sdk.ChatCompletionNewParams{
		Model: "sim-model", Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
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
