package loadgen

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/protocol"
)

// usagelessChat serves every chat completion as text split into chunks, and no usage chunk
// unless usage is set (TGI, some gateways send none); it answers GET /v1/models with model.
func usagelessChat(t *testing.T, model string, chunks []string, usage int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			json.NewEncoder(w).Encode(map[string]any{"data": []map[string]string{{"id": model}}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(choices string) {
			w.Write([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"` + model + `","choices":` + choices + "}\n\n"))
		}
		chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`)
		for _, c := range chunks {
			b, _ := json.Marshal(c)
			chunk(`[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]`)
		}
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`)
		if usage > 0 {
			w.Write([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` +
				strconv.Itoa(usage) + `,"total_tokens":9}}` + "\n\n"))
		}
		w.Write([]byte("data: [DONE]\n\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestUsagelessSessionCountedByTokenizer: a session whose server sends no usage report has its
// output tokens counted once, at its end, by the model's tiktoken encoding over its whole text
// (not per frame, not as words), and the run's figures say so. The pinned counts are OpenAI's
// tiktoken's own: cl100k_base encodes the Dodgers sentence as 13 tokens (10 words, 5 frames),
// o200k_base (gpt-4o) the tutorial sentence as 9 (6 words). A server that reports usage is
// counted by its report, and nothing is estimated.
func TestUsagelessSessionCountedByTokenizer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, model    string
		chunks         []string
		usage          int
		perSession     int64
		estimatedWith  string
		wantEstimation bool
	}{
		// an open model's name: cl100k_base; the words split across frames mid-word
		{"cl100k", "meta-llama/Llama-3.1-8B-Instruct", []string{"The Los Ange", "les Dodgers won", " the World", " Series in 20", "20."}, 0, 13, "tiktoken cl100k_base", true},
		// an OpenAI gpt-4o name: o200k_base
		{"o200k", "gpt-4o-mini", []string{"this is a test", " example, tutorial", "example.com"}, 0, 9, "tiktoken o200k_base", true},
		// the server's usage report counts; no estimate
		{"usage", "meta-llama/Llama-3.1-8B-Instruct", []string{"The Los Angeles Dodgers won the World Series in 2020."}, 21, 21, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := usagelessChat(t, tc.model, tc.chunks, tc.usage)
			out, _ := endpoint.ParseTokenDist("32")
			cfg := endpointConfig(t, "openai-chat", tc.model, 0, &endpoint.Workload{Output: out,
				Prompts: []endpoint.Prompt{{Messages: []protocol.Message{{Role: "user", Text: "Who won in 2020?"}}}}, Source: "--prompt"})
			cfg.Clients, cfg.Sessions, cfg.NoLeakCheck = 1, 3, true
			cfg.Target, cfg.RuntimeMetricsURL = srv.URL, "-"
			run := runLoad(t, cfg)
			c, tok := run.Summary.Counters, run.Summary.Tokens
			if c.SessionsOK != 3 {
				t.Fatalf("%d of 3 sessions ok: %+v %v", c.SessionsOK, c.Outcomes, run.Summary.Verdict)
			}
			if c.OutputTokens != 3*tc.perSession {
				t.Errorf("output tokens %d, want 3 sessions × %d", c.OutputTokens, tc.perSession)
			}
			if tok.Estimated != tc.wantEstimation || tok.EstimatedWith != tc.estimatedWith {
				t.Errorf("tokens estimated %v with %q, want %v with %q", tok.Estimated, tok.EstimatedWith, tc.wantEstimation, tc.estimatedWith)
			}
			if tc.wantEstimation && (tok.EstimatedTokens != 3*tc.perSession || tok.EstimatedSessions != 3 || c.EstimatedBy[tc.estimatedWith] != 3) {
				t.Errorf("estimated %d tokens of %d sessions, by %v: want %d of 3, all by %s", tok.EstimatedTokens, tok.EstimatedSessions, c.EstimatedBy, 3*tc.perSession, tc.estimatedWith)
			}
			warned := strings.Contains(strings.Join(run.Summary.Verdict.Warnings, "\n"), "counted with "+tc.estimatedWith)
			if warned != tc.wantEstimation {
				t.Errorf("warnings %q: want one naming %q: %v", run.Summary.Verdict.Warnings, tc.estimatedWith, tc.wantEstimation)
			}
		})
	}
}

// TestUsagelessConversationTurnsCountedByTokenizer: each turn of a conversation is a request
// counted on its own: two usage-less turns of the Dodgers sentence are 2 × 13 tokens.
func TestUsagelessConversationTurnsCountedByTokenizer(t *testing.T) {
	t.Parallel()
	srv := usagelessChat(t, "m", []string{"The Los Ange", "les Dodgers won the World Series in 2020."}, 0)
	file := filepath.Join(t.TempDir(), "chats.jsonl")
	os.WriteFile(file, []byte(`{"turns":["Who won in 2020?","And in 2024?"]}`+"\n"), 0o600)
	convs, err := endpoint.LoadConversations(file)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := endpoint.ParseTokenDist("32")
	cfg := endpointConfig(t, "openai-chat", "m", 0, &endpoint.Workload{Output: out, Conversations: convs, Source: file})
	cfg.Clients, cfg.Sessions, cfg.NoLeakCheck = 1, 2, true
	cfg.Target, cfg.RuntimeMetricsURL = srv.URL, "-"
	run := runLoad(t, cfg)
	c := run.Summary.Counters
	if c.SessionsOK != 2 || c.TurnRequests != 2 {
		t.Fatalf("%d of 2 conversations ok, %d earlier turns: %+v", c.SessionsOK, c.TurnRequests, c.Outcomes)
	}
	if c.OutputTokens != 4*13 || c.EstimatedBy["tiktoken cl100k_base"] != 4 {
		t.Errorf("output tokens %d estimated by %v, want 4 turns × 13 by tiktoken cl100k_base", c.OutputTokens, c.EstimatedBy)
	}
}
