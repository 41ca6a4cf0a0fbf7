package loadgen

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTokenDist(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		spec     string
		lo, hi   int
		wantKind string
	}{{"512", 512, 512, "fixed"}, {"512±64", 200, 800, "normal"}, {"512+-64", 200, 800, "normal"}, {"uniform:256-768", 256, 768, "uniform"}} {
		d, err := ParseTokenDist(tt.spec)
		if err != nil || d.Kind != tt.wantKind {
			t.Fatalf("%q: %+v, %v", tt.spec, d, err)
		}
		for range 200 {
			if n := d.Sample(r); n < tt.lo || n > tt.hi {
				t.Fatalf("%q: sampled %d outside [%d, %d]", tt.spec, n, tt.lo, tt.hi)
			}
		}
	}
	for _, bad := range []string{"0", "-3", "x", "uniform:9-3", "uniform:5", "512±x"} {
		if _, err := ParseTokenDist(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLoadPrompts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "p.jsonl")
	os.WriteFile(jsonl, []byte(`"plain string"
{"prompt":"a prompt"}
{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"parts"}]}]}
{"conversations":[{"from":"human","value":"hi there"},{"from":"gpt","value":"one two three"}]}
`), 0o600)
	ps, err := LoadPrompts(jsonl)
	if err != nil || len(ps) != 4 {
		t.Fatalf("%d prompts, %v", len(ps), err)
	}
	if ps[2].Messages[0].Role != "system" || ps[2].Messages[1].Text != "parts" || ps[3].ReplyTokens != 3 || ps[3].Messages[0].Text != "hi there" {
		t.Errorf("prompts %+v", ps)
	}
	share := filepath.Join(dir, "sharegpt.json")
	os.WriteFile(share, []byte(`[{"id":"a","conversations":[{"from":"gpt","value":"no human"}]},{"id":"b","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a b"}]}]`), 0o600)
	if ps, err := LoadPrompts(share); err != nil || len(ps) != 1 || ps[0].ReplyTokens != 2 {
		t.Errorf("ShareGPT: %+v, %v", ps, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\":\"ok\"}\nnot json\n"), 0o600)
	if _, err := LoadPrompts(bad); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("bad line: %v", err)
	}
	// The endpoint request samples a prompt with the seed and takes the reply's length as
	// max_tokens when no --output-tokens is given.
	e := &Endpoint{Prompts: ps[3:]}
	if req, _ := e.request(7); req.MaxTokens != 3 || req.Messages[0].Text != "hi there" {
		t.Errorf("request %+v", req)
	}
}

func TestEndpointWorkloadNeedsAProviderDialect(t *testing.T) {
	t.Parallel()
	w := Workload{Dialect: "sim-chat", InputTokens: "64", TimeScale: 1, SnapshotEvery: 1}
	if _, err := w.Config(); err == nil || !strings.Contains(err.Error(), "--dialect openai-chat, anthropic-messages or openai-responses") {
		t.Errorf("sim-chat with --input-tokens: %v", err)
	}
	w = Workload{Dialect: "anthropic-messages", APIKey: "sk-ant-abcdef123456", OutputTokens: "32", TimeScale: 1, SnapshotEvery: 1}
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Headers.Get("x-api-key") != w.APIKey || cfg.Endpoint == nil || !cfg.NoGroundTruth || len(cfg.Redact) != 1 {
		t.Errorf("config headers %v endpoint %+v ngt %v redact %d", RedactedHeaders(cfg.Headers), cfg.Endpoint, cfg.NoGroundTruth, len(cfg.Redact))
	}
}

// TestEndpointRequestFields: --max-tokens-field, --min-tokens and --ignore-eos reach the
// endpoint request (min_tokens equal to the sampled max_tokens), and are refused, naming the
// flag, where they cannot apply.
func TestEndpointRequestFields(t *testing.T) {
	t.Parallel()
	w := Workload{Dialect: "openai-chat", OutputTokens: "uniform:10-20", MaxTokensField: "max_completion_tokens", MinTokens: true, IgnoreEOS: true, TimeScale: 1, SnapshotEvery: 1}
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed < 20; seed++ {
		req, _ := cfg.Endpoint.request(seed)
		if req.MaxTokens < 10 || req.MaxTokens > 20 || req.MinTokens != req.MaxTokens || !req.IgnoreEOS || req.MaxTokensField != "max_completion_tokens" {
			t.Fatalf("seed %d: request %+v, want max_completion_tokens in 10..20, min_tokens equal, ignore_eos", seed, req)
		}
	}
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		// not a field name
		{Workload{Dialect: "openai-chat", OutputTokens: "8", MaxTokensField: "max_new_tokens"}, `--max-tokens-field "max_new_tokens": want max_tokens, max_completion_tokens or both`},
		// Anthropic's wire has max_tokens alone
		{Workload{Dialect: "anthropic-messages", OutputTokens: "8", IgnoreEOS: true}, "--ignore-eos is a field of the OpenAI chat wire"},
		{Workload{Dialect: "anthropic-messages", OutputTokens: "8", MaxTokensField: "both"}, "--max-tokens-field is a field of the OpenAI chat wire"},
		// min_tokens equal to nothing
		{Workload{Dialect: "openai-chat", InputTokens: "8", MinTokens: true}, "--min-tokens sends min_tokens equal to max_tokens: give --output-tokens"},
		// no endpoint workload to shape
		{Workload{Dialect: "openai-chat", IgnoreEOS: true}, "--ignore-eos shapes an endpoint workload's request"},
	} {
		tc.w.TimeScale, tc.w.SnapshotEvery = 1, 1
		if _, err := tc.w.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}

// TestOnePrompt: --prompt is the user's message of every request, whatever the seed, with
// --output-tokens as max_tokens; with another prompt source it is refused, naming both flags.
func TestOnePrompt(t *testing.T) {
	t.Parallel()
	w := Workload{Dialect: "openai-chat", Prompt: "Summarise the plot of Hamlet.", OutputTokens: "32", TimeScale: 1, SnapshotEvery: 1}
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint == nil || !cfg.NoGroundTruth || cfg.MixName != "endpoint" {
		t.Fatalf("--prompt made no endpoint workload: endpoint %+v, no ground truth %v, mix %q", cfg.Endpoint, cfg.NoGroundTruth, cfg.MixName)
	}
	for seed := uint64(1); seed < 10; seed++ {
		req, conv := cfg.Endpoint.request(seed)
		if conv != nil || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Text != w.Prompt || req.MaxTokens != 32 {
			t.Fatalf("seed %d: request %+v, want the one user message %q and max_tokens 32", seed, req, w.Prompt)
		}
	}
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		// two prompt sources
		{Workload{Dialect: "openai-chat", Prompt: "hi", Prompts: "p.jsonl"}, "--prompt and --prompts"},
		// one prompt, or synthetic prompts of a length
		{Workload{Dialect: "openai-chat", Prompt: "hi", InputTokens: "64"}, "--prompt and --input-tokens"},
		// conversations bring their own turns
		{Workload{Dialect: "openai-chat", Prompt: "hi", Conversations: "c.jsonl"}, "--prompt and --conversations"},
		// not an inference endpoint's dialect
		{Workload{Dialect: "sim-chat", Prompt: "hi"}, "--prompt is for an inference endpoint"},
	} {
		tc.w.TimeScale, tc.w.SnapshotEvery = 1, 1
		if _, err := tc.w.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}
