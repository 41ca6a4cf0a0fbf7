package loadgen

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// TestDoneWithoutFinishReason: a gateway that drops a provider's error frame and appends
// [DONE] leaves a stream with text and [DONE] but no finish_reason chunk: the session is
// truncated, and its error says what the stream lacked (it said only "without its terminal").
func TestDoneWithoutFinishReason(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	cfg := endpointConfig(t, "openai-chat", "m", 1, &endpoint.Workload{Prompts: []endpoint.Prompt{{Messages: []protocol.Message{{Role: "user", Text: "hi"}}}}})
	cfg.Target, cfg.Clients, cfg.Sessions, cfg.NoLeakCheck, cfg.RuntimeMetricsURL = srv.URL, 1, 1, true, "-"
	run := runLoad(t, cfg)
	if run.Summary.Counters.Outcome(measure.OutcomeTruncated) != 1 || !slices.ContainsFunc(run.Summary.Judging.FirstErrors, func(e string) bool {
		return strings.Contains(e, "without its terminal: data: [DONE] came with no finish_reason chunk before it")
	}) {
		t.Errorf("outcomes %v, first errors %q: want one truncated session saying [DONE] came with no finish_reason chunk", run.Summary.Counters.Outcomes, run.Summary.Judging.FirstErrors)
	}
}
