package mockprovider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/streambench/streambench/scenarios"
)

// TestOpenAISDKResponsesPlaysEveryScenario: the official Go SDK's Responses API, streaming
// (Responses.NewStreaming) and not, plays every embedded scenario against the mock's
// POST /v1/responses and ends each turn with the script's reasoning, text, function calls and
// usage; scripted errors surface as the SDK reports them (an HTTP error, or the stream's error
// event). The streaming tool loop continues each response with previous_response_id and the
// function_call_output items alone; the non-streaming one sends the whole conversation as input.
func TestOpenAISDKResponsesPlaysEveryScenario(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	client := openai.NewClient(openaioption.WithBaseURL(ts.URL+"/v1/"), openaioption.WithAPIKey("test"),
		openaioption.WithMaxRetries(0), openaioption.WithHTTPClient(ts.Client()))
	var previous sync.Map // session → the last response's id
	playScenarios(t, "openai-responses", func(t *testing.T, session string, script *scenarios.Script, stream bool, turn int, history []turnResult) (turnResult, error) {
		var tools []responses.ToolUnionParam
		for _, st := range script.Turns {
			for _, c := range st.ToolCalls {
				tools = append(tools, responses.ToolParamOfFunction(c.Name, map[string]any{"type": "object"}, false))
			}
		}
		toolOutput := func(callID, output string) responses.ResponseInputItemUnionParam {
			item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
			item.OfFunctionCallOutput.CallID = openai.String(callID)
			return item
		}
		params := responses.ResponseNewParams{Model: "mock-model", Tools: tools}
		var input responses.ResponseInputParam
		if prev, ok := previous.Load(session); ok && stream && turn > 0 {
			// Stateful: the previous response and this turn's tool results only.
			params.PreviousResponseID = openai.String(prev.(string))
			for ci, c := range history[turn-1].ToolCalls {
				input = append(input, toolOutput(c.ID, script.Turns[turn-1].ToolCalls[ci].Result))
			}
		} else {
			input = append(input, responses.ResponseInputItemParamOfMessage("Please help. "+directive(script.Scenario, script.Seed, session), responses.EasyInputMessageRoleUser))
			for ti, h := range history {
				if h.Text != "" || len(h.ToolCalls) == 0 {
					input = append(input, responses.ResponseInputItemParamOfMessage(h.Text, responses.EasyInputMessageRoleAssistant))
				}
				for _, c := range h.ToolCalls {
					input = append(input, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
				}
				for ci, c := range h.ToolCalls {
					input = append(input, toolOutput(c.ID, script.Turns[ti].ToolCalls[ci].Result))
				}
			}
		}
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
		ctx := context.Background()
		want := &script.Turns[turn]
		var res turnResult
		addItem := func(item responses.ResponseOutputItemUnion) {
			switch item.Type {
			case "function_call":
				fc := item.AsFunctionCall()
				res.ToolCalls = append(res.ToolCalls, scenarios.ScriptToolCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments})
			case "message":
				if !stream {
					for _, c := range item.AsMessage().Content {
						res.Text += c.Text
					}
				}
			case "reasoning":
				if !stream {
					for _, c := range item.AsReasoning().Content {
						res.Thinking += c.Text
					}
				}
			}
		}
		checkUsage := func(outputTokens int64) {
			if outputTokens != int64(want.OutputTokens) {
				t.Errorf("turn %d: usage.output_tokens %d, want the script's %d", turn, outputTokens, want.OutputTokens)
			}
		}
		if !stream {
			resp, err := client.Responses.New(ctx, params)
			if err != nil {
				return turnResult{}, err
			}
			for _, item := range resp.Output {
				addItem(item)
			}
			checkUsage(resp.Usage.OutputTokens)
			return res, nil
		}
		s := client.Responses.NewStreaming(ctx, params)
		defer s.Close()
		var text, thinking strings.Builder
		var streamErr error
		completed := false
		for s.Next() {
			ev := s.Current()
			switch ev.Type {
			case "response.output_text.delta":
				text.WriteString(ev.Delta)
			case "response.reasoning_text.delta":
				thinking.WriteString(ev.Delta)
			case "response.output_item.done":
				addItem(ev.Item)
			case "response.completed":
				completed = true
				previous.Store(session, ev.Response.ID)
				checkUsage(ev.Response.Usage.OutputTokens)
			case "error":
				streamErr = fmt.Errorf("stream error event %s: %s", ev.Code, ev.Message)
			}
		}
		res.Text, res.Thinking = text.String(), thinking.String()
		if err := s.Err(); err != nil {
			return res, err
		}
		if streamErr != nil {
			return res, streamErr
		}
		if !completed {
			t.Errorf("turn %d: the stream ended without response.completed", turn)
		}
		return res, nil
	})
}
