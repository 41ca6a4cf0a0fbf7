package wiretest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/streambench/streambench/protocol/anthropic"
)

// sdkTarget answers each request whose body stream takes with the frames it returns, as an
// event stream, and one it refuses with writeError's 400.
func sdkTarget(t *testing.T, stream func(body []byte) ([]byte, error), writeError func(http.ResponseWriter, int, string, string)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		frames, err := stream(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(frames)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// anthropicTarget streams turn to each request anthropic.ParseRequest takes.
func anthropicTarget(t *testing.T, turn *scenarios.ScriptTurn) *httptest.Server {
	return sdkTarget(t, func(body []byte) ([]byte, error) {
		_, err := anthropic.ParseRequest(body)
		return anthropicTurn(t, turn, anthropicMeta), err
	}, anthropic.WriteError)
}

// TestOfficialSDKReadsFrames checks the events against the official Go SDK's stream decoder
// and Message.Accumulate, the strictest reader at hand. (The full per-scenario SDK suite runs
// against the mock provider in mockprovider/.)
func TestAnthropicOfficialSDKReadsFrames(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("toolu_")
	interleaved := SmallTurn("toolu_")
	interleaved.Steps[5], interleaved.Steps[6] = interleaved.Steps[6], interleaved.Steps[5]
	for name, turn := range map[string]any{"sequential": turn, "interleaved": interleaved} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			turn := turn.(*scenarios.ScriptTurn)
			srv := anthropicTarget(t, turn)
			client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
			stream := client.Messages.NewStreaming(context.Background(), sdk.MessageNewParams{
				Model:     "sim-model",
				MaxTokens: 1024,
				Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
			})
			var msg sdk.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			want := WantFromTurn(turn, len(turn.Steps))
			var got Accumulated
			for _, b := range msg.Content {
				switch b.Type {
				case "thinking":
					got.Thinking += b.Thinking
					if b.Signature == "" {
						t.Errorf("thinking block without signature")
					}
				case "text":
					got.Text += b.Text
				case "tool_use":
					got.Calls = append(got.Calls, scenarios.ScriptToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				}
			}
			want.Stop, got.Stop = "tool_use", "tool_use"
			if msg.StopReason != "tool_use" || msg.Usage.InputTokens != 42 || msg.Usage.OutputTokens != 17 || msg.ID != anthropicMeta.ID {
				t.Errorf("stop %q usage %+v id %q", msg.StopReason, msg.Usage, msg.ID)
			}
			AssertAccumulated(t, got, want)
		})
	}
}

// TestOfficialSDKSeesMidStreamError checks that the SDK reports the error event as an API
// error of type overloaded_error, after the content streamed before it.
func TestAnthropicOfficialSDKSeesMidStreamError(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("toolu_")
	turn.ErrorAfterStep, turn.ErrorMessage = 3, "Overloaded"
	srv := anthropicTarget(t, turn)
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	stream := client.Messages.NewStreaming(context.Background(), sdk.MessageNewParams{
		Model: "sim-model", MaxTokens: 1024, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
	})
	var msg sdk.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	err := stream.Err()
	if err == nil || !strings.Contains(err.Error(), "overloaded_error") || !strings.Contains(err.Error(), "Overloaded") {
		t.Fatalf("stream error = %v, want an overloaded_error with the message", err)
	}
	if len(msg.Content) != 2 || msg.Content[1].Text != WantFromTurn(turn, 3).Text {
		t.Errorf("content before the error = %+v", msg.Content)
	}
}
