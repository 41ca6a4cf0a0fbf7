package mockprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"

	"github.com/streambench/streambench/scenarios"
)

// The acceptance test of the mock: the official SDKs, driven turn by turn through every
// embedded scenario, end with exactly the script's ground truth. Faulted scenarios must make
// the SDK surface the scripted error.

// sdkSeeds are the seeds every scenario is played with.
var sdkSeeds = []uint64{1, 20261130}

// turnResult is what an SDK ended a turn with, in provider-neutral form.
type turnResult struct {
	Thinking  string
	Text      string
	ToolCalls []scenarios.ScriptToolCall // ID, Name, Arguments only
}

// checkTurn compares a completed turn with the ground truth.
func checkTurn(t *testing.T, turn int, got turnResult, want scenarios.ExpectedTurn) {
	t.Helper()
	if got.Thinking != want.Thinking {
		t.Errorf("turn %d thinking:\n got %q\nwant %q", turn, got.Thinking, want.Thinking)
	}
	if got.Text != want.Text {
		t.Errorf("turn %d text:\n got %q\nwant %q", turn, got.Text, want.Text)
	}
	if len(got.ToolCalls) != len(want.ToolCalls) {
		t.Fatalf("turn %d: got %d tool calls, want %d", turn, len(got.ToolCalls), len(want.ToolCalls))
	}
	for i, call := range got.ToolCalls {
		w := want.ToolCalls[i]
		if call.ID != w.ID || call.Name != w.Name || call.Arguments != w.Arguments {
			t.Errorf("turn %d tool call %d:\n got %s %s %s\nwant %s %s %s", turn, i, call.ID, call.Name, call.Arguments, w.ID, w.Name, w.Arguments)
		}
	}
}

// checkProviderError asserts err is the scripted failure of turn: an API error with the
// scripted status for an HTTP fault, an error carrying the scripted message otherwise.
func checkProviderError(t *testing.T, err error, status int, want scenarios.Expected) {
	t.Helper()
	if err == nil {
		t.Fatalf("turn %d: no error, want the scripted provider error %q", want.FailedTurn, want.ProviderError)
	}
	message, gotStatus := err.Error(), http.StatusOK
	var oerr *openai.Error
	var aerr *anthropic.Error
	switch {
	case errors.As(err, &oerr):
		message, gotStatus = oerr.Message, oerr.StatusCode
	case errors.As(err, &aerr):
		message, gotStatus = aerr.Message, aerr.StatusCode
	}
	if gotStatus != status {
		t.Errorf("turn %d: error %v: HTTP status %d, want %d", want.FailedTurn, err, gotStatus, status)
	}
	if !strings.Contains(message, want.ProviderError) {
		t.Errorf("turn %d: error message %q does not carry the scripted message %q", want.FailedTurn, message, want.ProviderError)
	}
}

// playScenarios runs play for every embedded scenario × seed × streaming mode as parallel
// subtests. play returns each turn's result or the error the SDK surfaced.
func playScenarios(t *testing.T, wireName string, play func(t *testing.T, session string, script *scenarios.Script, stream bool, turn int, history []turnResult) (turnResult, error)) {
	lib := scenarios.Embedded()
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		for _, seed := range sdkSeeds {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/seed=%d/stream=%v", name, seed, stream), func(t *testing.T) {
					t.Parallel()
					script := sc.Render(seed)
					want := script.Expected()
					session := fmt.Sprintf("%s-%s-%d-%v", wireName, name, seed, stream)
					var history []turnResult
					for turn := range script.Turns {
						st := &script.Turns[turn]
						got, err := play(t, session, script, stream, turn, history)
						switch {
						case st.HTTPStatus != 0:
							checkProviderError(t, err, st.HTTPStatus, want)
							return
						case st.ErrorAfterStep >= 0 && stream:
							// The stream carried the text up to the error, then the error.
							checkProviderError(t, err, http.StatusOK, want)
							wt := want.Turns[turn]
							if got.Text != wt.Text || got.Thinking != wt.Thinking {
								t.Errorf("turn %d before the error: got text %q thinking %q, want %q %q", turn, got.Text, got.Thinking, wt.Text, wt.Thinking)
							}
							return
						case st.ErrorAfterStep >= 0:
							// Without streaming the failure is the whole answer.
							checkProviderError(t, err, http.StatusInternalServerError, want)
							return
						}
						if err != nil {
							t.Fatalf("turn %d: %v", turn, err)
						}
						checkTurn(t, turn, got, want.Turns[turn])
						history = append(history, got)
					}
					if want.FailedTurn >= 0 {
						t.Fatalf("scenario should have failed at turn %d", want.FailedTurn)
					}
					// A Sim pause or execution timeout ends the script at a turn with tool calls, and so
					// does a compose plan that ends the run in error (scenarios.ScriptPlan): the
					// provider played every turn, and the runtime stops asking.
					if n := len(want.Turns); n == 0 || (!want.Turns[n-1].Final && !want.EndsByTool() && !want.Plan.EndsInError()) {
						t.Fatalf("ground truth has no final turn: %+v", want)
					}
				})
			}
		}
	}
}

func TestOpenAISDKPlaysEveryScenario(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	client := openai.NewClient(openaioption.WithBaseURL(ts.URL+"/v1/"), openaioption.WithAPIKey("test"),
		openaioption.WithMaxRetries(0), openaioption.WithHTTPClient(ts.Client()))
	playScenarios(t, "openai", func(t *testing.T, session string, script *scenarios.Script, stream bool, turn int, history []turnResult) (turnResult, error) {
		// Rebuild the conversation as a client would: the user's message, then per finished
		// turn the assistant message and one tool message per call.
		messages := []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("Please help. " + directive(script.Scenario, script.Seed, session)),
		}
		for ti, h := range history {
			asst := openai.ChatCompletionAssistantMessageParam{}
			if h.Text != "" {
				asst.Content.OfString = openai.String(h.Text)
			}
			for _, c := range h.ToolCalls {
				asst.ToolCalls = append(asst.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
					},
				})
			}
			messages = append(messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
			for ci, c := range h.ToolCalls {
				messages = append(messages, openai.ToolMessage(script.Turns[ti].ToolCalls[ci].Result, c.ID))
			}
		}
		params := openai.ChatCompletionNewParams{Model: "mock-model", Messages: messages}
		ctx := context.Background()
		if !stream {
			resp, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				return turnResult{}, err
			}
			msg := resp.Choices[0].Message
			res := turnResult{Text: msg.Content, Thinking: rawJSONString(t, msg.JSON.ExtraFields["reasoning_content"].Raw())}
			for _, c := range msg.ToolCalls {
				res.ToolCalls = append(res.ToolCalls, scenarios.ScriptToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			return res, nil
		}
		params.StreamOptions.IncludeUsage = openai.Bool(true)
		s := client.Chat.Completions.NewStreaming(ctx, params)
		defer s.Close()
		var acc openai.ChatCompletionAccumulator
		var thinking strings.Builder
		for s.Next() {
			chunk := s.Current()
			if !acc.AddChunk(chunk) {
				t.Fatalf("accumulator rejected chunk %s", chunk.RawJSON())
			}
			if len(chunk.Choices) > 0 {
				thinking.WriteString(rawJSONString(t, chunk.Choices[0].Delta.JSON.ExtraFields["reasoning_content"].Raw()))
			}
		}
		var res turnResult
		res.Thinking = thinking.String()
		if len(acc.Choices) > 0 {
			msg := acc.Choices[0].Message
			res.Text = msg.Content
			for _, c := range msg.ToolCalls {
				res.ToolCalls = append(res.ToolCalls, scenarios.ScriptToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
		}
		if err := s.Err(); err != nil {
			return res, err
		}
		if want := script.Turns[turn].OutputTokens; acc.Usage.CompletionTokens != int64(want) {
			t.Errorf("turn %d: usage completion_tokens %d, want %d", turn, acc.Usage.CompletionTokens, want)
		}
		return res, nil
	})
}

func TestAnthropicSDKPlaysEveryScenario(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	client := anthropic.NewClient(anthropicoption.WithBaseURL(ts.URL), anthropicoption.WithAPIKey("test"),
		anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(ts.Client()))
	playScenarios(t, "anthropic", func(t *testing.T, session string, script *scenarios.Script, stream bool, turn int, history []turnResult) (turnResult, error) {
		messages := []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("Please help. " + directive(script.Scenario, script.Seed, session))),
		}
		for ti, h := range history {
			var blocks []anthropic.ContentBlockParamUnion
			if h.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(h.Text))
			}
			var results []anthropic.ContentBlockParamUnion
			for ci, c := range h.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(c.Arguments), c.Name))
				call := script.Turns[ti].ToolCalls[ci]
				results = append(results, anthropic.NewToolResultBlock(c.ID, call.Result, call.Outcome == scenarios.OutcomeError))
			}
			messages = append(messages, anthropic.NewAssistantMessage(blocks...), anthropic.NewUserMessage(results...))
		}
		params := anthropic.MessageNewParams{Model: "mock-model", MaxTokens: 4096, Messages: messages}
		ctx := context.Background()
		var msg anthropic.Message
		var err error
		if stream {
			s := client.Messages.NewStreaming(ctx, params)
			for s.Next() {
				if aerr := msg.Accumulate(s.Current()); aerr != nil {
					t.Fatalf("turn %d: Accumulate: %v", turn, aerr)
				}
			}
			err = s.Err()
			s.Close()
		} else {
			var resp *anthropic.Message
			if resp, err = client.Messages.New(ctx, params); resp != nil {
				msg = *resp
			}
		}
		var res turnResult
		for _, block := range msg.Content {
			switch block.Type {
			case "thinking":
				res.Thinking += block.Thinking
			case "text":
				res.Text += block.Text
			case "tool_use":
				res.ToolCalls = append(res.ToolCalls, scenarios.ScriptToolCall{ID: block.ID, Name: block.Name, Arguments: string(block.Input)})
			}
		}
		if err != nil {
			return res, err
		}
		if want := script.Turns[turn].OutputTokens; msg.Usage.OutputTokens != int64(want) {
			t.Errorf("turn %d: usage output_tokens %d, want %d", turn, msg.Usage.OutputTokens, want)
		}
		wantStop := anthropic.StopReasonEndTurn
		if len(script.Turns[turn].ToolCalls) > 0 {
			wantStop = anthropic.StopReasonToolUse
		}
		if msg.StopReason != wantStop {
			t.Errorf("turn %d: stop_reason %q, want %q", turn, msg.StopReason, wantStop)
		}
		return res, nil
	})
}

// rawJSONString decodes a raw JSON string field ("" when absent or null).
func rawJSONString(t *testing.T, raw string) string {
	t.Helper()
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("field %s is not a JSON string: %v", raw, err)
	}
	return s
}
