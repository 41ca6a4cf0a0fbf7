package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// firehose is a dialect's stream that never ends: its opening frames, then the same text frame
// carrying text (a format with one %s, the text JSON-quoted) again and again.
type firehose struct {
	dialect string
	args    []string // load's flags for the dialect
	head    []string // frames before the text, whole ("event: …\ndata: …")
	text    string   // the text frame
}

// firehoses are a never-ending stream of ~4 KiB text frames in every dialect, as a runtime or
// an endpoint that never stops answering sends them.
var firehoses = []firehose{
	{"sim-chat", []string{"--slug", "x"}, nil, `data: {"blockId":"b1","chunk":%s}`},
	{"sim-canvas", []string{"--slug", "x"}, []string{
		`data: {"type":"execution:started","timestamp":"2026-12-07T15:00:36Z","executionId":"e1","workflowId":"x","eventId":1,"data":{"startTime":"2026-12-07T15:00:36Z"}}`,
		`data: {"type":"block:started","timestamp":"2026-12-07T15:00:36Z","executionId":"e1","workflowId":"x","eventId":2,"data":{"blockId":"b1","blockName":"Agent 1","blockType":"agent","executionOrder":1}}`,
	}, `data: {"type":"stream:chunk","timestamp":"2026-12-07T15:00:36Z","executionId":"e1","workflowId":"x","data":{"blockId":"b1","chunk":%s}}`},
	{"compose", []string{"--slug", "x"}, nil, `data: {"choices":[{"delta":{"content":%s}}]}`},
	{"ag-ui", []string{"--slug", "x"}, []string{
		`data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`,
	}, `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":%s}`},
	{"langgraph", []string{"--slug", "x"}, []string{"event: metadata\ndata: {\"run_id\":\"r\",\"attempt\":1}"},
		`event: messages` + "\n" + `data: [{"content":%s,"type":"AIMessageChunk","id":"m"},{"langgraph_node":"agent"}]`},
	{"ai-sdk", []string{"--slug", "x"}, []string{`data: {"type":"start"}`, `data: {"type":"text-start","id":"t"}`},
		`data: {"type":"text-delta","id":"t","delta":%s}`},
	{"openai-chat", []string{"--model", "m", "--prompt", "hi"}, nil,
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`},
	{"anthropic-messages", []string{"--model", "m", "--prompt", "hi"}, []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
	}, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}"},
	{"openai-responses", []string{"--model", "m", "--prompt", "hi"}, []string{
		"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"m\",\"output\":[]}}",
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"i\",\"type\":\"message\",\"role\":\"assistant\",\"status\":\"in_progress\",\"content\":[]}}",
		"event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":2,\"item_id\":\"i\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\"}}",
	}, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"i\",\"output_index\":0,\"content_index\":0,\"delta\":%s}"},
}

// serve streams f's frames to every request until the client leaves.
func (f firehose) serve(t *testing.T) *httptest.Server {
	text := []byte(fmt.Sprintf(f.text, strconv.Quote(strings.Repeat("lorem ipsum ", 340))) + "\n\n")
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		simChatStream(w)
		w.Header().Set("X-Vercel-AI-UI-Message-Stream", "v1")
		for _, h := range f.head {
			if _, err := w.Write([]byte(h + "\n\n")); err != nil {
				return
			}
		}
		for {
			if _, err := w.Write(text); err != nil {
				return
			}
		}
	})
	return srv
}

// TestFirehoseStaysBounded: against a target streaming ~4 KiB text frames without end, 20
// clients for 4 s in every dialect keep the generator's peak RSS under 150 MiB and end the run
// within --duration + --grace + 10 s (openai-chat and anthropic-messages reached 780 MiB and
// overran by 5 s when a usage-less session kept 1 MiB of text for its token count).
func TestFirehoseStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves gigabytes through loopback")
	}
	t.Parallel()
	const duration, grace = 4 * time.Second, 5 * time.Second
	for _, f := range firehoses {
		t.Run(f.dialect, func(t *testing.T) {
			srv := f.serve(t)
			args := append([]string{"load", "--target", srv.URL, "--dialect", f.dialect, "--no-ground-truth", "--clients", "20",
				"--duration", duration.String(), "--grace", grace.String(), "--no-leak-check", "--no-preflight", "--quiet", "--out", "-"}, f.args...)
			code, output, wall, rss := runMainMeasured(t, args...)
			t.Logf("%s: exit %d, %s, peak RSS %d MiB", f.dialect, code, wall.Round(time.Millisecond), rss>>20)
			if code != exitOK && code != exitFailure {
				t.Fatalf("load exit %d:\n%s", code, output)
			}
			if rss > 150<<20 {
				t.Errorf("peak RSS %d MiB, over 150 MiB", rss>>20)
			}
			if limit := duration + grace + 10*time.Second; wall > limit {
				t.Errorf("the run took %s, over --duration + --grace + 10 s = %s", wall.Round(time.Millisecond), limit)
			}
		})
	}
}
